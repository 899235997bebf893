// The HIP-on-CPU layer keeps the meaning of barriers, shared memory and warp
// exchanges. Each test launches a small kernel through hipLaunchKernelGGL.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kernels/hip_cpu/hip_runtime.h"
#include "kernels/hip_cpu/sanitizer.h"

namespace {

struct ScheduleGuard {  // restores the process-wide CPU device settings
  hipcpu::Config saved = hipcpu::config();
  ~ScheduleGuard() { hipcpu::config() = saved; }
};

/// Each thread publishes a value, then reads its lower neighbour's. Without
/// the barrier a thread may read the slot before the neighbour wrote it.
template <bool BARRIER>
__global__ void neighbour_kernel(int* out, int stamp) {
  __shared__ int slot[256];
  const int t = int(threadIdx.x);
  slot[t] = stamp + int(blockIdx.x) * 1000 + t;
  if (BARRIER) __syncthreads();
  out[blockIdx.x * blockDim.x + t] = slot[(t + int(blockDim.x) - 1) % int(blockDim.x)];
}

template <bool BARRIER>
int wrong_reads(int blocks, int threads, int stamp) {
  std::vector<int> out(std::size_t(blocks * threads), -1);
  hipLaunchKernelGGL(neighbour_kernel<BARRIER>, dim3(blocks), dim3(threads), 0, nullptr, out.data(), stamp);
  EXPECT_EQ(hipGetLastError(), hipSuccess);
  int wrong = 0;
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) wrong += out[std::size_t(b * threads + t)] != stamp + b * 1000 + (t + threads - 1) % threads;
  return wrong;
}

TEST(HipCpu, BarrierGivesTheRightAnswerUnderEverySchedule) {
  ScheduleGuard g;
  for (std::uint64_t seed : {0ull, 1ull, 2ull, 99ull}) {
    hipcpu::config().schedule_seed = seed;
    EXPECT_EQ(wrong_reads<true>(8, 256, int(seed) * 1000 + 7), 0) << "seed " << seed;
  }
}

TEST(HipCpu, MissingBarrierHidesBehindTheFixedScheduleButNotAShuffledOne) {
  // In thread order, thread t-1 has already written when thread t reads, so
  // the bug is invisible (only thread 0 misses: it reads the last thread's slot).
  ScheduleGuard g;
  hipcpu::config().schedule_seed = 0;
  EXPECT_EQ(wrong_reads<false>(4, 64, 5000), 4);  // thread 0 of each block
  hipcpu::config().schedule_seed = 12345;
  EXPECT_GT(wrong_reads<false>(4, 64, 6000), 40);  // about half the threads
}

__global__ void shared_per_block_kernel(int* out) {
  __shared__ int block_value;
  if (threadIdx.x == 0) block_value = int(blockIdx.x) * 10 + 3;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = block_value;
  __syncthreads();
}

TEST(HipCpu, SharedMemoryIsPerBlockAcrossParallelWorkers) {
  ScheduleGuard g;
  hipcpu::config().workers = 2;
  hipcpu::config().schedule_seed = 3;
  const int blocks = 64, threads = 128;
  std::vector<int> out(blocks * threads);
  hipLaunchKernelGGL(shared_per_block_kernel, dim3(blocks), dim3(threads), 0, nullptr, out.data());
  ASSERT_EQ(hipGetLastError(), hipSuccess);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) ASSERT_EQ(out[b * threads + t], b * 10 + 3) << b << "," << t;
}

/// Two block sums over one shared array, each warp's lane 0 publishing its
/// term: 1 + warp, then 100. Between every thread's reads of the first and
/// the second's writes there is a warp exchange and, with BARRIER, a
/// barrier. Without it a warp can run on and overwrite a slot another warp
/// has yet to read, as on a GPU.
template <bool BARRIER>
__global__ void reused_array_kernel(int* first) {
  HIPCPU_SHARED_ARRAY(int, slot, 32);
  const int w = warpSize, warp = int(threadIdx.x) / w, lane = int(threadIdx.x) % w, warps = int(blockDim.x) / w;
  if (lane == 0) slot[warp] = 1 + warp;
  __syncthreads();
  int sum = 0;
  for (int k = 0; k < warps; ++k) sum += slot[k];
  first[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (BARRIER) __syncthreads();
  const int x = __shfl_xor(lane, 1);  // the second reduction's warp step
  if (lane == 0) slot[warp] = 100 + x;
  __syncthreads();
}

template <bool BARRIER>
int wrong_first_sums(int per_mille) {
  ScheduleGuard g;
  hipcpu::config().preempt_per_mille = per_mille;
  const int blocks = 16, threads = 256, warps = threads / hipcpu::config().warp_size;
  std::vector<int> first(std::size_t(blocks * threads), -1);
  hipLaunchKernelGGL(reused_array_kernel<BARRIER>, dim3(blocks), dim3(threads), 0, nullptr, first.data());
  EXPECT_EQ(hipGetLastError(), hipSuccess);
  int wrong = 0;
  for (int v : first) wrong += v != warps * (warps + 1) / 2;
  return wrong;
}

TEST(HipCpu, PreemptionAtSharedAccessesShowsAnArrayReusedWithoutABarrier) {
  // Barrier to barrier, every thread reads the first sum's slots before any
  // warp passes its exchange: the race cannot show.
  EXPECT_EQ(wrong_first_sums<false>(0), 0);
  // Set aside at its first read, a thread reads after other warps wrote.
  EXPECT_GT(wrong_first_sums<false>(250), 0);
  // With the barrier, no schedule is wrong.
  EXPECT_EQ(wrong_first_sums<true>(250), 0);
  EXPECT_EQ(wrong_first_sums<true>(1000), 0);
}

/// Thread 0 reads a slot before and after writing it: the first read must see
/// the fill, in every block (not a zero, nor what an earlier block wrote).
__global__ void fresh_shared_kernel(unsigned* out) {
  HIPCPU_SHARED_ARRAY(unsigned, slots, 4);
  __syncthreads();
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = slots[3];
    slots[3] = blockIdx.x;
    out[2 * blockIdx.x + 1] = slots[3];
  }
  __syncthreads();
}

