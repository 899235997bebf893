"""How the parts of a run come together (`mutate.py merge`) and how a run
resumes (`--resume`), on a made-up list of mutants: no build needed."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MUTATE = os.path.join(HERE, "mutate.py")


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
