#pragma once
/// Block-level building blocks of the race kernels, one idea per function.
/// Shared by the fused and baseline kernels so that a defect switched on here
/// reaches every place it concerns.
#include <climits>
#include <cstdint>

#include "kernels/defect.h"
#include "kernels/device.h"
#include "kernels/key_arithmetic.h"
#include "kernels/philox.h"
#include "kernels/host_api.h"

namespace raceoracle::kernels {

/// A candidate: its key (or raw logit, for greedy rows) and its id.
struct Best {
  float key;
  int idx;
};

/// The worst element of the order below: what a lane with no id holds. A real
/// id always beats it (a real NaN key ties on NaN and wins on the lower id),
/// so it can only escape from an empty range, and then shows as out of range.
__device__ __forceinline__ Best no_candidate() { return Best{NAN, INT_MAX}; }

/// Total order of candidates: larger key first, a NaN key below every number
/// (a NaN never wins while a number competes), lowest id on ties.
template <Defect D>
__device__ __forceinline__ bool beats(const Best& a, const Best& b) {
  const bool a_nan = a.key != a.key, b_nan = b.key != b.key;
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && a.key != b.key) return a.key > b.key;
  return D == Defect::high_id_tie ? a.idx > b.idx : a.idx < b.idx;
}

template <Defect D>
struct BetterOf {
  __device__ __forceinline__ Best operator()(const Best& a, const Best& b) const { return beats<D>(b, a) ? b : a; }
};

/// Folds one more candidate into a thread's running best, for candidates
/// visited in increasing id order: equivalent to BetterOf under that order
/// (a tie keeps the earlier, lower id; a NaN never displaces a number; a
/// number displaces a NaN), in two compares instead of BetterOf's six.
/// The incumbent must be a real candidate (the thread's first), not the
/// sentinel: a real NaN beats the sentinel by id, which this fold cannot see.
template <Defect D>
__device__ __forceinline__ void fold_next(Best& best, float key, int idx) {
  // Under high_id_tie a later id wins every tie, NaN against NaN included.
  const bool take = D == Defect::high_id_tie ? (key >= best.key || best.key != best.key)
                                             : (key > best.key || (best.key != best.key && key == key));
  if (take) best = Best{key, idx};
}

/// Max that ignores NaN (as fmaxf), so one NaN logit does not poison its tile.
template <Defect D>
struct MaxOf {
  __device__ __forceinline__ float operator()(float a, float b) const {
    if (D == Defect::nan_max) return (a != a || b != b) ? NAN : (b > a ? b : a);
    return fmaxf(a, b);  // one instruction; returns the number when the other is NaN
  }
};

