#!/usr/bin/env bash
# Sets up a fresh machine and runs the main job: `raceoracle check` on the
# default backend. Extra arguments go to `raceoracle check`.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j"$(nproc)" --target raceoracle
exec build/cpu/cli/raceoracle check "$@"
