#!/usr/bin/env bash
# Compile-and-link check of the GPU backends (no GPU needed):
#   nvidia: nvcc from /usr/local/cuda, sm_90
#   amd:    Debian's hipcc (ROCm 5.2), gfx90a and gfx940
# Built here: the device code (the kernels library: fused.hip's parts,
# baseline.hip, device_memory.hip) linked into raceoracle-kernels, which
# holds every kernel and mutant and none of the judge. Every other target is
# host C++ that no backend changes (only kernels/ reads the backend's macros)
# and that the cpu build compiles with the same compiler and flags; a GPU run
# builds them all (docs/GPU.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh --amd
targets=(raceoracle-kernels)
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  cmake --preset nvidia -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build --preset nvidia -j"$(nproc)" --target "${targets[@]}"
  echo "build-backends: nvidia OK"
else
  echo "build-backends: /usr/local/cuda/bin/nvcc not found: nvidia build check FAILED" >&2
  exit 1
fi
cmake --preset amd -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build --preset amd -j"$(nproc)" --target "${targets[@]}"
echo "build-backends: amd OK"
