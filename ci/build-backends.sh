#!/usr/bin/env bash
# Compile-and-link check of the GPU backends (no GPU needed):
#   nvidia: nvcc from /usr/local/cuda, sm_90
#   amd:    Debian's hipcc (ROCm 5.2), gfx90a and gfx940
# Kernel tests of these builds skip without a device; run them on the GPU.
# Built here: the targets that compile or link device code (the command line
# and the kernel tests). Every other target is host C++ that the cpu build
# compiles with the same compiler and flags; a GPU run builds them all.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh --amd
targets=(raceoracle kernel_tests)
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
