#!/bin/sh
# check's mutant gate runs under the command's own settings: with --no-corpus
# and --shrink-seconds 0.5, every pair's child reports an empty corpus and a
# 0.5 s shrink budget (the gate once ran with the corpus and 60 s whatever
# the flags said).   usage: gate_settings.sh RACEORACLE WORKDIR PYTHON
set -eu
exe=$1 dir=$2 py=$3
rm -rf "$dir" && mkdir -p "$dir"
"$exe" check --kernels baseline --properties TokensInRange --no-agreement --cases 3 --seed 7 \
  --no-corpus --shrink-seconds 0.5 --no-save-failures --json "$dir/report.json" > "$dir/log" 2>&1 || true
"$py" - "$dir/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
pairs = [p for m in r["mutants"] for p in m["pairs"] if p["outcome"] != "n/a"]
assert pairs, "the gate ran no pair"
for p in pairs:
    s = json.loads(p["settings"])
    assert s["corpus_dir"] == "" and s["shrink_seconds"] == 0.5 and s["seed"] == "7" and s["cases"] == 3, p
print(f"gate settings: PASS ({len(pairs)} pairs)")
PY
