"""How the parts of a run come together (`mutate.py merge`) and how a run
resumes (`--resume`), on a made-up list of mutants: no build needed."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MUTATE = os.path.join(HERE, "mutate.py")
sys.path.insert(0, HERE)
import runner  # noqa: E402

# The unmutated run: once per subject. Each mutant then runs on the subjects that reached its site.
UNMUTATED = [("0", "7", s) for s in runner.ALL_SUBJECTS]
EVERY = ",".join(runner.ALL_SUBJECTS)


def mutant(i):
    return {"file": "kernels/x.hip", "start": {"line": i, "column": 1}, "end": {"line": i, "column": 2},
            "mutator": "EqualityOperator", "replacement": "<=", "original": "<", "key": f"kernels/x.hip:{i}", "id": i}


def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(data, f)
    return path


def make_run(tmp):
    sys.path.insert(0, HERE)
    import mutate
    mutants = [mutant(i) for i in (1, 2, 3)]
    listing = write(tmp, "mutants.json", {"files": {"kernels/x.hip": {"language": "cpp", "source": "a < b\n"}},
                                          "mutants": mutants})
    analyses = write(tmp, "survivors.json", {"kernels/x.hip:3": {"verdict": "gap", "why": "an input class"}})
    base = {"seed": 7, "cases": 100, "mutants": mutate.fingerprint(mutants), "kill_rates": {}}
    killed = {"status": "Killed", "killedBy": ["TokensInRange on fused-post"], "seconds": 1.0}
    survived = {"status": "Survived", "killedBy": [], "seconds": 9.0}
    parts = [write(tmp, "p0.json", dict(base, part="0/2", results={"kernels/x.hip:1": killed, "kernels/x.hip:3": survived})),
             write(tmp, "p1.json", dict(base, part="1/2", results={"kernels/x.hip:2": killed}))]
    return listing, analyses, parts


def merge(listing, analyses, *parts, extra=()):
    return subprocess.run([sys.executable, MUTATE, "merge", *parts, "--mutants", listing, "--analyses", analyses,
                           *extra], capture_output=True, text=True)


def test_merged_parts_are_judged_as_one_run():
    with tempfile.TemporaryDirectory() as tmp:
        listing, analyses, parts = make_run(tmp)
        out = os.path.join(tmp, "merged.json")
        r = merge(listing, analyses, *parts, extra=("--json", out, "--min-score", "60"))
        assert r.returncode == 0, r.stdout + r.stderr
        assert "2/3 = 66.7%" in r.stdout
        with open(out) as f:
            assert sorted(json.load(f)["results"]) == ["kernels/x.hip:1", "kernels/x.hip:2", "kernels/x.hip:3"]
        r = merge(listing, analyses, *parts)  # the default 95% score fails a whole run
        assert r.returncode == 1 and "below 95" in r.stdout


def test_merge_refuses_a_missing_repeated_or_foreign_part():
    with tempfile.TemporaryDirectory() as tmp:
        listing, analyses, parts = make_run(tmp)
        r = merge(listing, analyses, parts[0])
        assert r.returncode == 2 and "not each of" in r.stderr
        r = merge(listing, analyses, parts[0], parts[0], parts[1])
        assert r.returncode == 2 and "not each of" in r.stderr
        with open(parts[1]) as f:
            other = dict(json.load(f), seed=8)
        r = merge(listing, analyses, parts[0], write(tmp, "other.json", other))
        assert r.returncode == 2 and "not a part of one run" in r.stderr
        with open(parts[0]) as f:
            whole = dict(json.load(f), part=None)
        r = merge(listing, analyses, write(tmp, "whole.json", whole), parts[1])
        assert r.returncode == 2 and "a whole run, not a part" in r.stderr
        r = merge(listing, analyses, write(tmp, "junk.json", "not a run"), parts[1])
        assert r.returncode == 2 and "junk.json is not the --json" in r.stderr


def test_resume_refuses_a_run_at_another_seed():
    with tempfile.TemporaryDirectory() as tmp:
        listing, analyses, parts = make_run(tmp)
        r = subprocess.run([sys.executable, MUTATE, "run", "--exe", "/bin/false", "--mutants", listing, "--seed", "8",
                            "--resume", parts[0], "--analyses", analyses], capture_output=True, text=True)
        assert r.returncode == 2 and "is not a run over" in r.stderr


FAKE_SUITE = r'''#!PYTHON
"""Stands in for raceoracle-schemata check: mutant 2 survives seed 3, every
other mutant fails a law; each call is logged as "mutant seed kernels". The
unmutated run reaches sites 1, 2 and 3 on fused-post, site 1 elsewhere."""
import json, os, sys
args = sys.argv
seed, report = args[args.index("--seed") + 1], args[args.index("--json") + 1]
kernels = args[args.index("--kernels") + 1:args.index("--no-mutants")]
mutant = os.environ["RACEORACLE_MUTANT"]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(f"{mutant} {seed} {','.join(kernels)}\n")
if mutant == "0":
    if "RACEORACLE_MUTANT_COVERAGE" in os.environ:
        with open(os.environ["RACEORACLE_MUTANT_COVERAGE"], "w") as f:
            f.write("1 2 3" if kernels == ["fused-post"] else "1")
    sys.exit(0)
if mutant == "2" and seed == "3":
    sys.exit(0)
with open(report, "w") as f:
    json.dump({"properties": [{"law": "TokensInRange", "kernel": kernels[0], "result": "fail"}]}, f)
sys.exit(1)
'''


def test_seeds_measures_each_detected_mutant_and_resumes_from_its_file():
    with tempfile.TemporaryDirectory() as tmp:
        listing, analyses, parts = make_run(tmp)
        merged = os.path.join(tmp, "merged.json")
        assert merge(listing, analyses, *parts, extra=("--json", merged, "--min-score", "0")).returncode == 0
        exe = os.path.join(tmp, "fake-schemata")
        with open(exe, "w") as f:
            f.write(FAKE_SUITE.replace("PYTHON", sys.executable))
        os.chmod(exe, 0o755)
        log, out = os.path.join(tmp, "log"), os.path.join(tmp, "seeds.json")
        env = dict(os.environ, FAKE_LOG=log)

        def seeds(*extra):
            return subprocess.run([sys.executable, MUTATE, "seeds", merged, "--exe", exe, "--mutants", listing,
                                   "--seed", "7", "--seeds", "4", "--jobs", "2", "--json", out, *extra],
                                  capture_output=True, text=True, env=env)

        def calls():
            with open(log) as f:
                return sorted(tuple(line.split()) for line in f)

        # Half a measurement, as a call stopped early would leave it.
        with open(out, "w") as f:
            json.dump({"run": merged, "seed": 7, "cases": 100, "mutants": json.load(open(merged))["mutants"],
                       "seeds": 4, "by_seed": {"kernels/x.hip:1": {"1": "Killed", "2": "Killed"}}}, f)
        r = seeds()
        assert r.returncode == 0, r.stdout + r.stderr
        # The unmutated run, then only the pairs not yet measured (mutant 3
        # survived the run: no seeds); mutant 2 on fused-post alone, the one subject that reaches it.
        assert calls() == sorted(UNMUTATED + [("1", "3", EVERY), ("1", "4", EVERY)]
                                 + [("2", str(s), "fused-post") for s in range(1, 5)])
        assert "1 of 2 measured mutants detected at every seed" in r.stdout
        assert "4/5  kernels/x.hip:2  (missed at seeds [3])" in r.stdout
        os.remove(log)
        open(log, "w").close()
        r = seeds()  # complete: nothing runs again
        assert r.returncode == 0 and calls() == [], r.stdout + r.stderr
        r = seeds("--seeds", "5")
        assert r.returncode == 2 and "another run or seed count" in r.stderr


def test_skip_equivalent_runs_no_equivalent_and_builds_the_sanitizer_pass_only_when_needed():
    with tempfile.TemporaryDirectory() as tmp:
        listing, _, _ = make_run(tmp)
        analyses = write(tmp, "equivalent.json", {"kernels/x.hip:1": {"verdict": "equivalent", "why": "a reason"}})
        exe = os.path.join(tmp, "fake-schemata")
        with open(exe, "w") as f:
            f.write(FAKE_SUITE.replace("PYTHON", sys.executable))
        os.chmod(exe, 0o755)
        log, built = os.path.join(tmp, "log"), os.path.join(tmp, "built")
        env = dict(os.environ, FAKE_LOG=log)

        def run(seed, *extra):
            open(log, "w").close()
            return subprocess.run([sys.executable, MUTATE, "run", "--exe", exe, "--mutants", listing, "--seed", seed,
                                   "--analyses", analyses, "--skip-equivalent", "--jobs", "2", "--asan-exe", exe,
                                   "--asan-mutants", listing, "--asan-build", f"touch {built}", *extra],
                                  capture_output=True, text=True, env=env)

        def calls():
            with open(log) as f:
                return sorted(tuple(line.split()) for line in f)

        # Every run mutant killed: the equivalent one never runs, nothing is built.
        r = run("7", "--min-score", "0")
        assert r.returncode == 0, r.stdout + r.stderr
        assert calls() == sorted(UNMUTATED + [("2", "7", "fused-post"), ("3", "7", "fused-post")])
        assert not os.path.exists(built)
        assert "equivalent (not run): a reason" in r.stdout
        # Mutant 2 survives seed 3 with an analysis: the sample's pass leaves it to the analysis, nothing is built.
        write(tmp, "equivalent.json", {"kernels/x.hip:1": {"verdict": "equivalent", "why": "a reason"},
                                       "kernels/x.hip:2": {"verdict": "gap", "why": "a class not drawn"}})
        r = run("3", "--min-score", "0", "--sanitize-unanalysed")
        assert r.returncode == 0 and not os.path.exists(built), r.stdout + r.stderr
        assert calls().count(("2", "3", "fused-post")) == 1, r.stdout + r.stderr
        # Without the flag the analysed survivor is rerun under the sanitizer build.
        r = run("3", "--min-score", "0")
        assert r.returncode == 0 and os.path.exists(built), r.stdout + r.stderr
        assert calls().count(("2", "3", "fused-post")) == 2, r.stdout + r.stderr
        os.remove(built)
        write(tmp, "equivalent.json", {"kernels/x.hip:1": {"verdict": "equivalent", "why": "a reason"}})
        # Mutant 2 survives seed 3 without an analysis: the sanitizer build is made and runs it.
        r = run("3", "--min-score", "0")
        assert os.path.exists(built), r.stdout + r.stderr
        assert calls().count(("2", "3", "fused-post")) == 2 and not [c for c in calls() if c[0] == "1"], r.stdout + r.stderr
        assert r.returncode == 1 and "1 survivor(s) without an analysis" in r.stdout
