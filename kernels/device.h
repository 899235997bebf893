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
#include <cstdlib>

/// Device code compiled by nvcc for an NVIDIA GPU (not the cpu layer).
#if defined(__CUDACC__) && !defined(RACEORACLE_BACKEND_CPU)
#define RACEORACLE_CUDA_DEVICE 1
#endif

/// A block's shared array: `RACEORACLE_SHARED(T, name, n);`, passed on as a
/// device::SharedPtr<T>. On the cpu layer its bytes start as 0xFF in every
/// block, as garbage does on a GPU, and each access may be preempted
/// (hipcpu::SharedPtr).
#if defined(RACEORACLE_BACKEND_CPU)
#define RACEORACLE_SHARED(T, name, n) HIPCPU_SHARED_ARRAY(T, name, n)
#else
#define RACEORACLE_SHARED(T, name, n) __shared__ T name[n]
#endif

namespace raceoracle::kernels::device {

/// A pointer into shared memory: T* on a GPU, the cpu layer's preempting pointer there.
#if defined(RACEORACLE_BACKEND_CPU)
template <class T>
using SharedPtr = hipcpu::SharedPtr<T>;
using hipcpu::shared_cast;
#else
template <class T>
using SharedPtr = T*;
/// The same shared bytes seen as U.
template <class U, class T>
__device__ __forceinline__ U* shared_cast(T* p) {
  return reinterpret_cast<U*>(p);
}
#endif

/// Lanes in a warp: a constant on NVIDIA, where nvcc reads `warpSize` from a
/// register (so that `/ warpSize` costs a full integer division, about 30
/// instructions a thread); the runtime's value elsewhere (AMD: 32 or 64 by
/// target; the cpu layer: either, as a test sets it).
__device__ __forceinline__ int warp_size() {
#if defined(RACEORACLE_CUDA_DEVICE)
  return 32;
#else
  return warpSize;
#endif
}

/// Butterfly exchange within a warp (every lane participates).
template <class T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
#if defined(RACEORACLE_CUDA_DEVICE)
  return __shfl_xor_sync(0xffffffffu, v, lane_mask);
#else
  return __shfl_xor(v, lane_mask);
#endif
}

/// Lane `lane - delta`'s value (the lane's own where that is below 0), within
/// a warp (every lane participates).
template <class T>
__device__ __forceinline__ T shfl_up(T v, unsigned delta) {
#if defined(RACEORACLE_CUDA_DEVICE)
  return __shfl_up_sync(0xffffffffu, v, delta);
#else
  return __shfl_up(v, delta);
#endif
}

/// Approximations the stage-1 screen ranks candidates with (fused.hip); no
/// key that is stored comes from them. Their documented accuracy is what the
/// screen's proof uses:
///   exp2_approx: PTX ex2.approx.ftz.f32, 2 ulp, a subnormal result flushed
///                to 0 (one MUFU.EX2; exp2f adds the scaling that keeps
///                subnormals); glibc's and OCML's exp2f on the cpu and amd
///                backends, within 1 ulp.
///   rcp_approx:  PTX rcp.approx.ftz.f32, 1 ulp for normal b, a subnormal
///                result flushed to 0 (b > 2^126); v_rcp_f32, 1 ulp, on amd;
///                correctly rounded on cpu.
__device__ __forceinline__ float exp2_approx(float x) {
#if defined(RACEORACLE_CUDA_DEVICE)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return exp2f(x);
#endif
}
__device__ __forceinline__ float rcp_approx(float b) {
#if defined(RACEORACLE_BACKEND_CPU)
  return 1.0f / b;
#elif defined(__CUDACC__)
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(b));
  return r;
#else
  return __builtin_amdgcn_rcpf(b);
#endif
}

