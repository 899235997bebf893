"""Analyses follow their code: a mutant's key names its source lines
(`kernels/race.h:31:7-31:31:ConditionalExpression:false`), so an edit above
it moves the key and its analysis in survivors.json would name no mutant.
`moved` maps each key through a line diff of its file between two versions:
a key whose lines are unchanged moves with them; a key on a changed or
deleted line is dropped, to be analysed again after the next run."""
import difflib
import re

KEY = re.compile(r"^(?P<file>[^:]+):(?P<l1>\d+):(?P<c1>\d+)-(?P<l2>\d+):(?P<c2>\d+):(?P<rest>.+)$")


def line_map(old_text, new_text):
    """{old line number: new line number} for the lines a diff keeps (1-based)."""
    old, new = old_text.splitlines(), new_text.splitlines()
    kept = {}
    for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            kept.update({i1 + k + 1: j1 + k + 1 for k in range(i2 - i1)})
    return kept


def moved(analyses, old_source, new_source):
    """analyses ({key: analysis}) with each key moved to its lines' new place.
    old_source/new_source: file -> text (None: the file does not exist there).
    Returns (moved analyses, {dropped key: why})."""
    maps, out, dropped = {}, {}, {}
    for key, analysis in analyses.items():
        m = KEY.match(key)
        if not m:
            dropped[key] = "not a mutant key (file:line:col-line:col:mutator:replacement)"
            continue
        f = m["file"]
        if f not in maps:
            old, new = old_source(f), new_source(f)
            maps[f] = None if old is None or new is None else line_map(old, new)
        lines = maps[f]
        if lines is None:
            dropped[key] = f"{f} is missing in one of the two versions"
            continue
        l1, l2 = int(m["l1"]), int(m["l2"])
        span = [lines.get(n) for n in range(l1, l2 + 1)]
        if None in span or span != list(range(span[0], span[0] + len(span))):
            dropped[key] = f"line {l1}{'' if l1 == l2 else f'-{l2}'} of {f} changed: analyse it again"
            continue
        out[f"{f}:{span[0]}:{m['c1']}-{span[-1]}:{m['c2']}:{m['rest']}"] = analysis
    return out, dropped
