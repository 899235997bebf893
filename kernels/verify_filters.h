#pragma once
/// A verify request's filters (SPEC §9 on every target row of a sampling
/// request; docs/SPEC.md §11): both verify kernels find each filtered row's
/// cuts first, one workgroup a row (the filters' radix select,
/// kernels/filtered_select.h), with the weights of their own softmax,
/// exp(fl(x / t) - m); their probabilities are then renormalised over the
/// kept ids. The row's max is always kept (top-k keeps at least one id,
/// top-p the first, min-p the max), so the kept set's max is the row's.
#include "kernels/filtered_select.h"
#include "kernels/verify_row.h"

namespace raceoracle::kernels::verify {

/// The weight exp(fl(x / t) - m) of the verify kernels' pre-scale softmax (m: the row's max of scaled(x) = fl(x / t)).
struct PreScaleWeight {
  float m_safe, t;
  __device__ float operator()(float x) const { return x != x ? 0.0f : expf(x / t - m_safe); }
  __device__ float scaled(float x) const { return x / t; }
};

/// Whether the kernels apply the requests' filters (never under verify_filters_ignored).
template <Defect D>
__device__ __host__ __forceinline__ bool applies_filters(const VerifyArgs& a) {
  return D != Defect::verify_filters_ignored && a.filters != nullptr;
}

/// The cuts of target row `row` (filtered::Kept) into cuts[row], one
/// workgroup a row: a sampling request's filters; every other row (greedy,
/// unfiltered, past its request's bonus row, without a finite max) keeps every id.
template <class Logit, int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void select_kernel(VerifyArgs a, filtered::Kept* cuts) {
  RACEORACLE_SHARED(unsigned, smem_u, 32);
  RACEORACLE_SHARED(filtered::Histograms<THREADS>, hist, 1);
  RACEORACLE_SHARED(filtered::TopSet, top, 1);
  device::wait_for_prior_grid();
  device::allow_next_grid();
  const std::int64_t row = blockIdx.x, req = row / (a.drafts + 1), n = a.vocab;
  const float T = a.temperatures[req];
  const filtered::RowFilters f = filtered::read_filters<D>(a.filters, n, req);
  filtered::Kept k;
  if (row % (a.drafts + 1) <= draft_count<D>(a, req) && !is_greedy<D>(T, a.greedy_eps) && f.any()) {
    const Logit* x = static_cast<const Logit*>(a.target) + row * a.target_stride;
    const float t = race::clamp_temperature(T);
    k = filtered::select_kept(filtered::SelectRow<Logit, THREADS, D, PreScaleWeight>{x, n, {0.0f, t}, smem_u, hist, filtered::Fixed(n), top}, f)
            .kept;  // every id kept where the row has no finite max
  }
  if (threadIdx.x == 0) cuts[row] = k;
}

/// Id i's weight exp(fl(x / t) - m) (x its logit), or 0 where the row's cuts drop it.
template <class Logit>
__device__ __forceinline__ float kept_weight(const filtered::Kept& k, std::int64_t i, float x, float t, float m_safe) {
  const float w = expf(x / t - m_safe);
  return k.keeps(filtered::rank_key<Logit>(x), i, w) ? w : 0.0f;
}

}  // namespace raceoracle::kernels::verify
