#!/usr/bin/env bash
# Builds the libFuzzer targets (they live in the cpu-asan tree: clang-14,
# ASan + UBSan, the tree ci/test-asan.sh tests, so after it this builds
# nothing) and runs each on its kept corpus (fuzz/corpus/<target>) for SECONDS
# (default 30), two at a time. Inputs that reach new code go to
# build/fuzz-run/corpus/<target> (merge them into the kept corpus with
# `fuzz_<target> -merge=1 fuzz/corpus/<target> build/fuzz-run/corpus/<target>`);
# a crash leaves crash-* in build/fuzz-run/artifacts/ and fails.
#   ci/fuzz.sh            the CI budget
#   ci/fuzz.sh 600        the deep run (docs/RELIABILITY.md records one)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
ci/install-deps.sh
cmake --preset cpu-asan >/dev/null
cmake --build --preset cpu-asan --target fuzzers -j"$(nproc)"
out=build/fuzz-run
mkdir -p $out/artifacts $out/logs
targets=(safetensors_reader sampler_reply case_reader cli_args oracle_decide divergence_state)
run() {
  local t="$1"
  mkdir -p "$out/corpus/$t"
  if build/cpu-asan/fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/$t-" "$out/corpus/$t" "fuzz/corpus/$t" >"$out/logs/$t.log" 2>&1; then
    echo "fuzz $t: $(grep -E '^stat::number_of_executed_units' "$out/logs/$t.log" | awk '{print $2}') runs," \
         "$(grep -oE 'cov: [0-9]+' "$out/logs/$t.log" | tail -1) edges, 0 crashes in ${seconds} s"
  else
    echo "fuzz $t: FAILED ($out/logs/$t.log):" >&2
    grep -E "ERROR|SUMMARY|Test unit written" "$out/logs/$t.log" >&2 || tail -20 "$out/logs/$t.log" >&2
    return 1
  fi
}
export -f run
export seconds out
printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c 'run {}'
