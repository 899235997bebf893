#!/usr/bin/env bash
# Sets up a fresh machine and passes every test on the cpu backend.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j"$(nproc)"
ctest --preset cpu -j"$(nproc)"