/// Programmatic dependent launch (NVIDIA sm_90 and later; a no-op elsewhere).
/// A grid launched with launch_chained may start while the grid before it in
/// the stream still runs: it must call wait_for_prior_grid before touching
/// memory that grid reads or writes (the wait returns once that grid has
/// finished and its writes are visible). allow_next_grid lets the next
/// chained grid be scheduled early; it makes no memory promise.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(RACEORACLE_CUDA_DEVICE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_grid() {
#if defined(RACEORACLE_CUDA_DEVICE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// The stream kernels launch on: the default stream, or the one a
/// kernels::LaunchStream (device_memory.h) made current on this thread.
hipStream_t launch_stream();

/// Launches `kernel` on launch_stream(), chained to the grid before it
/// (see wait_for_prior_grid) where the platform supports it. Setting
/// RACEORACLE_UNCHAINED=1 launches plainly instead (to measure what chaining
/// gives; the results are the same).
template <class... Params, class... Args>
hipError_t launch_chained(void (*kernel)(Params...), dim3 grid, dim3 block, Args... args) {
#if defined(RACEORACLE_CUDA_DEVICE)
  static const bool unchained = [] {
    const char* e = std::getenv("RACEORACLE_UNCHAINED");
    return e && *e && *e != '0';
  }();
  if (unchained) {
    kernel<<<grid, block, 0, launch_stream()>>>(args...);
    return cudaGetLastError();
  }
  cudaLaunchAttribute chain[1];
  chain[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  chain[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.attrs = chain;
  config.numAttrs = 1;
  config.stream = launch_stream();
  return cudaLaunchKernelEx(&config, kernel, args...);
#else
  hipLaunchKernelGGL(kernel, grid, block, 0, launch_stream(), args...);
  return hipGetLastError();
#endif
}

/// Warp-wide max (MAX) or min of an unsigned value; every lane gets it.
template <bool MAX>
__device__ __forceinline__ unsigned warp_extreme(unsigned v) {
#if defined(RACEORACLE_CUDA_DEVICE)
  return MAX ? __reduce_max_sync(0xffffffffu, v) : __reduce_min_sync(0xffffffffu, v);
#else
  for (int m = warp_size() / 2; m > 0; m /= 2) {
    const unsigned w = shfl_xor(v, m);
    v = (MAX ? w > v : w < v) ? w : v;
  }
  return v;
#endif
}
__device__ __forceinline__ unsigned warp_max(unsigned v) { return warp_extreme<true>(v); }
__device__ __forceinline__ unsigned warp_min(unsigned v) { return warp_extreme<false>(v); }

/// 16 or 8 bytes loaded as one vector instruction (the pointer must be
/// aligned to the size).
struct alignas(16) Bytes16 {
  unsigned w[4];
};
struct alignas(8) Bytes8 {
  unsigned w[2];
};

/// A vector load of kernel input (logits, noise): on NVIDIA
/// `ld.global.nc.L1::no_allocate`, as each byte is read once and an L1 line
/// would only evict another (fused-post 5-7% faster on the H200,
/// bench/README.md "Streaming loads"); a plain load elsewhere. `.nc` needs
/// the data read-only while the kernel reads it: the kernels never write
/// their inputs, and read them only once the grid that wrote them has
/// finished (stream order; for a chained launch, wait_for_prior_grid).
/// Volatile, so that no load moves above that wait.
__device__ __forceinline__ Bytes16 load_streaming(const Bytes16* p) {
#if defined(RACEORACLE_CUDA_DEVICE)
  Bytes16 b;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(b.w[0]), "=r"(b.w[1]), "=r"(b.w[2]), "=r"(b.w[3])
               : "l"(p));
  return b;
#else
  return *p;
#endif
}
__device__ __forceinline__ Bytes8 load_streaming(const Bytes8* p) {
#if defined(RACEORACLE_CUDA_DEVICE)
  Bytes8 b;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(b.w[0]), "=r"(b.w[1]) : "l"(p));
  return b;
#else
  return *p;
#endif
}

}  // namespace raceoracle::kernels::device