/// Values cross the block reductions as unsigned integers ordered as the race
/// orders them, so that a warp reduces them in one instruction (redux.sync on
/// NVIDIA) instead of a shuffle tree of float compares. ordered() is
/// increasing in the value, maps -0 and +0 alike (they tie), and puts NaN at
/// `nan_at` (0: below every number; ~0u: above, for the nan_max mutant).
__device__ __forceinline__ unsigned ordered(float f, unsigned nan_at) {
  const unsigned u = __float_as_uint(f + 0.0f);  // -0 + 0 is +0
  if (f != f) return nan_at;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
/// The inverse of ordered(): 0 and ~0u (no number maps there) are NaN.
__device__ __forceinline__ float from_ordered(unsigned o) {
  if (o == 0u || o == ~0u) return NAN;
  return __uint_as_float((o & 0x80000000u) ? (o & 0x7FFFFFFFu) : ~o);
}

/// A candidate in reduction form: its ordered key, and its id coded so that
/// the smaller code wins a tie (the lowest id; the highest under high_id_tie).
struct OrderedBest {
  unsigned key, id;
};

/// Block sizes are multiples of this, so that every warp is full on 32- and
/// 64-wide hardware alike: the warp reductions below read every lane, and a
/// lane past the block does not exist (its value is undefined on a GPU).
inline constexpr int kBlockMultiple = 64;

/// Block-wide reduction in two levels: `reduce_warp` within each warp, then
/// again over the warps' results (`none` fills the lanes past the last warp);
/// every thread gets the result. `smem` holds one value per warp (at most 32
/// warps) and serves one reduction a block: no barrier follows the second
/// level's reads, so a second reduction into the same `smem` could overwrite
/// a slot another warp has yet to read (the kernels give each reduction its
/// own array; the barrier cost 0.5% at 256 rows, bench/README.md "A screen
/// a tile"). blockDim.x must be a multiple of kBlockMultiple (every warp
/// full). The missing_barrier mutant drops the barrier between the levels.
template <Defect D, class T, class ReduceWarp>
__device__ T block_reduce(T v, device::SharedPtr<T> smem, ReduceWarp reduce_warp, T none) {
  v = reduce_warp(v);
  const int w = device::warp_size();
  const int warp = int(threadIdx.x) / w, lane = int(threadIdx.x) % w;
  const int warps = (int(blockDim.x) + w - 1) / w;
  if (lane == 0) smem[warp] = v;
  if (D != Defect::missing_barrier) __syncthreads();  // every warp has published
  return reduce_warp(lane < warps ? smem[lane] : none);
}

/// The block's maximum under MaxOf<D> (NaN ignored; propagated under nan_max);
/// every thread gets it.
template <Defect D>
__device__ float block_max(float v, device::SharedPtr<unsigned> smem) {
  const unsigned o = ordered(v, D == Defect::nan_max ? ~0u : 0u);
  return from_ordered(block_reduce<D>(o, smem, [](unsigned u) { return device::warp_max(u); }, 0u));
}

/// The block's best candidate in the order of beats<D>; every thread gets it.
/// Under tie_lane_order a tie between lanes goes to the highest id.
template <Defect D>
__device__ Best block_best(const Best& b, device::SharedPtr<OrderedBest> smem) {
  auto reduce_warp = [](OrderedBest c) {
    const unsigned top = device::warp_max(c.key);
    if (D == Defect::tie_lane_order) return OrderedBest{top, device::warp_max(c.key == top ? c.id : 0u)};
    return OrderedBest{top, device::warp_min(c.key == top ? c.id : ~0u)};
  };
  const unsigned id = D == Defect::high_id_tie ? ~unsigned(b.idx) : unsigned(b.idx);
  const OrderedBest c = block_reduce<D>(OrderedBest{ordered(b.key, 0u), id}, smem, reduce_warp, OrderedBest{0u, ~0u});
  return Best{from_ordered(c.key), int(D == Defect::high_id_tie ? ~c.id : c.id)};
}

/// The block's sum (float or unsigned); every thread gets the same value (the
/// butterfly adds the same two operands in every lane: IEEE addition
/// commutes).
template <Defect D, class T>
__device__ T block_sum(T v, device::SharedPtr<T> smem) {
  auto reduce_warp = [](T x) {
    for (int m = device::warp_size() / 2; m > 0; m /= 2) x += device::shfl_xor(x, m);
    return x;
  };
  return block_reduce<D>(v, smem, reduce_warp, T(0));
}

/// The block's exclusive prefix sum in thread order (float or unsigned): thread
/// t gets v_0 + ... + v_{t-1} (0 for thread 0) and `total` the sum of all.
/// Within a warp a Kogge-Stone scan (log2(warp) additions on a value's path),
/// then each thread adds the totals of the warps before it in order. `smem`
/// holds one value per warp (at most 32); the barrier at the end lets the
/// caller reuse it.
template <class T>
__device__ T block_exclusive_scan(T v, device::SharedPtr<T> smem, T& total) {
  const int w = device::warp_size();
  const int warp = int(threadIdx.x) / w, lane = int(threadIdx.x) % w;
  const int warps = (int(blockDim.x) + w - 1) / w;
  T x = v;  // inclusive within the warp
  for (int d = 1; d < w; d *= 2) {
    const T y = device::shfl_up(x, unsigned(d));
    if (lane >= d) x += y;
  }
  T before = device::shfl_up(x, 1u);  // exclusive within the warp
  if (lane == 0) before = T(0);
  if (lane == w - 1) smem[warp] = x;
  __syncthreads();
  T base = T(0);
  total = T(0);
  for (int k = 0; k < warps; ++k) {
    if (k == warp) base = total;
    total += smem[k];
  }
  __syncthreads();  // every warp has read smem
  return warp == 0 ? before : base + before;
}

/// The two largest of a set of values that are >= +0 and never NaN: `top`,
/// and the largest of the others (`second`; a second copy of top counts).
/// Their bits order as the values do, so the block reduces them as unsigned
/// integers.
struct TopTwo {
  float top, second;
};
struct TopTwoBits {
  unsigned top, second;
};

/// The block's TopTwo from its threads' (each with second <= top); every
/// thread gets it. Per warp: the largest top, then the largest of every other
/// lane's top and the first holder's second.
template <Defect D>
__device__ TopTwo block_top_two(TopTwo t, device::SharedPtr<TopTwoBits> smem) {
  auto reduce_warp = [](TopTwoBits b) {
    const unsigned top = device::warp_max(b.top);
    const unsigned lane = unsigned(threadIdx.x) % unsigned(device::warp_size());
    const unsigned first = device::warp_min(b.top == top ? lane : ~0u);
    return TopTwoBits{top, device::warp_max(lane == first ? b.second : b.top)};
  };
  const TopTwoBits r = block_reduce<D>(TopTwoBits{__float_as_uint(t.top), __float_as_uint(t.second)}, smem,
                                       reduce_warp, TopTwoBits{0u, 0u});
  return TopTwo{__uint_as_float(r.top), __uint_as_float(r.second)};
}

/// The two bf16 of a loaded word as fp32 (bf16 is the upper half of an
/// fp32: exact), the lower address first.
__device__ __forceinline__ void widen_bf16_pair(unsigned w, float* out) {
  out[0] = __uint_as_float(w << 16);
  out[1] = __uint_as_float(w & 0xFFFF0000u);
}

/// Four consecutive logits or noise values from an address aligned to
/// their size, as fp32, in one load: 8 bytes of bf16, 16 of fp32.
__device__ __forceinline__ void load_quad(const std::uint16_t* p, float* out) {
  const device::Bytes8 q = device::load_streaming(reinterpret_cast<const device::Bytes8*>(p));
  widen_bf16_pair(q.w[0], out);
  widen_bf16_pair(q.w[1], out + 2);
}
__device__ __forceinline__ void load_quad(const float* p, float* out) {
  const device::Bytes16 q = device::load_streaming(reinterpret_cast<const device::Bytes16*>(p));
#pragma unroll
  for (int k = 0; k < 4; ++k) out[k] = __uint_as_float(q.w[k]);
}

/// `N` consecutive logits (bf16 or fp32) or noise values from a 16-byte
/// aligned address, as fp32, in 16-byte loads.
template <int N>
__device__ __forceinline__ void load_vector(const std::uint16_t* p, float (&out)[N]) {
  static_assert(N % 8 == 0, "bf16 vectors hold 8 values");
#pragma unroll
  for (int v = 0; v < N / 8; ++v) {
    const device::Bytes16 b = device::load_streaming(reinterpret_cast<const device::Bytes16*>(p) + v);
#pragma unroll
    for (int k = 0; k < 4; ++k) widen_bf16_pair(b.w[k], out + 8 * v + 2 * k);
  }
}
template <int N>
__device__ __forceinline__ void load_vector(const float* p, float (&out)[N]) {
  static_assert(N % 4 == 0, "fp32 vectors hold 4 values");
#pragma unroll
  for (int v = 0; v < N / 4; ++v) load_quad(p + 4 * v, out + 4 * v);
}
__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

/// The logit as fp32 (bf16 is the upper half of an fp32: exact).
__device__ __forceinline__ float load_logit(const float* p) { return *p; }
__device__ __forceinline__ float load_logit(const std::uint16_t* p) { return __uint_as_float(unsigned(*p) << 16); }

/// Calls f(id0, n, logits, noise) for the ids of a row each thread visits,
/// `n` (at most kVec) consecutive ids from id0 at a time: where the row (and
/// its noise, when read) starts 16-byte aligned, whole vectors of 16 bytes of
/// logits go first, vector k to thread k % THREADS; the ids past the last
/// whole vector, or a whole unaligned row, one at a time. `e` null: no noise
/// read, 1 passed. A thread visits its ids in increasing order. With
/// UNROLL > 1 a thread loads UNROLL vectors before it passes the first on
/// (more bytes in flight where few threads walk a row); the order is the same.
template <int THREADS, int UNROLL = 1, class Logit, class F>
__device__ __forceinline__ void for_each_vector(const Logit* x, const float* e, std::int64_t n, F f) {
  constexpr int kVec = 16 / int(sizeof(Logit));
  const std::int64_t whole = aligned16(x) && (!e || aligned16(e)) ? n / kVec : 0;
  auto load = [&](std::int64_t k, float (&v)[kVec], float (&ev)[kVec]) {
    load_vector<kVec>(x + k * kVec, v);
    if (e) load_vector<kVec>(e + k * kVec, ev);
    else
#pragma unroll
      for (int j = 0; j < kVec; ++j) ev[j] = 1.0f;
  };
  std::int64_t k = threadIdx.x;
  if constexpr (UNROLL > 1)
    for (; k + std::int64_t(UNROLL - 1) * THREADS < whole; k += std::int64_t(UNROLL) * THREADS) {
      float v[UNROLL][kVec], ev[UNROLL][kVec];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) load(k + std::int64_t(u) * THREADS, v[u], ev[u]);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) f((k + std::int64_t(u) * THREADS) * kVec, kVec, v[u], ev[u]);
    }
  for (; k < whole; k += THREADS) {
    float v[kVec], ev[kVec];
    load(k, v, ev);
    f(k * kVec, kVec, v, ev);
  }
  for (std::int64_t i = whole * kVec + threadIdx.x; i < n; i += THREADS) {
    float v[kVec] = {load_logit(x + i)}, ev[kVec] = {e ? e[i] : 1.0f};
    f(i, 1, v, ev);
  }
}

