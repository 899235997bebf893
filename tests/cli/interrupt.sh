#!/bin/sh
# An interrupt keeps what a run found: `check` stopped once its first law
# has ended writes its report and its JUnit, marked partial, and exits
# 128 + the signal; `merge` refuses the partial report as a shard. (SIGTERM:
# a script's background job ignores SIGINT, and the handler leaves it so.)
# Usage: interrupt.sh RACEORACLE DIR PYTHON
set -eu
R=$1
DIR=$2
PY=$3
rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR"
$R check --kernels fused-post --no-mutants --no-agreement --no-save-failures --json r.json --junit r.xml > out.txt 2> err.txt &
pid=$!
i=0
until grep -q "\[1/" err.txt 2>/dev/null; do  # the first law ended (CTest's stderr is no terminal: a line a unit)
  i=$((i + 1))
  [ $i -lt 600 ] || { echo "interrupt test: no unit ended in 60 s"; kill $pid; exit 1; }
  sleep 0.1
done
kill -TERM $pid
set +e
wait $pid
rc=$?
set -e
cat out.txt err.txt
[ $rc -eq 143 ] || { echo "interrupt test: exit $rc, not 143 (128 + SIGTERM)"; exit 1; }
grep -q "verdict: INTERRUPTED" out.txt
"$PY" - <<'PYEOF'
import json
from xml.etree import ElementTree
r = json.load(open("r.json"))
assert r["partial"] is True and r["verdict"] == "INTERRUPTED", r["verdict"]
done = len(r["properties"])
assert 1 <= done < 13, done  # what ended before the interrupt, not every law
suites = ElementTree.parse("r.xml").getroot()
# every unit that ended, and one case in error saying the run was interrupted: no green page
assert int(suites.get("tests")) == done + 1, (suites.get("tests"), done)
assert int(suites.get("errors")) == 1, suites.get("errors")
assert suites.find(".//testcase[@name='interrupted']/error") is not None
print("partial report:", done, "units")
PYEOF
if $R merge r.json > merge.txt 2>&1; then echo "interrupt test: merge accepted a partial report"; exit 1; fi
grep -q "is a partial report" merge.txt
echo "interrupt test: PASS"
