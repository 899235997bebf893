#!/bin/sh
# A run killed with SIGKILL at any moment leaves nothing half-written: every
# corpus entry and report parses, and the next run starts clean. Eight
# `mutants --save-corpus --json` runs into a copy of the corpus, each killed
# at a random moment, then one run to its end. The runs hold the laws that
# kill their three mutants (mutants/CMakeLists.txt), so every run saves
# counterexamples and writes its report within the kills' span (a run takes
# about 3.3 s on 2 cores; the kills fall uniformly in 0.05-4 s).
# Usage: kill_test.sh RACEORACLE DIR PYTHON
set -eu
R=$1
DIR=$2
PY=$3
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$DIR" && mkdir -p "$DIR/data/properties" && cd "$DIR"
cp -r "$SRC/properties/corpus" data/properties/
export RACEORACLE_DATA_DIR="$DIR/data"
M="mutants --mutants fused-post~no_m_safe fused-post~result_clamp fused-post~tail_unmasked --save-corpus --cases 10 \
  --properties PartialsAreFinite SentinelEscapesVisibly TokensInRange"
parses() {  # every .json here and in the corpus is whole JSON
  "$PY" - "$@" <<'PYEOF'
import json, sys, glob
for p in sys.argv[1:] + glob.glob("data/properties/corpus/*.json"):
    try:
        json.load(open(p))
    except FileNotFoundError:
        pass
    except ValueError as e:
        sys.exit(f"{p}: not whole JSON after a kill: {e}")
PYEOF
}
i=0
while [ $i -lt 8 ]; do
  $R $M --json report.json > run.txt 2>&1 &
  pid=$!
  sleep "$("$PY" -c "import random; print(random.uniform(0.05, 4.0))")"
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  parses report.json
  i=$((i + 1))
done
$R $M --json report.json > final.txt 2>&1
parses report.json
test -s report.json
echo "kill test: PASS (8 kills, $(ls data/properties/corpus/*.json | wc -l) corpus entries)"
