#!/bin/sh
# N shards of `check`, of `mutants` and of `divergence` together run exactly
# the unsharded work: their merged reports equal the unsharded ones (timings
# aside; divergence's tables to the digit), and a missing, repeated or foreign
# shard is refused.
# Usage: shards.sh RACEORACLE DIR check|mutants|divergence (CTest tests that run side by side)
set -eu
R=$1
DIR=$2/$3
PART=$3
rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR"
same() {  # two JSON reports equal but for their timings
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
def strip(j):
    if isinstance(j, dict): return {k: strip(v) for k, v in j.items() if k != "seconds"}
    if isinstance(j, list): return [strip(v) for v in j]
    return j
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k): print("differs in", k, ":", str(a.get(k))[:400], "\n  vs", str(b.get(k))[:400])
    sys.exit(1)
print("equal:", sys.argv[1], sys.argv[2], "-", a["units"], "units")
PY
}
refused() {  # merge must fail, naming the problem in out.txt
  if $R merge "$@" > out.txt 2>&1; then echo "merge accepted: $*"; exit 1; fi
}

if [ "$PART" = check ]; then
C="check --kernels fused-post --properties TokensInRange GreedyIsExact MaskedIdsNeverWin --cases 40
   --cases-per-unit 20 --no-mutants --rows 8 --vocab 1000 --no-save-failures"
$R $C --json full.json > full.txt
for i in 0 1 2; do $R $C --shard $i/3 --json c$i.json > c$i.txt; done
$R merge c2.json c0.json c1.json --json merged.json
same full.json merged.json
grep -q "TokensInRange \[2/2\]" full.txt  # the grain split each (subject, property) in two
$R $C --devices 2 --json devices.json > devices.txt  # two shards in parallel, merged
same full.json devices.json
refused c0.json c1.json && grep -q "shards 2 of 3 are missing" out.txt
refused c0.json c1.json c1.json c2.json && grep -q "given twice" out.txt
refused c0.json c1.json c2.json --out merged-dir && grep -q "where divergence states" out.txt
# Shard 1 of a run on other kernels, the same units and settings otherwise.
O=$(echo "$C" | sed 's/--kernels fused-post/--kernels fused-pre/')
$R $O --shard 1/3 --json other.json > other.txt
refused c0.json other.json c2.json && grep -q "their kernels differ" out.txt
$R check --shard 3/3 > out.txt 2>&1 && exit 1
grep -q "expected I/N with 0 <= I < N" out.txt
echo "shards (check): PASS"
exit 0
fi

if [ "$PART" = divergence ]; then
# Both roads: rows decided lazily (a temperature's rows are its units), and
# kernels on batches (a (temperature, batch) is a unit); three shards each.
for road in "--no-kernels --rows 3000 --vocab 4096 --logit-rows 20" "--rows 8 --vocab 2048 --batches 3"; do
  D="divergence $road --temperatures 0.3 1"
  $R $D --out whole > whole.txt
  for i in 0 1 2; do $R $D --shard $i/3 --state d$i.state > d$i.txt; done
  grep -q "shard 1/3" d1.txt
  $R merge d2.state d0.state d1.state --out merged > merged.txt
  cmp whole/divergence.csv merged/divergence.csv
  grep -q "merged 3 shard states" merged.txt
  $R $D --devices 3 --out devices > devices.txt  # three shards in parallel, merged
  cmp whole/divergence.csv devices/divergence.csv
done
# A shard that fails is named with the end of its log.
$R divergence --rows 4 --vocab 64 --temperatures 1 --devices 2 --sampler "exit 3" > out.txt 2>&1 && exit 1
grep -q "shard 0/2 wrote no" out.txt && grep -q "exited with status 3" out.txt
refused d0.state d1.state && grep -q "shard 2/3 missing" out.txt
refused d0.state d1.state d1.state d2.state && grep -q "both shard 1/3" out.txt
$R divergence --rows 8 --vocab 2048 --batches 3 --temperatures 0.3 0.7 --shard 2/3 --state other.state > other.txt
refused d0.state d1.state other.state && grep -q "not a shard of the run" out.txt && grep -q "temperatures" out.txt
echo '{}' > report.json
refused d0.state report.json && grep -q "not both" out.txt
$R divergence --rows 8 --vocab 2048 --shard 0/2 > out.txt 2>&1 && exit 1
grep -q "requires --state" out.txt
echo "shards (divergence): PASS"
exit 0
fi

[ "$PART" = mutants ] || { echo "shards.sh: the part must be check, mutants or divergence, not '$PART'" >&2; exit 2; }
# Five laws: each mutant killed by one of them and survived by others, so the
# shards split kills, survivals and n/a pairs (the full suite's 12 laws add
# time, not cases of the merge).
M="mutants --mutants fused-post~result_clamp fused-post~no_m_safe --cases 10
   --properties TokensInRange SentinelEscapesVisibly PartialsAreFinite GreedyIsExact MaskedIdsNeverWin"
$R $M --json mfull.json --report mfull-report.json --matrix mfull.md > mfull.txt
for i in 0 1 2 3; do $R $M --shard $i/4 --json m$i.json > m$i.txt; done
$R merge m0.json m1.json m2.json m3.json --json mmerged.json --report mmerged-report.json --matrix mmerged.md
same mfull.json mmerged.json
cmp mfull-report.json mmerged-report.json
cmp mfull.md mmerged.md

# A shard of another run (a small check) is foreign to the mutants' shards.
$R check --kernels fused-post --properties TokensInRange --cases 2 --no-mutants --no-agreement --rows 2 --vocab 16 \
   --no-save-failures --shard 1/4 --json foreign.json > foreign.txt
refused m0.json foreign.json m2.json m3.json && grep -q "not shards of one run" out.txt
echo "shards (mutants): PASS"
