#!/usr/bin/env bash
# The test suite under AddressSanitizer and UBSan (cpu backend). The
# production-shape kernel runs are left out: under ASan each takes minutes and
# the plain run already covers them.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu-asan >/dev/null
cmake --build --preset cpu-asan -j"$(nproc)"
ctest --preset cpu-asan -j"$(nproc)" -E ProductionShape
