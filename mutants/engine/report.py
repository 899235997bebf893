"""The machine-made mutants' report: Stryker's mutation-testing-report schema
(as `raceoracle mutants --report` writes for the named mutants), a summary table,
and the survivors with their analyses (mutants/engine/survivors.json)."""
import collections
import json

from runner import DETECTED


def load_analyses(path):
    """key -> {"verdict": "equivalent" | "gap", "why": "..."}"""
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    for k, v in data.items():
        if v.get("verdict") not in VERDICTS or not v.get("why"):
            raise ValueError(f"{path}: {k}: an analysis needs a verdict ({', '.join(VERDICTS)}) and a why")
    return data


# equivalent: no input changes the token. equivalent-on-cpu: no input does on the
# backend the engine runs (the code guards GPU approximations that are exact
# here); both are left out of the score and counted apart. gap: an input class
# that would kill it, named in the why.
VERDICTS = ("equivalent", "equivalent-on-cpu", "gap")


def judge(mutants, results, analyses):
    """Each mutant with its final status: a survivor analysed as equivalent is Ignored."""
    out = []
    for m in mutants:
        r = results.get(m["key"])
        status = m.get("status") or (r["status"] if r else None)
        if status is None:
            continue  # not run (a sample)
        row = dict(m, status=status, killedBy=r["killedBy"] if r else [], seconds=r["seconds"] if r else 0,
                   detail=r.get("detail", "") if r else "")
        a = analyses.get(m["key"])
        undetected = status in ("Survived", "NoCoverage")
        if status == "Ignored" and a:  # not run (--skip-equivalent)
            row["detail"] = f'{a["verdict"]} (not run): {a["why"]}'
            row["equivalent_on_cpu"] = a["verdict"] == "equivalent-on-cpu"
        elif undetected and a and a["verdict"] != "gap":
            row["status"], row["detail"] = "Ignored", f'{a["verdict"]}: {a["why"]}'
            row["equivalent_on_cpu"] = a["verdict"] == "equivalent-on-cpu"
        elif undetected and a:
            row["detail"] = "gap: " + a["why"]
        out.append(row)
    return out


def score(rows):
    """Detected over the mutants that count (not equivalent, compiled)."""
    counted = [r for r in rows if r["status"] not in ("Ignored", "CompileError")]
    detected = sum(r["status"] in DETECTED for r in counted)
    return detected, len(counted)


def stryker(rows, files):
    report = {"schemaVersion": "1", "thresholds": {"high": 95, "low": 90}, "files": {}}
    for path in sorted({r["file"] for r in rows}):
        ms = []
        for r in rows:
            if r["file"] != path:
                continue
            ms.append({"id": str(r.get("id", r["key"])), "mutatorName": r["mutator"], "replacement": r["replacement"],
                       "location": {"start": r["start"], "end": r["end"]}, "status": r["status"],
                       "killedBy": r["killedBy"], "statusReason": r["detail"] or ", ".join(r["killedBy"]),
                       "description": f'{r["original"]!r} -> {r["replacement"]}'})
        report["files"][path] = {"language": "cpp", "source": files[path], "mutants": ms}
    return report


def table(rows):
    """Per operator: mutants, detected, survived, equivalent; then the score."""
    by = collections.defaultdict(collections.Counter)
    for r in rows:
        by[r["mutator"]][r["status"]] += 1
    head = (f'{"operator":<22} {"mutants":>7} {"killed":>7} {"timeout":>7} {"crash":>6} {"survived":>8} '
            f'{"unreached":>9} {"equiv":>6} {"noncomp":>7}')
    lines = [head]
    total = collections.Counter()
    for op in sorted(by):
        c = by[op]
        total.update(c)
        lines.append(_row(op, c))
    lines.append(_row("all", total))
    d, n = score(rows)
    cpu_only = sum(r.get("equivalent_on_cpu", False) for r in rows)
    lines.append(f"mutation score: {d}/{n} = {100.0 * d / max(n, 1):.1f}% of the non-equivalent mutants detected "
                 f"({total['Ignored'] - cpu_only} equivalent, {cpu_only} equivalent on the cpu backend only, left out)")
    return "\n".join(lines)


def _row(name, c):
    return (f'{name:<22} {sum(c.values()):>7} {c["Killed"]:>7} {c["Timeout"]:>7} {c["RuntimeError"]:>6} '
            f'{c["Survived"]:>8} {c["NoCoverage"]:>9} {c["Ignored"]:>6} {c["CompileError"]:>7}')


def survivors(rows):
    out = []
    for r in rows:
        if r["status"] in ("Survived", "NoCoverage", "Ignored"):
            out.append(f'  {r["status"]:<9} {r["key"]}\n            {r["original"]!r} -> {r["replacement"]}'
                       + (f'\n            {r["detail"]}' if r["detail"] else "\n            (no analysis)"))
    return "\n".join(out)
