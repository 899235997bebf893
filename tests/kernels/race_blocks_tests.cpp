// The race kernels' building blocks on their own (kernels/race.h), as CUB
// tests its block primitives: the order-preserving key map, the fold a thread
// runs over its items, and the block reductions (best, max, top two) at
// thread counts that are not multiples of the warp, under both warp sizes.
// cpu backend: the blocks are device functions, launched here through the
// HIP-on-CPU layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/race.h"

namespace raceoracle::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct ScheduleGuard {  // restores the process-wide CPU device settings
  hipcpu::Config saved = hipcpu::config();
  ~ScheduleGuard() { hipcpu::config() = saved; }
};

/// Floats across every binade and sign, with the values the race meets at its
/// edges: infinities, zeros of both signs, subnormals, the largest finite.
std::vector<float> edge_floats() {
  std::vector<float> v{-kInf, -std::numeric_limits<float>::max(), -1.0f, -std::numeric_limits<float>::min(),
                       -std::numeric_limits<float>::denorm_min(), -0.0f, 0.0f, std::numeric_limits<float>::denorm_min(),
                       std::numeric_limits<float>::min(), 1.0f, std::numeric_limits<float>::max(), kInf};
  std::mt19937 rng(1);
  for (int i = 0; i < 20000; ++i) {
    const float f = std::bit_cast<float>(std::uint32_t(rng()));
    if (!std::isnan(f)) v.push_back(f);
  }
  return v;
}

TEST(OrderedKey, IsIncreasingAndTiesTheTwoZeros) {
  const std::vector<float> v = edge_floats();
  std::mt19937 rng(2);
  for (int k = 0; k < 200000; ++k) {
    const float a = v[rng() % v.size()], b = v[rng() % v.size()];
    ASSERT_EQ(a < b, ordered(a, 0u) < ordered(b, 0u)) << a << " vs " << b;
    ASSERT_EQ(a == b, ordered(a, 0u) == ordered(b, 0u)) << a << " vs " << b;  // -0 == +0 included
  }
  EXPECT_EQ(ordered(-0.0f, 0u), ordered(0.0f, 0u));
}

TEST(OrderedKey, PlacesNanWhereAsked) {
  EXPECT_EQ(ordered(kNaN, 0u), 0u);
  EXPECT_EQ(ordered(kNaN, ~0u), ~0u);
  for (float f : edge_floats()) {
    ASSERT_GT(ordered(f, 0u), 0u) << f;   // every number above a NaN at 0
    ASSERT_LT(ordered(f, 0u), ~0u) << f;  // and below a NaN at ~0u
  }
}

TEST(OrderedKey, RoundTrips) {
  for (float f : edge_floats()) {
    const float back = from_ordered(ordered(f, 0u));
    ASSERT_EQ(std::bit_cast<std::uint32_t>(back), std::bit_cast<std::uint32_t>(f == 0.0f ? 0.0f : f)) << f;
  }
  EXPECT_TRUE(std::isnan(from_ordered(0u)));
  EXPECT_TRUE(std::isnan(from_ordered(~0u)));
}

/// Keys that stress the comparisons: many exact ties, NaNs, infinities.
std::vector<float> tricky_keys(std::mt19937& rng, int n) {
  const float pool[] = {kNaN, -kInf, 0.0f, -0.0f, 1.0f, 1.0f, 2.5f, kInf, 1e-30f, 3.0f};
  std::vector<float> k(static_cast<std::size_t>(n));
  for (float& x : k) x = rng() % 3 ? pool[rng() % std::size(pool)] : float(rng() % 5);
  return k;
}

template <Defect D>
void expect_fold_matches_better_of() {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20000; ++trial) {
    const std::vector<float> k = tricky_keys(rng, 1 + int(rng() % 12));
    // Both start from the first item (fold_next's incumbent must be real).
    Best folded{k[0], 0}, reduced{k[0], 0};
    for (int i = 1; i < int(k.size()); ++i) {
      fold_next<D>(folded, k[std::size_t(i)], i);
      reduced = BetterOf<D>{}(reduced, Best{k[std::size_t(i)], i});
    }
    ASSERT_EQ(folded.idx, reduced.idx) << "trial " << trial;
  }
}

