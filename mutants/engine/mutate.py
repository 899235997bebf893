#!/usr/bin/env python3
"""Mutants made by machine from the kernel sources (mutants/engine/README.md).

  mutate.py generate --build-dir build/cpu --out DIR     schemata + DIR/mutants.json
  mutate.py run --exe raceoracle-schemata --mutants DIR/mutants.json [--sample N]
                [--seed S] [--cases C] [--jobs J] [--report R.json] [--json OUT]
                [--asan-exe ASAN/raceoracle-schemata --asan-mutants ASAN/mutants.json]
                [--part I/N --json PART.json] [--resume RUN.json]
  mutate.py merge PART.json... --mutants DIR/mutants.json [--report R.json] [--json OUT]
  mutate.py seeds RUN.json --exe ... --mutants DIR/mutants.json [--asan-exe ...]
                [--seeds 10] --json SEEDS.json
  mutate.py rekey --since REV [--analyses survivors.json]

With --asan-exe, the survivors run once more under the AddressSanitizer +
UBSan schemata build (one law over the coverage matrix and --asan-cases
random cases, default 10): a sanitizer report kills them. That pass looks
for memory errors (an access one element past a buffer, which no token may
show), which every launch of a shape that reaches them shows. It skips the
survivors analysed as equivalent: they are out of the score either way; with
--sanitize-unanalysed (the CI sample) every analysed survivor.

`run` fails (exit 1) when a mutant survives without an analysis; on a full
run (or the merge of a run's parts) also when an analysis no longer names a
mutant, or when the score of the non-equivalent mutants is below --min-score.

`seeds` measures the kill rate over seeds of a finished run's detected
mutants apart from the run, saving each result to SEEDS.json and skipping
what it already holds: a measurement longer than one sitting is resumed.
It exits 3 while some detected mutant has seeds left to run.

`rekey` moves the analyses through the kernel sources' edits since a git
revision (rekey.py): run it after editing a kernel, before the next run.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate  # noqa: E402
import rekey  # noqa: E402
import report  # noqa: E402
import runner  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CI_SEED = 20261130  # race::kCiSeed


def cmd_generate(a):
    os.makedirs(a.out, exist_ok=True)
    ms = generate.generate(ROOT, os.path.abspath(a.build_dir), os.path.abspath(a.out))
    ok = sum("id" in m for m in ms)
    print(f"mutate: {len(ms)} mutants in {len({m['file'] for m in ms})} files, {ok} in the schemata, "
          f"{len(ms) - ok} rejected by the compiler")
    return 0


def load_mutants(path):
    try:
        with open(path) as f:
            data = json.load(f)
        data["mutants"]
        return data
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a mutants.json from `mutate.py generate` ({e})")


def fingerprint(mutants):
    """Names one list of mutants: parts of a run must come from the same one."""
    return hashlib.sha1(json.dumps([(m["key"], m.get("id")) for m in mutants]).encode()).hexdigest()[:16]


def cmd_run(a):
    data = load_mutants(a.mutants)
    mutants = data["mutants"]
    chosen = runner.sample(mutants, a.sample) if a.sample else mutants
    if a.only:
        chosen = [m for m in mutants if m["key"] in set(a.only)]
    if a.only_file:
        with open(a.only_file) as f:
            keys = {line.strip() for line in f if line.strip()}
        chosen = [m for m in mutants if m["key"] in keys]
    if a.part:
        i, n = parse_part(a.part)
        chosen = [m for k, m in enumerate(chosen) if k % n == i]
    analyses = report.load_analyses(a.analyses)
    data_dir = os.environ.get("RACEORACLE_DATA_DIR") or ROOT
    earlier = resumed(a, mutants)
    t0 = time.monotonic()
    baseline = runner.unmutated_run(a.exe, a.seed, a.cases, 600, data_dir, a.jobs)
    wall = time.monotonic() - t0
    base = sum(b["seconds"] for b in baseline.values())
    timeout = (lambda m: a.timeout) if a.timeout else runner.time_limit(baseline)
    chosen = [runner.judged_on(m, baseline) for m in chosen]
    uncovered = {m["key"]: {"status": "NoCoverage", "killedBy": [], "seconds": 0}
                 for m in chosen if "id" in m and not m["subjects"] and m["key"] not in earlier}
    uncovered.update({k: r for k, r in earlier.items() if r["status"] == "NoCoverage"})
    chosen_run = [m for m in chosen if m["key"] not in uncovered]
    if a.skip_equivalent:
        # A mutant analysed as equivalent is out of the score whether it is
        # killed or survives: its run cannot change the verdict (Stryker's Ignored).
        equivalent = {m["key"]: {"status": "Ignored", "killedBy": [], "seconds": 0, "detail": "not run (--skip-equivalent)"}
                      for m in chosen_run if is_equivalent(analyses.get(m["key"])) and m["key"] not in earlier}
        chosen_run = [m for m in chosen_run if m["key"] not in equivalent]
    else:
        equivalent = {}
    print(f"mutate: {len([m for m in chosen if 'id' in m])} mutants ({len(uncovered)} never reached by the suite), "
          f"{len(equivalent)} analysed as equivalent and not run, "
          f"seed {a.seed}, {a.cases} cases, {a.jobs} at a time; the unmutated suite takes {base:.1f} s "
          f"({wall:.1f} s, a subject a run); {runner.describe_reach(chosen_run, baseline, a.timeout)}")
    sys.stdout.flush()
    start = time.monotonic()
    record = {"seed": a.seed, "cases": a.cases, "part": a.part, "mutants": fingerprint(mutants)}

    def save(results):
        if a.json:
            save_json(a.json, dict(record, results=dict(results, **uncovered, **equivalent)), indent=None)

    show = lambda s: (print(s), sys.stdout.flush())  # noqa: E731
    results = dict(earlier)
    results.update(runner.run_all(a.exe, [m for m in chosen_run if m["key"] not in earlier], a.seed, a.cases, a.jobs,
                                  timeout, data_dir, progress=show, save=lambda r: save(dict(earlier, **r))))
    if a.asan_exe:
        sanitizer_pass(a, mutants, chosen_run, results, analyses, data_dir)
    results.update(uncovered)
    results.update(equivalent)
    print(f"({time.monotonic() - start:.0f} s)")
    rates = {}
    if a.seeds:
        killed = [m for m in chosen if results.get(m["key"], {}).get("status") in runner.DETECTED]
        rates = kill_rates(killed_over_seeds(a, killed, results, timeout, data_dir, {}, None))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(record, results=results, kill_rates=rates), f, indent=1)
    whole = not (a.sample or a.only or a.only_file or a.part)
    return conclude(a, data, chosen, results, rates, analyses, whole)


def killed_over_seeds(a, killed, results, timeout, data_dir, done, save):
    """Runs each of `killed` (detected at the run's seed) at seeds 1..a.seeds,
    cheapest first, skipping the (mutant, seed) pairs in `done`
    ({key: {seed: status}}, updated and passed to `save` as each run ends).
    A mutant that only the sanitizer pass detected is rerun there."""
    seeds = list(range(1, a.seeds + 1))
    by_sanitizer = sanitizer_kills(a, killed, results)
    order = sorted(killed, key=lambda m: results[m["key"]]["seconds"])
    todo = [(m, s) for m in order for s in seeds if str(s) not in done.get(m["key"], {})]
    print(f"\nmutate: {len(killed)} detected mutants at seeds {seeds[0]}..{seeds[-1]}: "
          f"{len(todo)} runs to go, {a.jobs} at a time")
    sys.stdout.flush()
    show = lambda s: (print(s), sys.stdout.flush())  # noqa: E731

    def keep(r):
        for (k, s), x in r.items():
            done.setdefault(k, {})[str(s)] = x["status"]
        if save:
            save(done)

    groups = [(False, a.exe, a.cases), (True, a.asan_exe, a.asan_cases)]
    cost = lambda g: sum(results[m["key"]]["seconds"] for m, _ in todo if (m["key"] in by_sanitizer) == g[0])  # noqa: E731
    for sanitizer, exe, cases in sorted(groups, key=cost):  # the cheaper build's runs first
        mine = [(m, s) for m, s in todo if (m["key"] in by_sanitizer) == sanitizer]
        if mine:
            runner.run_jobs(exe, mine, cases, a.jobs, timeout, data_dir, show, keep,
                            key=lambda m, s: (m["key"], s), sanitizer=sanitizer)
    return {m["key"]: done.get(m["key"], {}) for m in killed}


def sanitizer_kills(a, killed, results):
    """The keys of `killed` that only the sanitizer pass detected: their seeds run under --asan-exe."""
    keys = {m["key"] for m in killed if set(results[m["key"]]["killedBy"]) & runner.SANITIZERS}
    if keys and not a.asan_exe:
        raise ValueError(f"{len(keys)} mutant(s) were detected by the sanitizer pass: their seeds need --asan-exe")
    return keys


def kill_rates(by_seed):
    """{key: {seed: status}} -> the kill rate of each mutant whose seeds all ran:
    detected at the run's seed plus the seeds that detected it."""
    return {k: {"detected": 1 + sum(st in runner.DETECTED for st in v.values()), "of": 1 + len(v),
                "missed_at": sorted(int(s) for s, st in v.items() if st not in runner.DETECTED)}
            for k, v in by_seed.items()}


def cmd_seeds(a):
    """The kill rate over seeds of the mutants a finished run detected, saved
    after every run to --json and resumed from it: a long measurement can
    be spread over calls."""
    data = load_mutants(a.mutants)
    mutants = data["mutants"]
    run = load_run(a.run)
    if (run.get("seed"), run.get("cases"), run.get("mutants")) != (a.seed, a.cases, fingerprint(mutants)):
        raise ValueError(f"{a.run} is not a run over {a.mutants} at seed {a.seed} and {a.cases} cases")
    results = run["results"]
    killed = [m for m in mutants if results.get(m["key"], {}).get("status") in runner.DETECTED]
    record = {"run": a.run, "seed": a.seed, "cases": a.cases, "mutants": fingerprint(mutants), "seeds": a.seeds}
    done = {}
    if os.path.exists(a.json):
        earlier = load_json(a.json)
        if {k: earlier.get(k) for k in record if k != "run"} != {k: v for k, v in record.items() if k != "run"}:
            raise ValueError(f"{a.json} holds the seeds of another run or seed count: name a new file")
        done = earlier["by_seed"]

    def save(by_seed):
        save_json(a.json, dict(record, by_seed=by_seed))

    pending = [m for m in killed if len(done.get(m["key"], {})) < a.seeds]
    sanitizer_kills(a, pending, results)
    if pending:
        data_dir = os.environ.get("RACEORACLE_DATA_DIR") or ROOT
        baseline = runner.unmutated_run(a.exe, a.seed, a.cases, 600, data_dir, a.jobs)
        timeout = (lambda m: a.timeout) if a.timeout else runner.time_limit(baseline)
        pending = [runner.judged_on(m, baseline) for m in pending]
        print(f"mutate: the unmutated suite takes {sum(b['seconds'] for b in baseline.values()):.1f} s; "
              f"{runner.describe_reach(pending, baseline, a.timeout)}")
        killed_over_seeds(a, pending, results, timeout, data_dir, done, save)
    complete = {m["key"]: done[m["key"]] for m in killed if len(done.get(m["key"], {})) == a.seeds}
    rates = kill_rates(complete)
    short = {k: v for k, v in rates.items() if v["detected"] < v["of"]}
    print(f"kill rate over {a.seeds + 1} seeds: {len(rates) - len(short)} of {len(rates)} measured mutants "
          f"detected at every seed; {len(killed) - len(rates)} of the {len(killed)} detected mutants not measured yet")
    for k, v in sorted(short.items()):
        print(f"  {v['detected']}/{v['of']}  {k}  (missed at seeds {v['missed_at']})")
    return 0 if len(rates) == len(killed) else 3


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        raise ValueError(f"{path} is not JSON ({e})")


def save_json(path, data, indent=1):
    """Writes `data` to path through path.part, so that a stopped write never
    leaves half a file where a resumed run would read it."""
    with open(path + ".part", "w") as f:
        json.dump(data, f, indent=indent)
        f.write("\n")
    os.replace(path + ".part", path)


def load_run(path):
    """A run's --json (results by mutant key), or an error naming the file."""
    try:
        with open(path) as f:
            r = json.load(f)
        r["results"].items()
        return r
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{path} is not the --json of a `mutate.py run` ({e})")


def resumed(a, mutants):
    """The results of --resume (a run's --json over the same mutants, seed and
    cases), kept as they are; {} without it."""
    if not a.resume:
        return {}
    r = load_run(a.resume)
    if (r.get("seed"), r.get("cases"), r.get("mutants")) != (a.seed, a.cases, fingerprint(mutants)):
        raise ValueError(f"{a.resume} is not a run over {a.mutants} at seed {a.seed} and {a.cases} cases")
    return r["results"]


def parse_part(text):
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        i = n = -1
    if not 0 <= i < n:
        raise ValueError(f"--part {text}: expected I/N with 0 <= I < N")
    return i, n


def cmd_merge(a):
    """The parts of one run (--part I/N, each with --json) judged together, as one full run."""
    data = load_mutants(a.mutants)
    mutants = data["mutants"]
    parts = [load_run(path) for path in a.parts]
    first = parts[0]
    for path, p in zip(a.parts, parts):
        if (p.get("seed"), p.get("cases"), p.get("mutants")) != (first.get("seed"), first.get("cases"), fingerprint(mutants)):
            raise ValueError(f"{path} is not a part of one run over {a.mutants} (seed, cases or mutants differ)")
        if not p.get("part"):
            raise ValueError(f"{path} is a whole run, not a part (--part I/N) of one")
    got = sorted(parse_part(p.get("part") or "") for p in parts)
    n = got[0][1]
    if got != [(i, n) for i in range(n)]:
        raise ValueError(f"parts {sorted(f'{i}/{k}' for i, k in got)} are not each of 0/{n}..{n - 1}/{n} once")
    results, rates = {}, {}
    for p in parts:
        results.update(p["results"])
        rates.update(p.get("kill_rates", {}))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": first["seed"], "cases": first["cases"], "part": None, "mutants": first["mutants"],
                       "results": results, "kill_rates": rates}, f, indent=1)
    return conclude(a, data, mutants, results, rates, report.load_analyses(a.analyses), True)


