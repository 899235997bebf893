#!/usr/bin/env bash
# Machine-made mutants (mutants/engine/README.md) on the cpu backend.
#   ci/mutation.sh                    the fixed CI sample: every sampled mutant detected or analysed
#   ci/mutation.sh --full [--seeds N] every mutant (the nightly job); --seeds adds the kill rate over seeds
# Extra arguments go to `mutate.py run` (--report FILE, --json FILE, --jobs N, ...).
# The sample does not run the mutants analysed as equivalent, nor the sanitizer
# pass on analysed survivors (neither can change its verdict); the sanitizer
# pass's build (cpu-asan preset) is made only when an unanalysed survivor needs it.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j"$(nproc)" --target raceoracle-schemata
asan_build="cmake --preset cpu-asan >/dev/null && cmake --build --preset cpu-asan -j$(nproc) --target raceoracle-schemata"
scope=(--sample 24 --skip-equivalent --sanitize-unanalysed)
if [[ "${1:-}" == --full ]]; then scope=(); shift; fi
exec python3 mutants/engine/mutate.py run --exe build/cpu/mutants/raceoracle-schemata \
  --mutants build/cpu/mutants/schemata/mutants.json \
  --asan-exe build/cpu-asan/mutants/raceoracle-schemata \
  --asan-mutants build/cpu-asan/mutants/schemata/mutants.json --asan-build "$asan_build" "${scope[@]}" "$@"