TEST(FoldNext, EqualsTheDefinitionsBetterOfInIdOrder) { expect_fold_matches_better_of<Defect::none>(); }
TEST(FoldNext, EqualsBetterOfUnderTheHighIdTieMutantToo) { expect_fold_matches_better_of<Defect::high_id_tie>(); }

TEST(BetterOf, LowestIdOnTiesNumbersOverNanSentinelLast) {
  const BetterOf<Defect::none> better;
  EXPECT_EQ(better(Best{1.0f, 5}, Best{1.0f, 3}).idx, 3);
  EXPECT_EQ(better(Best{kNaN, 0}, Best{-kInf, 9}).idx, 9);  // a number beats a NaN whatever the ids
  EXPECT_EQ(better(no_candidate(), Best{kNaN, 7}).idx, 7);  // a real NaN beats the sentinel on the id
  EXPECT_EQ(better(Best{0.0f, 4}, Best{-0.0f, 2}).idx, 2);  // -0 and +0 tie
}

__global__ void block_kernel(const float* keys, const int* ids, Best* best_out, float* max_out) {
  RACEORACLE_SHARED(unsigned, smem_max, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  const int t = int(threadIdx.x);
  const Best b = ids[t] < 0 ? no_candidate() : Best{keys[t], ids[t]};
  const Best best = block_best<Defect::none>(b, smem_best);
  const float m = block_max<Defect::none>(keys[t], smem_max);
  best_out[t] = best;
  max_out[t] = m;
}

/// Every block size a multiple of kBlockMultiple: odd numbers of warps, one
/// warp, and the most warps the shared slots hold (32).
TEST(BlockReduce, BestAndMaxAtOddWarpCountsUnderBothWarpSizes) {
  ScheduleGuard g;
  std::mt19937 rng(4);
  for (int ws : {32, 64})
    for (int threads : {64, 192, 320, 448, 960, 1024}) {
      static_assert(64 % kBlockMultiple == 0);
      hipcpu::config().warp_size = ws;
      hipcpu::config().schedule_seed = std::uint64_t(threads * 131 + ws);
      for (int trial = 0; trial < 4; ++trial) {
        std::vector<float> keys = tricky_keys(rng, threads);
        const auto n = static_cast<std::size_t>(threads);
        std::vector<int> ids(n);
        for (int t = 0; t < threads; ++t) ids[std::size_t(t)] = rng() % 8 == 0 ? -1 : int(rng() % 100000);  // -1: no id
        std::vector<Best> best(n);
        std::vector<float> mx(n);
        hipLaunchKernelGGL(block_kernel, dim3(1), dim3(threads), 0, nullptr, keys.data(), ids.data(), best.data(),
                           mx.data());
        ASSERT_EQ(hipGetLastError(), hipSuccess);
        Best want = no_candidate();
        float want_max = kNaN;
        for (int t = 0; t < threads; ++t) {
          if (ids[std::size_t(t)] >= 0) want = BetterOf<Defect::none>{}(want, Best{keys[std::size_t(t)], ids[std::size_t(t)]});
          want_max = std::fmax(want_max, keys[std::size_t(t)]);
        }
        for (int t = 0; t < threads; ++t) {
          const std::string at = "warp " + std::to_string(ws) + ", " + std::to_string(threads) + " threads, thread " +
                                 std::to_string(t);
          ASSERT_EQ(best[std::size_t(t)].idx, want.idx) << at;
          ASSERT_TRUE(best[std::size_t(t)].key == want.key || (std::isnan(best[std::size_t(t)].key) && std::isnan(want.key)))
              << at;
          ASSERT_TRUE(mx[std::size_t(t)] == want_max || (std::isnan(mx[std::size_t(t)]) && std::isnan(want_max))) << at;
        }
      }
    }
}

__global__ void sum_kernel(const float* v, float* out) {
  RACEORACLE_SHARED(float, smem, 32);
  out[threadIdx.x] = block_sum<Defect::none>(v[threadIdx.x], smem);
}

/// The block's sum reaches every thread bit for bit alike (a row's keys are
/// divided by it: a thread with another value would rank on its own scale),
/// within fp32 summation's error of the exact sum, under both warp sizes.
TEST(BlockReduce, SumIsTheSameInEveryThreadAndWithinSummationError) {
  ScheduleGuard g;
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int ws : {32, 64})
    for (int threads : {64, 192, 960, 1024}) {
      hipcpu::config().warp_size = ws;
      hipcpu::config().schedule_seed = std::uint64_t(threads * 7 + ws);
      const auto n = static_cast<std::size_t>(threads);
      std::vector<float> v(n), out(n);
      double exact = 0;
      for (auto& x : v) exact += double(x = rng() % 5 == 0 ? 0.0f : unit(rng));  // exp's range, zeros included
      hipLaunchKernelGGL(sum_kernel, dim3(1), dim3(threads), 0, nullptr, v.data(), out.data());
      ASSERT_EQ(hipGetLastError(), hipSuccess);
      for (std::size_t t = 0; t < n; ++t) ASSERT_EQ(std::bit_cast<std::uint32_t>(out[t]), std::bit_cast<std::uint32_t>(out[0])) << t;
      // Nonnegative terms: a tree of depth log2(threads) rounds each at most that many times.
      EXPECT_LE(std::abs(double(out[0]) - exact), exact * std::log2(double(threads)) * 0x1p-24) << ws << " " << threads;
      EXPECT_NE(double(out[0]), 0.0);
    }
}