/// Calls f(id, logit, noise) for every id a thread visits (for_each_vector's order).
template <int THREADS, int UNROLL = 1, class Logit, class F>
__device__ __forceinline__ void for_each_id(const Logit* x, const float* e, std::int64_t n, F f) {
  for_each_vector<THREADS, UNROLL>(x, e, n, [&](std::int64_t id0, int count, const float* v, const float* ev) {
    for (int j = 0; j < count; ++j) f(id0 + j, v[j], ev[j]);
  });
}

/// Start of row `row` in a buffer with a row stride of `stride` elements.
/// 64-bit: rows * stride exceeds 2^31 in production.
template <Defect D, class T>
__device__ __forceinline__ const T* row_start(const T* base, std::int64_t row, std::int64_t stride) {
  if (D == Defect::offsets_32bit) return base + std::uint32_t(row * stride);
  return base + row * stride;
}

template <Defect D>
__device__ __forceinline__ bool is_greedy(float T, float greedy_eps) {
  return D == Defect::strict_greedy ? T < greedy_eps : T <= greedy_eps;
}

/// The launch's eps and greedy_eps as defect D reads them (constant_args: the defaults).
template <Defect D>
__device__ __forceinline__ float eps_of(const SampleArgs& a) {
  return D == Defect::constant_args ? race::kDefaultEps : a.eps;
}
template <Defect D>
__device__ __forceinline__ float greedy_eps_of(const SampleArgs& a) {
  return D == Defect::constant_args ? race::kDefaultGreedyEps : a.greedy_eps;
}