TEST(HipCpu, SharedArraysStartAsGarbageInEveryBlock) {
  ScheduleGuard g;
  hipcpu::config().workers = 1;  // every block on one OS thread: its arrays are reused
  const int blocks = 5;
  std::vector<unsigned> out(2 * blocks);
  hipLaunchKernelGGL(fresh_shared_kernel, dim3(blocks), dim3(64), 0, nullptr, out.data());
  ASSERT_EQ(hipGetLastError(), hipSuccess);
  for (int b = 0; b < blocks; ++b) {
    EXPECT_EQ(out[2 * b], 0xFFFFFFFFu) << "block " << b;
    EXPECT_EQ(out[2 * b + 1], unsigned(b)) << "block " << b;
  }
}

#if HIPCPU_ASAN
TEST(HipCpuDeathTest, ReadOnePastAnAllocationIsReportedUnderASan) {
  // hipMalloc rounds to 256 bytes; the rounding must not hide the over-read.
  void* p = nullptr;
  ASSERT_EQ(hipMalloc(&p, 4 * sizeof(float)), hipSuccess);
  const volatile float* f = static_cast<const float*>(p);
  EXPECT_DEATH((void)f[4], "AddressSanitizer");
  (void)f[3];  // the last float asked for stays readable
  EXPECT_EQ(hipFree(p), hipSuccess);
}
#endif

__global__ void warp_sum_kernel(int* out) {
  int v = int(threadIdx.x);
  for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_xor(v, off);
  const int down = __shfl_down(int(threadIdx.x) * 2, 1);
  out[2 * threadIdx.x] = v;
  out[2 * threadIdx.x + 1] = down;
}

TEST(HipCpu, WarpExchangeAtBothWarpSizes) {
  ScheduleGuard g;
  for (int ws : {32, 64}) {
    hipcpu::config().warp_size = ws;
    hipcpu::config().schedule_seed = 77;
    const int threads = 128;
    std::vector<int> out(2 * threads);
    hipLaunchKernelGGL(warp_sum_kernel, dim3(1), dim3(threads), 0, nullptr, out.data());
    ASSERT_EQ(hipGetLastError(), hipSuccess);
    for (int t = 0; t < threads; ++t) {
      const int first = t / ws * ws;
      const int sum = ws * first + ws * (ws - 1) / 2;  // lanes first .. first + ws - 1
      EXPECT_EQ(out[2 * t], sum) << "warp size " << ws << " thread " << t;
      const int lane = t % ws;
      EXPECT_EQ(out[2 * t + 1], lane + 1 < ws ? 2 * (t + 1) : 2 * t) << "warp size " << ws << " thread " << t;
    }
  }
}

__global__ void divergent_barrier_kernel(int* out) {
  if (threadIdx.x == 0) __syncthreads();  // undefined on a GPU: only some threads arrive
  out[threadIdx.x] = 1;
}

TEST(HipCpu, DivergentBarrierIsALaunchFailureNotAHang) {
  std::vector<int> out(64);
  hipLaunchKernelGGL(divergent_barrier_kernel, dim3(1), dim3(64), 0, nullptr, out.data());
  EXPECT_EQ(hipGetLastError(), hipErrorLaunchFailure);
}

TEST(HipCpu, BadLaunchConfigurationIsReported) {
  std::vector<int> out(2048);
  hipLaunchKernelGGL(divergent_barrier_kernel, dim3(1), dim3(2048), 0, nullptr, out.data());
  EXPECT_EQ(hipGetLastError(), hipErrorInvalidConfiguration);
  EXPECT_EQ(hipGetLastError(), hipSuccess);  // reading the error clears it
}

TEST(HipCpu, EventsMeasureElapsedTime) {
  hipEvent_t a, b;
  ASSERT_EQ(hipEventCreate(&a), hipSuccess);
  ASSERT_EQ(hipEventCreate(&b), hipSuccess);
  hipEventRecord(a);
  std::vector<int> out(64 * 64);
  hipLaunchKernelGGL(shared_per_block_kernel, dim3(64), dim3(64), 0, nullptr, out.data());
  hipEventRecord(b);
  float ms = -1;
  EXPECT_EQ(hipEventElapsedTime(&ms, a, b), hipSuccess);
  EXPECT_GE(ms, 0.0f);
  hipEventDestroy(a);
  hipEventDestroy(b);
}

}  // namespace
