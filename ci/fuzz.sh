#!/usr/bin/env bash
# Builds the libFuzzer targets (cmake --preset fuzz: clang-14, ASan + UBSan)
# and runs each on its kept corpus (fuzz/corpus/<target>) for SECONDS
# (default 30), two at a time. Inputs that reach new code go to
# build/fuzz/corpus/<target> (merge them into the kept corpus with
# `fuzz_<target> -merge=1 fuzz/corpus/<target> build/fuzz/corpus/<target>`);
# a crash leaves crash-* in build/fuzz/artifacts/ and fails.
#   ci/fuzz.sh            the CI budget
#   ci/fuzz.sh 600        the deep run (docs/RELIABILITY.md records one)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
ci/install-deps.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
mkdir -p build/fuzz/artifacts build/fuzz/logs
targets=(safetensors_reader sampler_reply case_reader cli_args oracle_decide)
run() {
  local t="$1"
  mkdir -p "build/fuzz/corpus/$t"
  if build/fuzz/fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build/fuzz/artifacts/$t-" "build/fuzz/corpus/$t" "fuzz/corpus/$t" >"build/fuzz/logs/$t.log" 2>&1; then
    echo "fuzz $t: $(grep -E '^stat::number_of_executed_units' "build/fuzz/logs/$t.log" | awk '{print $2}') runs," \
         "$(grep -oE 'cov: [0-9]+' "build/fuzz/logs/$t.log" | tail -1) edges, 0 crashes in ${seconds} s"
  else
    echo "fuzz $t: FAILED (build/fuzz/logs/$t.log):" >&2
    grep -E "ERROR|SUMMARY|Test unit written" "build/fuzz/logs/$t.log" >&2 || tail -20 "build/fuzz/logs/$t.log" >&2
    return 1
  fi
}
export -f run
export seconds
printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c 'run {}'
