#!/usr/bin/env bash
# The inner loop (a few minutes after one build): the tests the sanitizer
# pass runs (every unit test; each law on 10 random cases besides the corpus
# and the coverage matrix, input classes reported rather than required),
# without the sanitizers. The full gate is ci/test.sh; .ci/run is all of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j"$(nproc)"
ctest --preset quick -j"$(nproc)" "$@"
