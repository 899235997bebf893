"""Runs machine-made mutants through the property suite, each in a child
process of the schemata build (`raceoracle-schemata check ... --fail-fast`
with RACEORACLE_MUTANT=id), and judges them the way Stryker does:

  Killed        a property failed, or (the sanitizer pass) the survivor's run
                under the AddressSanitizer + UBSan schemata build stopped
                at a sanitizer report
  Timeout       the run passed the time limit (a hang: detected)
  RuntimeError  the process died or stopped with an error (detected)
  Survived      every property passed
  NoCoverage    the suite never runs the mutant's site (found by the unmutated run)
  Ignored       an equivalent mutant, by its analysis (mutants/engine/survivors.json)
  CompileError  the compiler rejected the mutant (generate)
"""
import concurrent.futures
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import time

# The subjects that run a file's code: a mutant there is judged on them alone.
SUBJECTS = {
    # One template for both scaling orders (race.h holds what differs) and both noise sources.
    "kernels/fused.hip": ["fused-post", "fused-philox"],
    "kernels/baseline.hip": ["baseline"],
    "kernels/filtered_select.hip": ["fused-filtered"],
    # The filters' select: the fused filtered race's (the verify kernels, which share it, are no subjects of check).
    "kernels/filtered_select.h": ["fused-filtered"],
    "kernels/filtered_sort.hip": ["sort-filtered"],
}
ALL_SUBJECTS = ["fused-post", "fused-pre", "fused-philox", "baseline", "fused-filtered", "sort-filtered"]
DETECTED = ("Killed", "Timeout", "RuntimeError")
# What a sanitizer build prints when it stops a run (UBSan is built not to recover).
SANITIZER_REPORTS = (("ERROR: AddressSanitizer", "AddressSanitizer"), ("runtime error:", "UndefinedBehaviorSanitizer"))
SANITIZERS = {name for _, name in SANITIZER_REPORTS}
# Leaks at exit are no defect of a kernel; the padding around the rows is
# guarded, so a read one element past a row is reported (kernels/device_memory.h).
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0", "RACEORACLE_GUARD_PADDING": "1"}


def subjects_for(file):
    return SUBJECTS.get(file, ALL_SUBJECTS)


def sample(mutants, n):
    """A fixed sample: the n runnable mutants whose keys hash lowest. It
    depends on the kernel sources alone, and spreads over files and operators."""
    runnable = [m for m in mutants if "id" in m]
    return sorted(runnable, key=lambda m: hashlib.sha1(m["key"].encode()).hexdigest())[:n]


# The sanitizer pass runs one law to its end on every subject of the file: it
# launches the kernels on the whole coverage matrix (out-of-contract rows
# included) and the random cases, so every shape, whose memory errors show
# whatever the law judges. Its coverage needs are not met at a few cases.
SANITIZER_CHECK = ["--properties", "TokensInRange"]


def _command(exe, m, seed, cases, report, sanitizer=False):
    how = SANITIZER_CHECK if sanitizer else ["--fail-fast"]
    return [exe, "check", "--backend", "cpu", "--kernels", *m.get("subjects", subjects_for(m["file"])), "--no-mutants",
            "--no-agreement", "--no-save-failures", "--no-corpus", *how, "--seed", str(seed), "--cases", str(cases),
            "--json", report]


def run_one(exe, m, seed, cases, timeout_s, data_dir, sanitizer=False, extra_env=None):
    """One mutant: its status, the properties that killed it, seconds. It
    runs on m["subjects"] where given (the subjects that reach its site, from
    `judged_on`), else on every subject of its file. `sanitizer`: the
    sanitizer pass's run (exe is the sanitizer build)."""
    with tempfile.TemporaryDirectory(prefix="raceoracle-mutant-") as tmp:
        report = os.path.join(tmp, "check.json")
        env = dict(os.environ, RACEORACLE_MUTANT=str(m.get("id", 0)), **(SANITIZER_ENV if sanitizer else {}),
                   **(extra_env or {}))
        if data_dir:
            env["RACEORACLE_DATA_DIR"] = data_dir
        start = time.monotonic()
        command = _command(exe, m, seed, cases, report, sanitizer)
        p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True, text=True, errors="replace")
        try:
            out, _ = p.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return {"status": "Timeout", "killedBy": [], "seconds": time.monotonic() - start,
                    "detail": f"no verdict after {timeout_s:.0f} s"}
        seconds = time.monotonic() - start
        failed = []
        try:
            with open(report) as f:
                r = json.load(f)
            failed = [f'{x["law"]} on {x["kernel"]}' for x in r.get("properties", []) if x["result"] != "pass"]
        except (OSError, ValueError):
            r = None
        if p.returncode == 0:
            return {"status": "Survived", "killedBy": [], "seconds": seconds}
        for marker, name in SANITIZER_REPORTS:
            if marker in out:
                line = next((x for x in out.splitlines() if marker in x), marker)
                return {"status": "Killed", "killedBy": [name], "seconds": seconds, "detail": line.strip()[:300]}
        if p.returncode == 1 and failed:
            if sanitizer:  # the pass judges memory errors alone; too few cases to judge laws
                return {"status": "Survived", "killedBy": [], "seconds": seconds, "detail": "laws failed: " + ", ".join(failed)}
            return {"status": "Killed", "killedBy": failed, "seconds": seconds}
        why = f"signal {-p.returncode}" if p.returncode < 0 else f"exit code {p.returncode}"
        return {"status": "RuntimeError", "killedBy": [], "seconds": seconds, "detail": why + ": " + out[-300:].strip()}


