#pragma once
/// HIP on the CPU: the subset of the HIP runtime and device language that
/// raceoracle's kernels use, so one kernel source compiles as host C++.
///
/// Every thread of a block is a fiber (Boost.Context) on one OS thread, so
/// `__syncthreads()` and warp exchanges keep their meaning: a fiber runs until
/// it reaches a barrier, then the next one runs. The order in which fibers
/// resume can be shuffled from a seed (hipcpu::config()), so a missing barrier
/// shows as a wrong answer instead of hiding behind one fixed schedule.
/// `__shared__` is `static thread_local`: one instance per OS thread, shared by
/// the fibers of the block that thread runs; declared through
/// HIPCPU_SHARED_ARRAY, its bytes are 0xFF when each block starts, and every
/// access through it is a point where the scheduler may set the thread aside
/// until nothing else in its block can run (Config::preempt_per_mille), as a
/// GPU may stall one warp between a barrier and its next shared load while
/// another runs ahead. Blocks run
/// in parallel over `config().workers` OS threads. Launches are synchronous.
/// The kernels' locals start as 0xFE bytes (the build's
/// -ftrivial-auto-var-init=pattern, CMakeLists.txt), as registers hold garbage.
#include <cmath>
#include <math.h>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "race/definition.h"
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __launch_bounds__(...)

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

enum hipError_t {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorInvalidConfiguration = 9,
  hipErrorLaunchFailure = 719,
};
enum hipMemcpyKind { hipMemcpyHostToHost, hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice, hipMemcpyDefault };
using hipStream_t = struct ihipStream_t*;
using hipEvent_t = struct ihipEvent_t*;

namespace hipcpu {

/// Process-wide settings of the CPU device. Change them between launches only.
/// Read once from HIPCPU_WARP_SIZE, HIPCPU_SCHEDULE_SEED, HIPCPU_PREEMPT (per
/// mille), HIPCPU_WORKERS.
struct Config {
  int warp_size = 64;                ///< 64 as on AMD Instinct, 32 as on NVIDIA
  /// 0: fibers resume in thread order. Otherwise a shuffle seeded per block
  /// and pass; on by default so that a missing barrier cannot hide behind
  /// one fixed schedule (tests/kernels/hip_cpu shows one that would).
  std::uint64_t schedule_seed = raceoracle::race::kCiSeed;
  /// At a thread's first access to a HIPCPU_SHARED_ARRAY after a barrier or
  /// a warp exchange, the chance in 1000 that the thread is set aside until
  /// every other thread of its block waits or has ended; then one set-aside
  /// thread, chosen at random, goes on. So a warp
  /// that reads a slot after a barrier can be overtaken by another that runs
  /// on to its next write of that slot: the races a barrier-to-barrier
  /// schedule cannot show (a second reduction reusing an array another warp
  /// has yet to read). Needs schedule_seed != 0; 0 turns it off.
  int preempt_per_mille = 250;
  int workers = 0;                   ///< OS threads running blocks; 0: all cores
};
Config& config();

namespace detail {
struct Fiber;
const dim3& thread_idx();
const dim3& block_idx();
const dim3& block_dim();
const dim3& grid_dim();
/// The running thread's lane and its block's warp size, kept current by the
/// scheduler at every fiber switch (read inline: every shuffle reads them).
extern thread_local int t_lane, t_warp_size;
inline int warp_size() { return t_warp_size; }
inline int lane_id() { return t_lane; }
void syncthreads();
/// Exchange within the calling thread's warp: every live lane publishes `v`,
/// then reads the value of lane `src` (its own when `src` is out of range).
std::uint64_t warp_exchange(std::uint64_t v, int src_lane);
void run_grid(dim3 grid, dim3 block, const std::function<void()>& body);
/// Fills `bytes` at `p` with 0xFF the first time the running block reaches it.
void fresh_shared(void* p, std::size_t bytes);
/// Where the scheduler may set the running thread aside (Config::preempt_per_mille).
void preempt_point();
}  // namespace detail

/// A pointer into a block's shared array whose every access (`[]`, `*`,
/// `->`) is first a preemption point. What HIPCPU_SHARED_ARRAY names; the
/// kernels pass it where a GPU build passes `T*` (kernels/device.h).
template <class T>
class SharedPtr {
 public:
  explicit SharedPtr(T* p) : p_(p) {}
  T& operator[](std::ptrdiff_t i) const {
    detail::preempt_point();
    return p_[i];
  }
  T& operator*() const {
    detail::preempt_point();
    return *p_;
  }
  T* operator->() const {
    detail::preempt_point();
    return p_;
  }
  SharedPtr operator+(std::ptrdiff_t i) const { return SharedPtr(p_ + i); }
  T* get() const { return p_; }

