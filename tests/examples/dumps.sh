#!/bin/sh
# The examples' dumps through divergence and verify, as a user runs them:
# two samplers' tokens on the same inputs compare with no unexplained
# difference, a broken sampler's do not; a Zipf-like logits file feeds `divergence --logits`; torch's
# exponential_ passes the noise report and a truncated tail is named.
# usage: dumps.sh PYTHON RACEORACLE EXAMPLES_DIR WORK_DIR
set -eu
py=$1 ro=$2 ex=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
w="$py $ex/write_race_safetensors.py"
$w logits zipf.safetensors --rows 8 --vocab 8192
$w dump torch.safetensors --sampler torch --rows 32 --vocab 8192
$w dump numpy.safetensors --sampler numpy --rows 32 --vocab 8192
$w dump broken.safetensors --sampler noise_wrong_row --rows 32 --vocab 8192
$w dump truncated.safetensors --noise truncated --rows 64 --vocab 32768

"$ro" divergence torch.safetensors numpy.safetensors --out cmp | tee cmp.txt
grep -q "verdict: PASS" cmp.txt
# a sampler that reads the previous row's noise differs, unexplained, and fails the run
if "$ro" divergence torch.safetensors broken.safetensors --out broken > broken.txt; then
  cat broken.txt; echo "the broken sampler's dump compared clean"; exit 1
fi
cat broken.txt
grep -q "verdict: FAIL" broken.txt
"$ro" divergence --logits zipf.safetensors --rows 16 --temperatures 0.7 1 --no-kernels --out div | tee div.txt
grep -q "zipf.safetensors (rows reused" div.txt
"$ro" verify torch.safetensors | tee torch.txt
if grep -q "NOT Exp(1)" torch.txt; then echo "torch's exponential_ flagged as not Exp(1)"; exit 1; fi
"$ro" verify truncated.safetensors --json truncated.json | tee truncated.txt
grep -q "NOT Exp(1)" truncated.txt || { echo "the truncated tail was not flagged"; exit 1; }
grep -q "largest 9.20" truncated.txt
echo "dumps: OK"
