#pragma once
/// What the two filtered kernels share (SPEC §9; kernels/FILTERED.md): a row
/// as one workgroup of THREADS threads walks it (race.h's for_each_id: 16-byte
/// vectors where aligned), its filters as read, the
/// rank key the filters order ids by, the weight they sum, the greedy argmax
/// and the race over a kept set.
#include <climits>
#include <cstdint>

#include "kernels/race.h"

namespace raceoracle::kernels::filtered {

/// A logit's rank key: its ordered bits (race.h: increasing in the value,
/// -0 and +0 alike, NaN at 0, below every number), the upper 16 alone for
/// bf16, whose lower 16 are the same for every value of a sign.
template <class Logit>
inline constexpr int kKeyBits = sizeof(Logit) == 2 ? 16 : 32;
template <class Logit>
__device__ __forceinline__ unsigned rank_key(float x) {
  return ordered(x, 0u) >> (32 - kKeyBits<Logit>);
}
/// The logit whose rank key is `k` (a number's key; not 0, NaN's).
template <class Logit>
__device__ __forceinline__ float value_of(unsigned k) {
  if (kKeyBits<Logit> == 32) return from_ordered(k);
  // ordered() of a bf16: a positive value's low 16 bits are 0, a negative's all 1.
  return from_ordered((k << 16) | ((k & 0x8000u) ? 0u : 0xFFFFu));
}

/// One row's filters as the kernel reads them (the defect filters_row0 reads row 0's).
struct RowFilters {
  bool top_k_on = false, top_p_on = false, min_p_on = false;
  std::int32_t top_k = 0;
  float top_p = 1.0f, min_p = 0.0f;
  __device__ bool any() const { return top_k_on || top_p_on || min_p_on; }
};
/// Entry `row` of `filters` ([rows], or null: none) over a vocabulary of `vocab`.
template <Defect D>
__device__ __forceinline__ RowFilters read_filters(const race::RowFilter* filters, std::int64_t vocab, std::int64_t row) {
  RowFilters r;
  if (!filters) return r;
  const race::RowFilter f = filters[D == Defect::filters_row0 ? 0 : row];
  r.top_k_on = race::top_k_on(f, vocab);
  r.top_p_on = race::top_p_on(f);
  r.min_p_on = race::min_p_on(f);
  r.top_k = f.top_k;
  r.top_p = f.top_p;
  r.min_p = f.min_p;
  return r;
}
template <Defect D>
__device__ __forceinline__ RowFilters read_filters(const SampleArgs& a, std::int64_t row) {
  return read_filters<D>(a.filters, a.vocab, row);
}

/// An id's unnormalised probability exp((x - m) / t) in post order, what the
/// filters sum and compare (the race key's numerator); a NaN logit weighs 0
/// (a masked id, as -inf does).
template <Defect D>
__device__ __forceinline__ float weight(float x, float m_safe, float inv_t) {
  return x != x ? 0.0f : race_exp<D>(race_exponent<ScalingOrder::post>(x, m_safe, inv_t));
}

/// A cut in the order of the filters (rank key descending, then id
/// ascending): it keeps the ids ranked at or before (key, id). The default
/// keeps every id.
struct Cut {
  unsigned key = 0;
  std::int64_t id = INT64_MAX;
  __device__ bool keeps(unsigned k, std::int64_t i) const { return k > key || (k == key && i <= id); }
};

/// The lowest id of the row's raw maximum (NaN ignored): the greedy token.
template <int THREADS, Defect D, class Logit>
__device__ int row_argmax(const Logit* x, std::int64_t n, device::SharedPtr<OrderedBest> smem) {
  Best best = no_candidate();
  for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n,
                       [&](std::int64_t i, float v, float) { best = BetterOf<D>{}(best, Best{v, int(i)}); });
  return block_best<D>(best, smem).idx;
}

/// The row's maximum logit, NaN ignored; every thread gets it.
template <int THREADS, Defect D, class Logit>
__device__ float row_max(const Logit* x, std::int64_t n, device::SharedPtr<unsigned> smem) {
  float m = -INFINITY;
  for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n, [&](std::int64_t, float v, float) { m = MaxOf<D>{}(m, v); });
  return block_max<D>(m, smem);
}

/// A value rounded to bf16 (nearest even), as a bf16 accumulator holds it.
__device__ __forceinline__ float round_to_bf16(float f) {
  const unsigned u = __float_as_uint(f);
  if (f != f) return f;
  return __uint_as_float((u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u);
}

/// s + v as the kernel's accumulator adds: fp32, or bf16 under mass_bf16.
template <Defect D>
__device__ __forceinline__ float accumulate(float s, float v) {
  return D == Defect::mass_bf16 ? round_to_bf16(s + v) : s + v;
}

}  // namespace raceoracle::kernels::filtered