__global__ void count_kernel(const unsigned* v, unsigned* out) {
  RACEORACLE_SHARED(unsigned, smem, 32);
  out[threadIdx.x] = block_sum<Defect::none>(v[threadIdx.x], smem);
}

/// Counts (the filtered kernels' searches) are exact, in every thread.
TEST(BlockReduce, CountIsExactInEveryThread) {
  ScheduleGuard g;
  std::mt19937 rng(8);
  for (int ws : {32, 64})
    for (int threads : {64, 192, 256, 1024}) {
      hipcpu::config().warp_size = ws;
      const auto n = static_cast<std::size_t>(threads);
      std::vector<unsigned> v(n), out(n);
      unsigned exact = 0;
      for (auto& x : v) exact += (x = rng() % 1000);
      hipLaunchKernelGGL(count_kernel, dim3(1), dim3(threads), 0, nullptr, v.data(), out.data());
      ASSERT_EQ(hipGetLastError(), hipSuccess);
      for (std::size_t t = 0; t < n; ++t) ASSERT_EQ(out[t], exact) << ws << " " << threads << " " << t;
    }
}

template <class T>
__global__ void scan_kernel(const T* v, T* out, T* totals) {
  RACEORACLE_SHARED(T, smem, 32);
  T total;
  out[threadIdx.x] = block_exclusive_scan(v[threadIdx.x], smem, total);
  totals[threadIdx.x] = total;
  // The scan may run again at once on the same smem (its closing barrier).
  T again;
  const T second = block_exclusive_scan(v[threadIdx.x], smem, again);
  if (second != out[threadIdx.x] || again != total) out[threadIdx.x] = T(12345);
}

/// The exclusive scan in thread order (the sort's digit offsets: exact for
/// counts; the cumulative sum's mass before each chunk: within fp32
/// summation's error, the same total in every thread), at thread counts
/// that are not whole warps of both widths, under both warp sizes and
/// shuffled schedules.
TEST(BlockScan, ExclusivePrefixInThreadOrderUnderBothWarpSizes) {
  ScheduleGuard g;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int ws : {32, 64})
    for (int threads : {64, 192, 256, 960, 1024}) {
      hipcpu::config().warp_size = ws;
      hipcpu::config().schedule_seed = std::uint64_t(threads * 3 + ws);
      const auto n = static_cast<std::size_t>(threads);
      std::vector<unsigned> u(n), uo(n), ut(n);
      for (auto& x : u) x = rng() % 17;
      hipLaunchKernelGGL(scan_kernel<unsigned>, dim3(1), dim3(threads), 0, nullptr, u.data(), uo.data(), ut.data());
      ASSERT_EQ(hipGetLastError(), hipSuccess);
      unsigned run = 0;
      for (std::size_t t = 0; t < n; ++t) {
        ASSERT_EQ(uo[t], run) << ws << " " << threads << " " << t;
        run += u[t];
      }
      for (std::size_t t = 0; t < n; ++t) ASSERT_EQ(ut[t], run) << t;
      std::vector<float> f(n), fo(n), ft(n);
      for (auto& x : f) x = rng() % 4 == 0 ? 0.0f : unit(rng);
      hipLaunchKernelGGL(scan_kernel<float>, dim3(1), dim3(threads), 0, nullptr, f.data(), fo.data(), ft.data());
      ASSERT_EQ(hipGetLastError(), hipSuccess);
      double exact = 0;
      for (std::size_t t = 0; t < n; ++t) {
        // A value's path: log2(warp) additions in the warp, then the warps before it in order.
        const double depth = std::log2(double(ws)) + double(threads / ws) + 1;
        ASSERT_LE(std::abs(double(fo[t]) - exact), exact * depth * 0x1p-24) << ws << " " << threads << " " << t;
        exact += double(f[t]);
      }
      for (std::size_t t = 0; t < n; ++t) ASSERT_EQ(std::bit_cast<std::uint32_t>(ft[t]), std::bit_cast<std::uint32_t>(ft[0]));
      EXPECT_LE(std::abs(double(ft[0]) - exact), exact * 64 * 0x1p-24);
    }
}

