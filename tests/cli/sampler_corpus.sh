#!/bin/sh
# An external sampler's failures are kept: a failing `check --sampler` saves
# its shrunk counterexample under .raceoracle/corpus/<sampler name> in the
# directory it runs from, the next run replays it first (its failure names
# the saved case), and --no-corpus runs without it.
# Usage: sampler_corpus.sh RACEORACLE DIR PYTHON (a python3 with numpy)
set -eu
R=$1
DIR=$2
PY=$3
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$DIR" && mkdir -p "$DIR/data/properties/corpus" && cd "$DIR"
export RACEORACLE_DATA_DIR="$DIR/data"  # no shared corpus: it would fail the sampler before the random search
S="$PY $SRC/tests/protocol/misbehaving_sampler.py zeros"
# --random-only: a failure of the random search is what gets saved (the built cases run every time anyway).
if $R check --sampler "$S" --laws AgreesWithOracle --no-agreement --random-only --cases 30 > first.txt 2>&1; then
  cat first.txt; echo "sampler corpus test: the zeros sampler passed"; exit 1
fi
grep -q "its corpus: $DIR/.raceoracle/corpus/misbehaving-zeros (0 saved cases" first.txt
saved=$(ls .raceoracle/corpus/misbehaving-zeros/AgreesWithOracle-*.json)
grep -q "saved to the regression corpus: $DIR/$saved" first.txt
if $R check --sampler "$S" --laws AgreesWithOracle --no-agreement --random-only --cases 30 --json second.json > second.txt 2>&1; then
  cat second.txt; exit 1
fi
grep -q "(1 saved cases, replayed first)" second.txt
grep -q "saved corpus case: found by raceoracle check on misbehaving-zeros" second.txt
"$PY" -c "import json; p = json.load(open('second.json'))['properties'][0]; assert p['cases'] == 1, p['cases']"
$R check --sampler "$S" --laws AgreesWithOracle --no-agreement --random-only --cases 30 --no-corpus > third.txt 2>&1 || true
if grep -q "saved corpus case" third.txt; then echo "sampler corpus test: --no-corpus replayed the corpus"; exit 1; fi
echo "sampler corpus test: PASS"