def conclude(a, data, chosen, results, rates, analyses, whole):
    """Prints the table, the survivors and the kill rates over seeds, writes
    --report, and says whether the run passes. `whole`: every mutant was run,
    so the score and the analyses naming no mutant count too."""
    rows = report.judge(chosen, results, analyses)
    print()
    print(report.table(rows))
    surv = report.survivors(rows)
    if surv:
        print("\nsurvivors and equivalents:\n" + surv)
    if rates:
        short = {k: v for k, v in rates.items() if v["detected"] < v["of"]}
        of = max(v["of"] for v in rates.values())
        print(f"kill rate over {of} seeds: {len(rates) - len(short)} of {len(rates)} detected mutants at every seed")
        for k, v in sorted(short.items()):
            print(f"  {v['detected']}/{v['of']}  {k}  (missed at seeds {v['missed_at']})")
    if a.report:
        with open(a.report, "w") as f:
            json.dump(report.stryker(rows, data["files"]), f, indent=1)
    failures = []
    unexplained = [r["key"] for r in rows if r["status"] in ("Survived", "NoCoverage") and r["key"] not in analyses]
    if unexplained:
        failures.append(f"{len(unexplained)} survivor(s) without an analysis in {a.analyses}")
    stale = sorted(set(analyses) - {m["key"] for m in data["mutants"]})
    if stale and whole:
        failures.append(f"{len(stale)} analysis(es) name no mutant of these sources: {stale[:3]}")
    d, n = report.score(rows)
    # A sample or a part is a regression gate: every mutant it ran is detected
    # or has an analysis (a known gap included); the score is judged on whole runs.
    if whole and n and 100.0 * d / n < a.min_score:
        failures.append(f"score {100.0 * d / n:.1f}% is below {a.min_score}%")
    for f in failures:
        print("mutate: FAIL: " + f)
    return 1 if failures else 0


