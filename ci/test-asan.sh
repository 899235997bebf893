#!/usr/bin/env bash
# The test suite under AddressSanitizer and UBSan (cpu backend). Left out:
# the production-shape kernel runs (minutes each under ASan), the mutant gate
# (defective kernels are meant to misbehave; the plain run gates them) and the
# Python samplers' runs (the plain run has them; the protocol's own tests,
# misbehaving samplers included, run here).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu-asan >/dev/null
cmake --build --preset cpu-asan -j"$(nproc)"
ctest --preset cpu-asan -j"$(nproc)" -E "ProductionShape|^Mutant\.|^Samplers\.|^SamplerMutant\."
