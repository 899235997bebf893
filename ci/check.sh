#!/usr/bin/env bash
# Sets up a fresh machine and runs the main job, `raceoracle check`, on the
# default backend: nvidia when nvcc and an NVIDIA GPU are present, else cpu.
# RACEORACLE_BACKEND=cpu|nvidia overrides; extra arguments go to `check`.
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${RACEORACLE_BACKEND:-}
if [[ -z "$backend" ]]; then
  backend=cpu
  if [[ -x /usr/local/cuda/bin/nvcc ]] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    backend=nvidia
  fi
fi
ci/install-deps.sh
extra=()
[[ "$backend" == nvidia ]] && extra=(-DCMAKE_BUILD_TYPE=Release)
cmake --preset "$backend" "${extra[@]}" >/dev/null
cmake --build --preset "$backend" -j"$(nproc)" --target raceoracle
echo "check: backend $backend"
exec "build/$backend/cli/raceoracle" check "$@"