def is_equivalent(analysis):
    """An analysis that puts its mutant out of the score (equivalent, or equivalent on cpu)."""
    return (analysis or {}).get("verdict", "").startswith("equivalent")


def sanitizer_pass(a, mutants, chosen_run, results, analyses, data_dir):
    """Reruns the survivors under the sanitizer schemata build; a sanitizer
    report replaces their Survived."""
    if not a.asan_mutants:
        raise ValueError("--asan-exe needs --asan-mutants (the sanitizer build's mutants.json)")
    # Survivors analysed as equivalent (either kind) are left out of the score,
    # so the pass could not change it; at 3-5x the cost of a run, it skips them.
    # With --sanitize-unanalysed it skips every analysed survivor: a sample
    # passes when each mutant is detected or analysed, which the pass cannot change.
    skip = (lambda x: x is not None) if a.sanitize_unanalysed else is_equivalent
    survivors = [m for m in chosen_run if results[m["key"]]["status"] == "Survived"
                 and not skip(analyses.get(m["key"]))]
    if not survivors:
        return
    if a.asan_build:  # the sanitizer build is made only when a survivor needs it
        print(f"\nmutate: building the sanitizer schemata: {a.asan_build}")
        sys.stdout.flush()
        if subprocess.run(a.asan_build, shell=True).returncode != 0:
            raise RuntimeError(f"--asan-build failed: {a.asan_build}")
    # The builds may use other compilers (the sanitizer build is clang's),
    # which may reject other mutants: the survivors rerun there must have the
    # same ids in both, and the rest must be the same mutants.
    with open(a.asan_mutants) as f:
        theirs = {m["key"]: m.get("id") for m in json.load(f)["mutants"]}
    if set(theirs) != {m["key"] for m in mutants}:
        raise ValueError(f"{a.asan_mutants} lists other mutants than {a.mutants}: build both from the same sources")
    differ = [m["key"] for m in survivors if theirs[m["key"]] != m.get("id")]
    if differ:
        raise ValueError(f"{len(differ)} survivor(s) have another id in {a.asan_mutants} (its compiler rejected "
                         f"other mutants): {differ[:3]}")
    base = runner.unmutated_sanitizer_run(a.asan_exe, a.seed, a.asan_cases, 1200, data_dir)
    print(f"\nmutate: the {len(survivors)} survivors under the sanitizer build, {a.asan_cases} cases "
          f"(the unmutated suite there takes {base:.1f} s)")
    sys.stdout.flush()
    again = runner.run_all(a.asan_exe, survivors, a.seed, a.asan_cases, a.jobs, max(60.0, 5 * base), data_dir,
                           progress=lambda s: (print(s), sys.stdout.flush()), sanitizer=True)
    for key, r in again.items():
        if r["status"] != "Survived":
            results[key] = r


