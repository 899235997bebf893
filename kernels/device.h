#pragma once
/// One kernel source, three backends: pick the HIP (or HIP-like) runtime.
///   RACEORACLE_BACKEND_CPU : the project's HIP-on-CPU layer (hip_cpu/)
///   __CUDACC__             : nvcc; HIP calls mapped onto CUDA (hip_nvidia.h)
///   otherwise              : hipcc and the real HIP runtime
#if defined(RACEORACLE_BACKEND_CPU)
#include "kernels/hip_cpu/hip_runtime.h"
#elif defined(__CUDACC__)
#include "kernels/hip_nvidia.h"
#else
#include <hip/hip_runtime.h>
#endif
#include <cmath>

namespace raceoracle::kernels::device {

/// Butterfly exchange within a warp (every lane participates).
template <class T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
#if defined(__CUDACC__) && !defined(RACEORACLE_BACKEND_CPU)
  return __shfl_xor_sync(0xffffffffu, v, lane_mask);
#else
  return __shfl_xor(v, lane_mask);
#endif
}

}  // namespace raceoracle::kernels::device