 private:
  T* p_;
};
/// The same bytes seen as U (a kernel that lays two reductions over one array).
template <class U, class T>
SharedPtr<U> shared_cast(SharedPtr<T> p) {
  return SharedPtr<U>(reinterpret_cast<U*>(p.get()));
}

template <class Kernel, class... Args>
void launch(Kernel* kernel, dim3 grid, dim3 block, std::size_t /*shared bytes*/, hipStream_t, Args&&... args) {
  auto bound = std::make_tuple(std::forward<Args>(args)...);
  detail::run_grid(grid, block, [&] { std::apply(kernel, bound); });
}

template <class T>
T shfl(T v, int src_lane) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = detail::warp_exchange(bits, src_lane);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

}  // namespace hipcpu

#define threadIdx (::hipcpu::detail::thread_idx())
#define blockIdx (::hipcpu::detail::block_idx())
#define blockDim (::hipcpu::detail::block_dim())
#define gridDim (::hipcpu::detail::grid_dim())
#define warpSize (::hipcpu::detail::warp_size())
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...) \
  ::hipcpu::launch(kernel, dim3(grid), dim3(block), shmem, stream __VA_OPT__(, ) __VA_ARGS__)

/// A block's shared array whose bytes are 0xFF (NaN as fp32 and bf16, -1 as an
/// integer) when each block starts, as a GPU's shared memory holds what the
/// last block left there: a read of a slot no thread of this block wrote
/// shows, where a plain `__shared__` here would read zeros or a past block's
/// values. `name` is a SharedPtr<T>: each access may be preempted.
#define HIPCPU_SHARED_ARRAY(T, name, n)                              \
  static thread_local T name##_storage[n];                           \
  ::hipcpu::detail::fresh_shared(name##_storage, sizeof(name##_storage)); \
  const ::hipcpu::SharedPtr<T> name(name##_storage)

inline void __syncthreads() { ::hipcpu::detail::syncthreads(); }

template <class T>
T __shfl_xor(T v, int lane_mask, int width = warpSize) {
  const int lane = ::hipcpu::detail::lane_id();
  const int src = (lane & ~(width - 1)) | ((lane % width) ^ lane_mask);
  return ::hipcpu::shfl(v, src);
}
template <class T>
T __shfl_down(T v, unsigned delta, int width = warpSize) {
  const int lane = ::hipcpu::detail::lane_id();
  const int src = (lane % width) + int(delta) < width ? lane + int(delta) : lane;
  return ::hipcpu::shfl(v, src);
}
template <class T>
T __shfl_up(T v, unsigned delta, int width = warpSize) {
  const int lane = ::hipcpu::detail::lane_id();
  const int src = (lane % width) >= int(delta) ? lane - int(delta) : lane;
  return ::hipcpu::shfl(v, src);
}
/// A fiber runs until it reaches a barrier or a warp exchange, so no other
/// thread of the block can interleave with a read-modify-write: a plain add
/// is atomic here.
template <class T>
T atomicAdd(T* p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
// expf, floorf, fmaxf: glibc's, from <math.h> (expf within 1 ulp).

// --- host runtime -----------------------------------------------------------
hipError_t hipMalloc(void** p, std::size_t bytes);
template <class T>
hipError_t hipMalloc(T** p, std::size_t bytes) { return hipMalloc(reinterpret_cast<void**>(p), bytes); }
hipError_t hipFree(void* p);
hipError_t hipMemcpy(void* dst, const void* src, std::size_t bytes, hipMemcpyKind);
hipError_t hipMemcpyAsync(void* dst, const void* src, std::size_t bytes, hipMemcpyKind, hipStream_t = nullptr);
hipError_t hipMemset(void* p, int value, std::size_t bytes);
hipError_t hipMemsetAsync(void* p, int value, std::size_t bytes, hipStream_t = nullptr);
hipError_t hipDeviceSynchronize();
hipError_t hipStreamCreate(hipStream_t* s);
hipError_t hipStreamDestroy(hipStream_t s);
hipError_t hipStreamSynchronize(hipStream_t s);
hipError_t hipEventCreate(hipEvent_t* e);
hipError_t hipEventDestroy(hipEvent_t e);
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s = nullptr);
hipError_t hipEventSynchronize(hipEvent_t e);
hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop);
hipError_t hipGetLastError();
hipError_t hipPeekAtLastError();
hipError_t hipGetDeviceCount(int* n);
const char* hipGetErrorString(hipError_t e);
