#!/bin/sh
# Writes a CTest resource spec with one "gpus" entry per GPU this machine
# shows (nvidia-smi or rocm-smi), or N of them: `ctest --resource-spec-file`
# then runs GPU tests in parallel, one a GPU (cmake/raceoracle.cmake).
# Usage: ci/gpu-resources.sh [N] > gpus.json
set -eu
n=${1:-}
if [ -z "$n" ]; then
  if command -v nvidia-smi >/dev/null 2>&1; then n=$(nvidia-smi -L | grep -c '^GPU')
  elif command -v rocm-smi >/dev/null 2>&1; then n=$(rocm-smi --showid | grep -c 'GPU\[')
  else echo "no nvidia-smi or rocm-smi: give the GPU count" >&2; exit 2
  fi
fi
printf '{"version": {"major": 1, "minor": 0}, "local": [{"gpus": ['
i=0
while [ "$i" -lt "$n" ]; do
  [ "$i" -gt 0 ] && printf ', '
  printf '{"id": "%d", "slots": 1}' "$i"
  i=$((i + 1))
done
printf ']}]}\n'