/// A fast-math exp of the kind `-ffast-math` or `__expf` brings: a bit trick
/// for 2^floor and a quadratic for the fraction (relative error ~2e-3).
__device__ __forceinline__ float fast_expf(float x) {
  const float t = x * 1.44269504f;
  if (!(t > -126.0f)) return t != t ? t : 0.0f;
  const float fi = floorf(t), f = t - fi;
  const float p = 1.0f + f * (0.6565f + f * 0.3435f);
  return __uint_as_float(unsigned(int(fi) + 127) << 23) * p;
}

template <Defect D>
__device__ __forceinline__ float race_exp(float a) {
  if (D == Defect::fast_exp) return fast_expf(a);
  return expf(a);
}

/// The exponent of the race key, in the given order (kernels/key_arithmetic.h).
template <ScalingOrder ORDER>
__device__ __forceinline__ float race_exponent(float x, float m_safe, float inv_t) {
  return keys::exponent<ORDER>(x, m_safe, inv_t);
}

/// The race key of one id: exp((x - m) / t) / (E + eps), IEEE division. The
/// numerator is in [0, 1] or NaN (race_exponent).
template <ScalingOrder ORDER, Defect D>
__device__ __forceinline__ float race_key(float x, float m_safe, float inv_t, float e, float eps) {
  return race_exp<D>(race_exponent<ORDER>(x, m_safe, inv_t)) / (e + eps);
}

