#!/usr/bin/env bash
# Compile-and-link check of the GPU backends (no GPU needed):
#   nvidia: nvcc from /usr/local/cuda, sm_90, the real kernels alone
#   amd:    Debian's hipcc (ROCm 5.2), gfx90a and gfx940, every kernel and named mutant, at -O1
# Built here: the device code (the kernels library: fused.hip's parts,
# baseline.hip, device_memory.hip) linked into raceoracle-kernels, which
# holds the kernels (and mutants) and none of the judge. The named mutants
# are template instantiations of the kernels, most of their compile time:
# hipcc builds them here, as AMD GPUs are not run; nvcc builds them in every
# GPU run, which runs them (docs/GPU.md), so its check here is the real
# kernels' (RACEORACLE_MUTANTS=OFF): the stage 218 -> 155 s on a clean clone.
# hipcc compiles at -O1 (RACEORACLE_HIPCC_OPT; -O3 in a build to run): the
# same front end, AMDGPU code generator and link for both targets, without the
# loop and inlining work at -O3 that no check here needs; 152 -> 99 s for the
# amd build alone on 2 cores (the verify kernels 43 -> 28 s). Every other target is
# host C++ that no backend changes (only kernels/ reads the backend's macros)
# and that the cpu build compiles with the same compiler and flags; a GPU run
# builds them all (docs/GPU.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh --amd
targets=(raceoracle-kernels)
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  cmake --preset nvidia -DCMAKE_BUILD_TYPE=Release -DRACEORACLE_MUTANTS=OFF >/dev/null
  cmake --build --preset nvidia -j"$(nproc)" --target "${targets[@]}"
  echo "build-backends: nvidia OK"
else
  echo "build-backends: /usr/local/cuda/bin/nvcc not found: nvidia build check FAILED" >&2
  exit 1
fi
cmake --preset amd -DCMAKE_BUILD_TYPE=Release -DRACEORACLE_HIPCC_OPT=-O1 >/dev/null
cmake --build --preset amd -j"$(nproc)" --target "${targets[@]}"
echo "build-backends: amd OK"