__global__ void top_two_kernel(const float* tops, const float* seconds, TopTwo* out) {
  RACEORACLE_SHARED(TopTwoBits, smem, 32);
  const int t = int(threadIdx.x);
  out[t] = block_top_two<Defect::none>(TopTwo{tops[t], seconds[t]}, smem);
}

/// The block's two largest values, a tie of the largest with itself counted,
/// from each thread's pair (second <= top): drawn from a small pool so that
/// tops tie across lanes and warps, within a thread too, with +0 and +inf.
TEST(BlockReduce, TopTwoCountsEveryCopyOfTheTopUnderBothWarpSizes) {
  ScheduleGuard g;
  std::mt19937 rng(6);
  const float pool[] = {0.0f, 0x1p-126f, 0x1p-75f, 0.5f, 1.0f, 1.0f, 2.0f, 3.0f, 3.0f, kInf};
  for (int ws : {32, 64})
    for (int threads : {64, 192, 320, 448, 960, 1024}) {
      hipcpu::config().warp_size = ws;
      hipcpu::config().schedule_seed = std::uint64_t(threads * 137 + ws);
      for (int trial = 0; trial < 24; ++trial) {
        const auto n = static_cast<std::size_t>(threads);
        // Trials differ in how often a thread holds the pool's larger values,
        // so that the top is sometimes unique, sometimes shared.
        const std::size_t span = 4 + std::size_t(trial) % (std::size(pool) - 4);
        std::vector<float> tops(n), seconds(n), all;
        for (std::size_t t = 0; t < n; ++t) {
          const float a = pool[rng() % span], b = pool[rng() % span];
          tops[t] = std::max(a, b), seconds[t] = std::min(a, b);
          if (trial % 3 == 0 && t != 0) tops[t] = seconds[t];  // one thread above the rest, or none
          all.push_back(tops[t]), all.push_back(seconds[t]);
        }
        std::sort(all.begin(), all.end(), std::greater<>());
        std::vector<TopTwo> got(n);
        hipLaunchKernelGGL(top_two_kernel, dim3(1), dim3(threads), 0, nullptr, tops.data(), seconds.data(), got.data());
        ASSERT_EQ(hipGetLastError(), hipSuccess);
        for (std::size_t t = 0; t < n; ++t) {
          const std::string at = "warp " + std::to_string(ws) + ", " + std::to_string(threads) + " threads, trial " +
                                 std::to_string(trial) + ", thread " + std::to_string(t);
          ASSERT_EQ(got[t].top, all[0]) << at;
          ASSERT_EQ(got[t].second, all[1]) << at;
        }
      }
    }
}

