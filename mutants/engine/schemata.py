"""Mutant schemata: every site of a file rendered into one source, each
alternative behind `RACEORACLE_MUTANT(id) ? (mutant) : (original)`, so that
one build holds every mutant and the environment picks one at run time.

Sites nest (an operand holds other sites); a site's holes are rendered with
the sites inside them, so each mutant changes exactly its own operator and
leaves the rest of the expression as written."""

HEADER = '#include "mutants/engine/schemata.h"  // generated: mutant schemata of the file below\n'


def build_tree(sites):
    """Nests sites by span; returns the top-level ones and the sites that
    cross another (not rendered)."""
    merged = {}
    for s in sites:
        key = (s.lo, s.hi, s.order)
        if key in merged:
            have = {(a.mutator, a.shown) for a in merged[key].alternatives}
            merged[key].alternatives += [a for a in s.alternatives if (a.mutator, a.shown) not in have]
        else:
            merged[key] = s
    ordered = sorted(merged.values(), key=lambda s: (s.lo, -s.hi, s.order))
    top, stack, crossing = [], [], []
    for s in ordered:
        s.children = []
        while stack and stack[-1].hi <= s.lo:
            stack.pop()
        if stack:
            parent = stack[-1]
            if s.hi > parent.hi or not any(a <= s.lo and s.hi <= b for a, b in parent.holes):
                crossing.append(s)
                continue
            parent.children.append(s)
        else:
            top.append(s)
        stack.append(s)
    return top, crossing


def assign_ids(files_sites, first_id=1):
    """Numbers every alternative of every site, in file and position order."""
    next_id = first_id
    for path in sorted(files_sites):
        for s in sorted(files_sites[path], key=lambda s: (s.lo, -s.hi, s.order)):
            for a in s.alternatives:
                a.id = next_id
                next_id += 1
    return next_id


def _render_range(text, lo, hi, sites):
    out, pos = [], lo
    for s in sorted(sites, key=lambda s: s.lo):
        out.append(text[pos:s.lo])
        out.append(_render_site(text, s))
        pos = s.hi
    out.append(text[pos:hi])
    return "".join(out)


def _render_site(text, s):
    holes = [_render_range(text, a, b, [c for c in s.children if a <= c.lo and c.hi <= b]) for a, b in s.holes]
    original, pos = [], s.lo
    for (a, b), h in zip(s.holes, holes):
        original += [text[pos:a], h]
        pos = b
    original.append(text[pos:s.hi])
    # A condition may be a pointer or an integer: as bool, every branch has one type.
    wrap = "bool" if s.boolean else ""
    expr = wrap + "(" + "".join(original) + ")"
    for alt in reversed([a for a in s.alternatives if getattr(a, "id", None) is not None]):
        body = "".join(holes[p] if isinstance(p, int) else p for p in alt.parts)
        expr = f"(RACEORACLE_MUTANT({alt.id}) ? {wrap}({body}) : {expr})"
    return expr


def render_file(src, top_sites):
    return HEADER + _render_range(src.text, 0, len(src.text), top_sites)
