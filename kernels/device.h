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

/// a / b from one reciprocal approximation and one multiply: the cheap
/// division the stage-1 race screens its candidates with (never a key that is
/// stored). Relative error at most 2^-22 (2 ulp) while b is in [2^-126,
/// 2^126] and the result normal; the screen's proof (fused.hip) rests on that.
__device__ __forceinline__ float approx_div(float a, float b) {
#if defined(RACEORACLE_BACKEND_CPU)
  return a * (1.0f / b);  // two roundings: within 2^-23
#elif defined(__CUDACC__)
  return __fdividef(a, b);  // MUFU.RCP + FMUL; CUDA: 2 ulp for |b| in [2^-126, 2^126]
#else
  return a * __builtin_amdgcn_rcpf(b);  // v_rcp_f32: 1 ulp
#endif
}

}  // namespace raceoracle::kernels::device
