#!/usr/bin/env bash
# The test suite under AddressSanitizer and UBSan (cpu backend). Left out:
# the production-shape kernel runs (minutes each under ASan) and the mutant
# gate (defective kernels are meant to misbehave; the plain run gates them).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu-asan >/dev/null
cmake --build --preset cpu-asan -j"$(nproc)"
ctest --preset cpu-asan -j"$(nproc)" -E "ProductionShape|^Mutant\."