/// The wide loads the kernels read their ids with give each id's value in
/// address order, bf16 widened exactly (its bits as the upper half).
TEST(WideLoads, QuadsAndVectorsGiveEachIdsValueInAddressOrder) {
  std::mt19937 rng(5);
  alignas(16) std::uint16_t bf[16];
  alignas(16) float f32[16];
  for (int trial = 0; trial < 200; ++trial) {
    for (int i = 0; i < 16; ++i) {
      bf[i] = std::uint16_t(rng());
      f32[i] = std::bit_cast<float>(std::uint32_t(rng()));
    }
    auto same = [](float got, std::uint32_t want_bits) { return std::bit_cast<std::uint32_t>(got) == want_bits; };
    float q[4], v16[16], vf[16];
    for (int at : {0, 4, 8, 12}) {
      load_quad(bf + at, q);
      for (int k = 0; k < 4; ++k) ASSERT_TRUE(same(q[k], std::uint32_t(bf[at + k]) << 16)) << "bf16 quad at " << at + k;
      load_quad(f32 + at, q);
      for (int k = 0; k < 4; ++k) ASSERT_TRUE(same(q[k], std::bit_cast<std::uint32_t>(f32[at + k]))) << "f32 quad at " << at + k;
    }
    load_vector<16>(bf, v16);
    load_vector<16>(f32, vf);
    for (int i = 0; i < 16; ++i) {
      ASSERT_TRUE(same(v16[i], std::uint32_t(bf[i]) << 16)) << "bf16 vector at " << i;
      ASSERT_TRUE(same(vf[i], std::bit_cast<std::uint32_t>(f32[i]))) << "f32 vector at " << i;
    }
  }
}


/// Records what for_each_id passes each thread: every id's visits, logit and
/// noise, and whether any thread saw its ids out of increasing order.
template <int THREADS, int UNROLL, class Logit>
__global__ void visit_ids(const Logit* x, const float* e, std::int64_t n, unsigned* visits, float* seen_x, float* seen_e,
                          unsigned* out_of_order) {
  std::int64_t last = -1;
  for_each_id<THREADS, UNROLL>(x, e, n, [&](std::int64_t i, float v, float ev) {
    if (i <= last) atomicAdd(out_of_order, 1u);
    last = i;
    atomicAdd(&visits[i], 1u);
    seen_x[i] = v;
    seen_e[i] = ev;
  });
}

template <int UNROLL, class Logit>
void expect_every_id_once_in_order() {
  constexpr int kThreads = 96;  // three warps of 32: rows below, at and past UNROLL vectors a thread
  constexpr int kVec = 16 / int(sizeof(Logit));
  std::mt19937 rng(6);
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(kVec * kThreads - 3), std::int64_t(kVec * kThreads * UNROLL),
                               std::int64_t(kVec * kThreads * UNROLL * 3 + 5), std::int64_t(kVec * kThreads * (UNROLL + 1) + 1)})
    for (const int skew : {0, 1}) {  // an aligned row, and one a Logit past it (read id by id)
      for (const bool noise : {true, false}) {
        const auto size = static_cast<std::size_t>(n);
        std::vector<Logit> xs(size + 8);
        std::vector<float> es(size + 8);
        for (Logit& v : xs) v = Logit(rng() % 30000);
        for (float& v : es) v = float(rng() % 1000);
        std::vector<unsigned> visits(size);
        std::vector<float> seen_x(size), seen_e(size);
        unsigned out_of_order = 0;
        const Logit* x = xs.data() + skew;
        const float* e = noise ? es.data() + skew : nullptr;
        hipLaunchKernelGGL((visit_ids<kThreads, UNROLL, Logit>), dim3(1), dim3(kThreads), 0, nullptr, x, e, n, visits.data(),
                           seen_x.data(), seen_e.data(), &out_of_order);
        ASSERT_EQ(hipDeviceSynchronize(), hipSuccess);
        const std::string at = "UNROLL " + std::to_string(UNROLL) + " bytes " + std::to_string(sizeof(Logit)) + " n " +
                               std::to_string(n) + " skew " + std::to_string(skew) + " noise " + std::to_string(noise);
        EXPECT_EQ(out_of_order, 0u) << at;
        for (std::int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(visits[std::size_t(i)], 1u) << at << " id " << i;
          ASSERT_EQ(seen_x[std::size_t(i)], load_logit(x + i)) << at << " id " << i;
          ASSERT_EQ(seen_e[std::size_t(i)], noise ? e[i] : 1.0f) << at << " id " << i;
        }
      }
    }
}

/// for_each_id, as every kernel walks a row: each id once, with its logit and
/// noise, a thread's ids in increasing order, whether a thread loads one
/// vector at a time or UNROLL of them at once.
TEST(RowWalk, EveryIdOnceInIncreasingOrderPerThread) {
  expect_every_id_once_in_order<1, std::uint16_t>();
  expect_every_id_once_in_order<1, float>();
  expect_every_id_once_in_order<4, std::uint16_t>();
  expect_every_id_once_in_order<4, float>();
}

}  // namespace
}  // namespace raceoracle::kernels
