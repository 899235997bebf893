#!/bin/sh
# The reports a CI run publishes, read as CI reads them. One step writes them
# (--junit and --html): a passing check, a failing sampler's check (a
# counterexample with its replay line; a law the sampler cannot serve), a
# mutant gate with a kill and a survivor, a divergence study, and a verify
# step's file with an unexplained chain (--html). Then:
#   junit: junitparser, a real JUnit reader, parses the XML;
#   html:  headless Chromium prints each page to PDF, and the text of the
#          rendered page (pdftotext) is asserted; screenshots of the failing
#          check's and the divergence study's pages are kept in DIR (out of
#          git) for a person to look at.
# Usage: ci_reports.sh write RACEORACLE DIR PYTHON  (a python3 with numpy)
#        ci_reports.sh junit DIR PYTHON             (a python3 with junitparser)
#        ci_reports.sh html DIR CHROMIUM PDFTOTEXT
set -eu
step=$1
shift
SRC=$(cd "$(dirname "$0")/../.." && pwd)

expect_exit() {  # expect_exit CODE COMMAND...: runs it, its output in out.txt
  want=$1
  shift
  set +e
  "$@" > out.txt 2>&1
  rc=$?
  set -e
  if [ $rc -ne "$want" ]; then cat out.txt; echo "ci reports: '$*' exited $rc, not $want"; exit 1; fi
}

case $step in
write)
  R=$1 DIR=$2 PY=$3
  rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR"
  expect_exit 0 $R check --kernels fused-post --no-mutants --no-agreement --laws TokensInRange GreedyIsExact --cases 10 \
    --no-save-failures --junit pass.xml --html pass.html
  expect_exit 1 $R check --sampler "$PY $SRC/tests/protocol/misbehaving_sampler.py zeros" --no-agreement \
    --laws AgreesWithOracle TokensInRange PartialsAreFinite --cases 10 --no-save-failures --junit fail.xml --html fail.html
  expect_exit 1 $R mutants --mutants fused-post~no_m_safe fused-post~stage2_one_pass --laws PartialsAreFinite \
    --no-corpus --random-only --cases 5 --junit gate.xml --html gate.html
  expect_exit 0 $R divergence --rows 64 --vocab 4096 --temperatures 0.1 1 --no-kernels --out divergence \
    --html divergence.html
  # A verify step's file whose second request claims a rejection that u = 0 rules out.
  PYTHONPATH="$SRC/python" "$PY" - <<'PYEOF'
import numpy as np
import raceoracle
R, k, V = 2, 1, 4
x = np.zeros((R, k + 1, V), np.float32)
x[:, :, 2] = 3.0
raceoracle.write_verify_dump("step.safetensors", x, np.full((R, k), 2, np.int32), None, np.zeros((R, k)),
                             np.ones((R, V), np.float32), np.ones((R, V), np.float32), np.ones(R, np.float32),
                             np.array([[2, 2], [1, -1]], np.int32), scaling_order="pre", scale_op="divide",
                             normalise="sum", stages=1, eps_rule="none")
PYEOF
  expect_exit 1 $R verify-step step.safetensors --html step.html
  echo "ci reports: written"
  ;;
junit)
  DIR=$1 PY=$2
  cd "$DIR"
  "$PY" - <<'PYEOF'
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
  ;;
html)
  DIR=$1 BROWSER=$2 PDFTOTEXT=$3
  cd "$DIR"
  browser() {  # browser PAGE OPTION...: headless Chromium on PAGE.html
    page=$1
    shift
    timeout 90 "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$DIR/profile" \
      "$@" "file://$DIR/$page.html" > "$page.browser.log" 2>&1 ||
      { cat "$page.browser.log"; echo "html test: Chromium failed on $page.html"; exit 1; }
  }
  render() {  # render PAGE: PAGE.pdf as Chromium prints PAGE.html, PAGE.txt the printed text
    browser "$1" --print-to-pdf="$1.pdf" --no-pdf-header-footer
    "$PDFTOTEXT" -layout "$1.pdf" "$1.txt"
  }
  screenshot() {  # screenshot PAGE: PAGE.png, a real PNG
    browser "$1" --screenshot="$1.png" --window-size=1200,1600
    head -c 8 "$1.png" | od -An -c | grep -q "P   N   G" || { echo "html test: $1.png is no PNG"; exit 1; }
  }
  expect_text() {  # expect_text PAGE TEXT...: each TEXT is on the rendered page
    page=$1
    shift
    for t in "$@"; do
      grep -qF -- "$t" "$page.txt" || { cat "$page.txt"; echo "html test: '$t' is not on the rendered $page page"; exit 1; }
    done
  }
  for page in pass fail gate divergence step; do render $page; done
  screenshot fail
  screenshot divergence
  expect_text pass "raceoracle check" "PASS" "TokensInRange" "GreedyIsExact" "input classes met" "fused-post"
  expect_text fail "FAIL" "AgreesWithOracle on misbehaving-zeros: FAILED" "kernel returned" "replay:" \
    "raceoracle replay --law AgreesWithOracle --sampler" "Laws the sampler cannot serve" "PartialsAreFinite" \
    "n/a: reads stage-1 partials"
  expect_text gate "raceoracle mutants" "FAIL" "the kill matrix" "fused-post~no_m_safe" "killed" \
    "fused-post~stage2_one_pass" "SURVIVED"
  expect_text divergence "raceoracle divergence" "PASS" "fp32 key error against its certified bound" \
    "post-scale: measured" "pre-scale: bound" "relative key error" "Disagreement rate" "95% upper end"
  expect_text step "raceoracle verify-step" "FAIL" "UNEXPLAINED" "request 1" "step.safetensors: 2 requests x 1 drafts"
  if grep -q "FAIL" pass.txt; then echo "html test: the passing check's page says FAIL"; exit 1; fi
  echo "html: 5 pages rendered, their text read; screenshots in $DIR/fail.png, $DIR/divergence.png"
  echo "html test: PASS"
  ;;
*) echo "ci_reports.sh: unknown step '$step' (write, junit, html)"; exit 2 ;;
esac