def cmd_rekey(a):
    """survivors.json's keys moved through the edits since --since."""
    analyses = load_json(a.analyses)
    if not isinstance(analyses, dict):
        raise ValueError(f"{a.analyses} is not an analyses file ({{mutant key: analysis}})")

    def at_rev(path):
        r = subprocess.run(["git", "-C", ROOT, "show", f"{a.since}:{path}"], capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else None

    def now(path):
        full = os.path.join(ROOT, path)
        if not os.path.exists(full):
            return None
        with open(full) as f:
            return f.read()

    if subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "--quiet", a.since + "^{commit}"],
                      capture_output=True).returncode != 0:
        raise ValueError(f"--since {a.since}: not a commit of {ROOT}")
    out, dropped = rekey.moved(analyses, at_rev, now)
    moves = sum(k not in analyses for k in out)
    save_json(a.analyses, out)
    print(f"mutate: {len(out)} analyses kept ({moves} moved with their lines), {len(dropped)} dropped")
    for k, why in sorted(dropped.items()):
        print(f"  dropped {k}: {why}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write the schemata sources and mutants.json")
    g.add_argument("--build-dir", required=True, help="a configured cpu build (its compile_commands.json)")
    g.add_argument("--out", required=True)
    r = sub.add_parser("run", help="run mutants through the property suite")
    r.add_argument("--exe", required=True, help="the raceoracle-schemata executable")
    r.add_argument("--mutants", required=True, help="mutants.json from generate")
    r.add_argument("--seed", type=int, default=CI_SEED)
    r.add_argument("--cases", type=int, default=100)
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    r.add_argument("--timeout", type=float, default=0,
                   help="seconds per mutant (default: 5x the unmutated run on the subjects it runs on, >= 30)")
    r.add_argument("--sample", type=int, default=0, help="run a fixed sample of this many mutants")
    r.add_argument("--only", nargs="*", help="run these mutant keys")
    r.add_argument("--only-file", help="run the mutant keys listed in this file, one a line")
    r.add_argument("--resume", help="a run's --json: keep its results, run the rest (and the passes after)")
    r.add_argument("--part", help="I/N: run every N-th mutant from the I-th (split a run over machines)")
    r.add_argument("--seeds", type=int, default=0,
                   help="also run each detected mutant at seeds 1..N and report its kill rate over seeds")
    r.add_argument("--asan-exe", help="the schemata build of the cpu-asan preset: survivors run again under it")
    r.add_argument("--asan-mutants", help="that build's mutants.json (must list the same mutants)")
    r.add_argument("--asan-cases", type=int, default=10, help="cases of the sanitizer pass (default 10)")
    r.add_argument("--asan-build", help="a shell command that builds --asan-exe and --asan-mutants, run only when "
                                        "a survivor needs the sanitizer pass")
    r.add_argument("--skip-equivalent", action="store_true",
                   help="do not run the mutants analysed as equivalent (Ignored: their runs cannot change the verdict)")
    r.add_argument("--sanitize-unanalysed", action="store_true",
                   help="the sanitizer pass reruns only the survivors without an analysis (a sample's verdict, "
                        "every mutant detected or analysed, cannot change by the others)")
    k = sub.add_parser("seeds", help="the kill rate over seeds of a finished run's detected mutants (resumable)")
    k.add_argument("run", help="the run's --json (a whole run, or the merge of its parts)")
    k.add_argument("--exe", required=True, help="the raceoracle-schemata executable the run used")
    k.add_argument("--mutants", required=True, help="the mutants.json the run ran")
    k.add_argument("--asan-exe", help="the sanitizer schemata build: the mutants its pass detected run there")
    k.add_argument("--asan-cases", type=int, default=10)
    k.add_argument("--seed", type=int, default=CI_SEED, help="the run's seed")
    k.add_argument("--cases", type=int, default=100)
    k.add_argument("--seeds", type=int, default=10, help="run at seeds 1..N (default 10)")
    k.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    k.add_argument("--timeout", type=float, default=0,
                   help="seconds per run (default: 5x the unmutated run on the subjects it runs on, >= 30)")
    k.add_argument("--json", required=True, help="the seeds measured so far: read if it exists, written after each run")
    x = sub.add_parser("rekey", help="move survivors.json's analyses through the kernel edits since a revision")
    x.add_argument("--since", required=True, help="the git revision the analyses were written for")
    x.add_argument("--analyses", default=os.path.join(HERE, "survivors.json"))
    m = sub.add_parser("merge", help="judge the parts of one run (--part I/N --json) together")
    m.add_argument("parts", nargs="+", help="the parts' --json files")
    m.add_argument("--mutants", required=True, help="the mutants.json the parts ran")
    for q in (r, m):
        q.add_argument("--analyses", default=os.path.join(HERE, "survivors.json"))
        q.add_argument("--min-score", type=float, default=95.0)
        q.add_argument("--report", help="write the Stryker mutation-testing report here")
        q.add_argument("--json", help="write every mutant's result here")
    a = p.parse_args()
    try:
        return {"generate": cmd_generate, "run": cmd_run, "seeds": cmd_seeds, "merge": cmd_merge,
                "rekey": cmd_rekey}[a.command](a)
    except (RuntimeError, OSError, ValueError) as e:
        print(f"mutate: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
