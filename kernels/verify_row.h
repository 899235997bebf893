#pragma once
/// What the two verify kernels share (SPEC §11): the acceptance compare, the
/// residual race's numerator, where a position's draft probabilities are, and
/// the k + 1 ids written, each as the defect D makes it (kernels/defect.h).
#include <cstdint>

#include "kernels/race.h"

namespace raceoracle::kernels::verify {

/// Draft `j` of request `req` accepted: Q_d > 0 and P_d / Q_d >= u, the ratio in fp32, the compare in float64.
template <Defect D>
__device__ __forceinline__ bool accepts(float p, float qd, double u) {
  if (D == Defect::accept_strict) return qd > 0.0f && double(p / qd) > u;
  return qd > 0.0f && double(p / qd) >= u;
}

/// Request `req`'s own draft count k_r, clamped to [0, k] so that a count out
/// of contract never sends a kernel past its request's rows.
template <Defect D>
__device__ __forceinline__ std::int64_t draft_count(const VerifyArgs& a, std::int64_t req) {
  if (D == Defect::draft_counts_ignored || !a.draft_counts) return a.drafts;
  const std::int64_t c = a.draft_counts[req];
  return c < 0 ? 0 : c > a.drafts ? a.drafts : c;
}

/// Position j's draft probabilities of request `req`; null: the point mass at the draft.
template <Defect D>
__device__ __forceinline__ const float* draft_row(const VerifyArgs& a, std::int64_t req, std::int64_t j) {
  if (!a.draft_probs) return nullptr;
  return a.draft_probs + (req * a.drafts + (D == Defect::draft_row0 ? 0 : j)) * a.vocab;
}

/// The residual race's numerator at id i: max(P_i - Q_i, 0), Q the row `q` or the point mass at `d`.
template <Defect D>
__device__ __forceinline__ float residual(float p, const float* q, std::int64_t i, std::int32_t d) {
  if (D == Defect::recover_from_target) return p;
  const float qi = q ? q[i] : (i == d ? 1.0f : 0.0f);
  return D == Defect::residual_unclamped ? p - qi : fmaxf(p - qi, 0.0f);
}

/// The request's k + 1 ids: the accepted drafts, the emitted token, then the
/// placeholder (under bonus_after_reject, `bonus` right after a rejection's token).
__device__ __forceinline__ void write_chain(std::int32_t* out, const std::int32_t* d, std::int64_t rows, std::int64_t acc,
                                           int token, int bonus) {
  for (std::int64_t j = 0; j < rows; ++j)
    out[j] = j < acc ? d[j] : j == acc ? token : j == acc + 1 ? bonus : race::kVerifyPlaceholder;
}

/// Ids a thread of race_row takes at a time: their loads are issued together,
/// so that one workgroup walking a whole row keeps enough loads in flight (a
/// load at a time left it latency-bound: 0.5 ms a row of 163840 on the H100).
inline constexpr int kRaceIdsPerStep = 4;

/// The race of `num(i) / (E_i + eps)` over the row, ties to the lowest id; every thread gets the winner.
/// A thread takes kRaceIdsPerStep consecutive ids a step, in increasing order.
template <int THREADS, Defect D, class Num>
__device__ int race_row(std::int64_t n, const float* E, float eps, Num num, device::SharedPtr<OrderedBest> smem) {
  if (D == Defect::eps_dropped) eps = 0.0f;
  Best best = no_candidate();
  for (std::int64_t i0 = std::int64_t(threadIdx.x) * kRaceIdsPerStep; i0 < n; i0 += std::int64_t(THREADS) * kRaceIdsPerStep) {
    float key[kRaceIdsPerStep];
#pragma unroll
    for (int j = 0; j < kRaceIdsPerStep; ++j) key[j] = i0 + j < n ? num(i0 + j) / (E[i0 + j] + eps) : NAN;
#pragma unroll
    for (int j = 0; j < kRaceIdsPerStep; ++j)
      if (i0 + j < n) best = BetterOf<D>{}(best, Best{key[j], int(i0 + j)});
  }
  return block_best<D>(best, smem).idx;
}

/// A draft id the kernel may read at: outside [0, V) the request is out of contract and the draft is rejected unread.
__device__ __forceinline__ bool in_row(std::int32_t d, std::int64_t n) { return d >= 0 && d < n; }

}  // namespace raceoracle::kernels::verify
