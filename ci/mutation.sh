#!/usr/bin/env bash
# Machine-made mutants (mutants/engine/README.md) on the cpu backend.
#   ci/mutation.sh                    the fixed CI sample: every sampled mutant detected or analysed
#   ci/mutation.sh --full [--seeds N] every mutant (the nightly job); --seeds adds the kill rate over seeds
# Extra arguments go to `mutate.py run` (--report FILE, --json FILE, --jobs N, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
for preset in cpu cpu-asan; do  # cpu-asan: the sanitizer pass over the survivors
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j"$(nproc)" --target raceoracle-schemata
done
scope=(--sample 24)
if [[ "${1:-}" == --full ]]; then scope=(); shift; fi
exec python3 mutants/engine/mutate.py run --exe build/cpu/mutants/raceoracle-schemata \
  --mutants build/cpu/mutants/schemata/mutants.json \
  --asan-exe build/cpu-asan/mutants/raceoracle-schemata \
  --asan-mutants build/cpu-asan/mutants/schemata/mutants.json "${scope[@]}" "$@"
