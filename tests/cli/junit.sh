#!/bin/sh
# --junit as a CI system reads it: junitparser (a real JUnit reader) parses
# the reports of a passing check, of a failing sampler's check (its failure
# text holds the counterexample and the replay line; a law the sampler
# cannot serve is skipped) and of a mutant gate with a kill and a survivor.
# Usage: junit.sh RACEORACLE DIR PYTHON (a python3 with junitparser and numpy)
set -eu
R=$1
DIR=$2
PY=$3
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR"
expect_exit() {  # expect_exit CODE COMMAND...: runs it, its output in out.txt
  want=$1
  shift
  set +e
  "$@" > out.txt 2>&1
  rc=$?
  set -e
  if [ $rc -ne "$want" ]; then cat out.txt; echo "junit test: '$*' exited $rc, not $want"; exit 1; fi
}
expect_exit 0 $R check --kernels fused-post --no-mutants --no-agreement --laws TokensInRange GreedyIsExact --cases 10 \
  --no-save-failures --junit pass.xml
expect_exit 1 $R check --sampler "$PY $SRC/tests/protocol/misbehaving_sampler.py zeros" --no-agreement \
  --laws AgreesWithOracle TokensInRange PartialsAreFinite --cases 10 --junit fail.xml
expect_exit 1 $R mutants --mutants fused-post~no_m_safe fused-post~stage2_one_pass --laws PartialsAreFinite \
  --no-corpus --random-only --cases 5 --junit gate.xml
"$PY" - <<'PYEOF'
import sys
from junitparser import JUnitXml, Failure, Skipped

def cases(path):
    xml = JUnitXml.fromfile(path)
    return xml, {(c.classname, c.name): c for suite in xml for c in suite}

def outcome(case):
    kinds = [type(r) for r in case.result]
    return "failed" if Failure in kinds else "skipped" if Skipped in kinds else "passed"

xml, got = cases("pass.xml")
assert set(got) == {("fused-post", "TokensInRange"), ("fused-post", "GreedyIsExact")}, got
assert all(outcome(c) == "passed" for c in got.values()) and xml.failures == 0 and xml.tests == 2, xml

xml, got = cases("fail.xml")
by_law = {name: c for (_, name), c in got.items()}
assert outcome(by_law["AgreesWithOracle"]) == "failed", by_law
failure = by_law["AgreesWithOracle"].result[0]
assert "AgreesWithOracle" in failure.message and "replay: raceoracle replay" in failure.text, (failure.message, failure.text)
assert "\n" in failure.text  # the counterexample's lines survive the XML
assert outcome(by_law["TokensInRange"]) == "passed"
assert outcome(by_law["PartialsAreFinite"]) == "skipped" and "n/a" in by_law["PartialsAreFinite"].result[0].message
assert xml.failures == 1 and xml.skipped == 1, (xml.failures, xml.skipped)

xml, got = cases("gate.xml")
assert outcome(got[("mutant gate", "fused-post~no_m_safe")]) == "passed", got
survivor = got[("mutant gate", "fused-post~stage2_one_pass")]
assert outcome(survivor) == "failed" and "survived every law" in survivor.result[0].message, survivor
print("junit: every report parsed,", sum(1 for p in ("pass.xml", "fail.xml", "gate.xml") for s in JUnitXml.fromfile(p) for c in s),
      "testcases")
PYEOF
echo "junit test: PASS"