def run_all(exe, mutants, seed, cases, jobs, timeout_s, data_dir=None, progress=print, save=None, sanitizer=False):
    """Runs `mutants` (those with an id) `jobs` at a time; returns {key: result}.
    `timeout_s`: seconds, or a function of the mutant giving them.
    `save(results)`, when given, is called after each mutant (a long run that
    is stopped keeps what it found)."""
    return run_jobs(exe, [(m, seed) for m in mutants if "id" in m], cases, jobs, timeout_s, data_dir, progress, save,
                    key=lambda m, s: m["key"], sanitizer=sanitizer)


def run_jobs(exe, jobs_list, cases, jobs, timeout_s, data_dir, progress, save, key, sanitizer=False):
    results = {}
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        limit = timeout_s if callable(timeout_s) else lambda m: timeout_s
        futures = {pool.submit(run_one, exe, m, s, cases, limit(m), data_dir, sanitizer): (m, s) for m, s in jobs_list}
        for f in concurrent.futures.as_completed(futures):
            m, s = futures[f]
            r = results[key(m, s)] = f.result()
            done += 1
            if save:
                save(results)
            if progress and (r["status"] not in DETECTED or done % 50 == 0 or done == len(jobs_list)):
                progress(f"  [{done}/{len(jobs_list)}] {r['status']:<12} {m['key']} seed {s}  ({r['seconds']:.1f} s)")
    return results


def unmutated_run(exe, seed, cases, timeout_s, data_dir=None, jobs=1):
    """The schemata with no mutant switched on must pass: else every kill is
    void. It runs once per subject, `jobs` at a time, each run writing the
    ids of the sites it ran (coverage). Returns {subject: {"seconds",
    "reached"}}: a mutant is judged on the subjects that reach its site
    (`judged_on`), within a limit set by their seconds (`time_limit`); one
    that no subject reaches cannot be killed by this suite (NoCoverage).
    (`check --kernels A B` runs each law on each kernel from the same seed,
    so a mutant's run on some subjects is exactly their part of the whole.)"""
    with tempfile.TemporaryDirectory(prefix="raceoracle-coverage-") as tmp:
        def one(subject):
            path = os.path.join(tmp, "reached-" + subject)
            r = run_one(exe, {"file": "", "key": "none", "subjects": [subject]}, seed, cases, timeout_s, data_dir,
                        extra_env={"RACEORACLE_MUTANT_COVERAGE": path})
            if r["status"] != "Survived":
                raise RuntimeError(f"the schemata build without a mutant does not pass the suite on {subject} "
                                   f"({r['status']}: {r.get('detail') or r['killedBy']}); fix that first")
            with open(path) as f:
                return {"seconds": r["seconds"], "reached": {int(x) for x in f.read().split()}}

        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            return dict(zip(ALL_SUBJECTS, pool.map(one, ALL_SUBJECTS)))


def judged_on(m, baseline):
    """m with "subjects": those of its file whose unmutated run reached its site (none: NoCoverage)."""
    return dict(m, subjects=[s for s in subjects_for(m["file"]) if m.get("id") in baseline[s]["reached"]])


def time_limit(baseline, floor=30.0):
    """A mutant's limit: 5x what its subjects take unmutated, at least `floor` seconds."""
    return lambda m: max(floor, 5 * sum(baseline[s]["seconds"] for s in m["subjects"]))


def describe_reach(mutants, baseline, timeout=0):
    """One line: on how many subjects the mutants run, and their time limits."""
    n = [len(m["subjects"]) for m in mutants if m.get("subjects")]
    if not n:
        return "no mutant to run"
    limits = [timeout] if timeout else [time_limit(baseline)(m) for m in mutants if m.get("subjects")]
    return (f"each runs on the subjects that reach its site ({min(n)} to {max(n)} of {len(ALL_SUBJECTS)}, "
            f"{sum(n) / len(n):.1f} on average), limit {min(limits):.0f} to {max(limits):.0f} s")


def unmutated_sanitizer_run(exe, seed, cases, timeout_s, data_dir=None):
    """The sanitizer build with no mutant switched on must run clean: a
    sanitizer report or a crash there voids every kill. Returns its seconds."""
    r = run_one(exe, {"file": "", "key": "none"}, seed, cases, timeout_s, data_dir, sanitizer=True)
    if r["status"] != "Survived":
        raise RuntimeError(f"the sanitizer build without a mutant does not run clean ({r['status']}: "
                           f"{r.get('detail') or r['killedBy']}); fix that first")
    return r["seconds"]