/// The m_safe guard (kernels/key_arithmetic.h), as defect D builds it.
template <Defect D>
__device__ __forceinline__ float guard_max(float m) {
  if (D == Defect::no_m_safe) return m;
  return keys::guard_max(m);
}

/// The Philox call of a row's ids 4q .. 4q + 3 (race/noise.h), as defect D builds it.
template <Defect D>
__device__ __forceinline__ race::PhiloxInput drawn_input(std::uint64_t seed, std::uint64_t offset, std::uint32_t row,
                                                         std::uint32_t q) {
  race::PhiloxInput in = race::philox_input(seed, offset, row, q);
  if (D == Defect::philox_counter) in.counter[1] = 0;
  if (D == Defect::philox_key) in.key[1] = 0;
  return in;
}

/// E of one Philox word in fp32 (philox::exponential_of; a uniform that can be 0 under uniform_zero).
template <Defect D>
__device__ __forceinline__ float drawn_exponential(std::uint32_t w) {
  if (D == Defect::uniform_zero) return -logf(float(w >> 8) * 0x1p-24f);
  return philox::exponential_of(w);
}

/// How a drawn id's noise is held: its E, or the complement r = 1 - u of its
/// uniform, from which the screen bounds E without a log and gets E itself,
/// bit for bit, as noise_of_complement(r) (kernels/SCREEN.md, "Drawn noise").
enum class DrawnAs { noise, complement };

/// 1 - u of one Philox word, exact (philox::complement_from_bits; under uniform_zero, of its uniform).
template <Defect D>
__device__ __forceinline__ float drawn_complement(std::uint32_t w) {
  if (D == Defect::uniform_zero) return 1.0f - float(w >> 8) * 0x1p-24f;
  return philox::complement_from_bits(w);
}

/// E from the complement: 1 - r is the uniform exactly, so this is
/// drawn_exponential of the same word (under every defect), bit for bit.
__device__ __forceinline__ float noise_of_complement(float r) { return -logf(1.0f - r); }

template <Defect D, DrawnAs AS>
__device__ __forceinline__ float drawn_value(std::uint32_t w) {
  return AS == DrawnAs::noise ? drawn_exponential<D>(w) : drawn_complement<D>(w);
}

/// The drawn values of the 4 ids from `id0`, a multiple of 4: one Philox call.
template <Defect D, DrawnAs AS = DrawnAs::noise>
__device__ __forceinline__ void draw_quad(std::uint64_t seed, std::uint64_t offset, std::uint32_t row,
                                          std::uint32_t id0, float (&out)[race::kIdsPerPhiloxCall]) {
  const philox::Words w = philox::philox4x32_10(drawn_input<D>(seed, offset, row, id0 / race::kIdsPerPhiloxCall));
  out[0] = drawn_value<D, AS>(w.w[0]);
  out[1] = drawn_value<D, AS>(w.w[1]);
  out[2] = drawn_value<D, AS>(w.w[2]);
  out[3] = drawn_value<D, AS>(w.w[3]);
}

/// The draw_skip mutant's shortcut: ids more than 14 temperature units below
/// the tile's max get E = inf (key 0), as if their draw were skipped. No
/// such threshold is below 19.4 units and sound: the smallest E, 2^-24 (a
/// word near 2^32), lifts an id e^16.6 times, and the max's key is at least
/// 1 / 16.6 (its largest E, 24 ln 2).
template <Defect D, DrawnAs AS, int N>
__device__ __forceinline__ void skip_far_draws(const float (&v)[N], float (&ev)[N], float m_safe, float inv_t) {
  if constexpr (D == Defect::draw_skip) {
#pragma unroll
    for (int j = 0; j < N; ++j)  // E = inf, or its complement 1 (u = 0)
      if ((v[j] - m_safe) * inv_t < -14.0f) ev[j] = AS == DrawnAs::noise ? INFINITY : 1.0f;
  }
}

/// The drawn value of one id: its call's word id % 4.
template <Defect D, DrawnAs AS = DrawnAs::noise>
__device__ __forceinline__ float draw_one(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t id) {
  const philox::Words w = philox::philox4x32_10(drawn_input<D>(seed, offset, row, id / 4));
  const std::uint32_t k = id % 4;
  return drawn_value<D, AS>(k == 0 ? w.w[0] : k == 1 ? w.w[1] : k == 2 ? w.w[2] : w.w[3]);
}

using keys::inverse_temperature;

}  // namespace raceoracle::kernels
