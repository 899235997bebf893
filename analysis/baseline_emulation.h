#pragma once
/// The single-pass baseline's race launch (kernels/baseline.hip) on one row,
/// computed on the host with the kernel's own operations in the kernel's own
/// order: which ids each thread visits (for_each_vector's 16-byte loads, or
/// one id at a time on a row that is not 16-byte aligned), its running max
/// of x * (1 / T) and the rescales of its best key and sum by exp(m_old -
/// m_new), the block's rescale to the row max, the block sum (butterflies of
/// `warp_size` lanes, then across warps) and the division by it. With the
/// host's expf, which is the cpu backend's, its tokens are the cpu kernel's
/// (tests/analysis/baseline_emulation_tests.cpp); on a GPU its keys carry
/// errors of the same size, not the same bits. What `divergence` predicts
/// the baseline's disagreement with fused-post from (docs/DIVERGENCE.md).
#include <cstdint>
#include <vector>

#include "oracle/row.h"

namespace raceoracle::analysis {

struct BaselineLaunch {
  int threads = 0;    ///< the race launch's workgroup (kernels::kBaselineRaceThreads)
  int warp_size = 0;  ///< the backend's (kernels::warp_size())
  /// Ids a thread loads at once: a 16-byte vector (8 bf16, 4 f32) where the
  /// row's logits and noise start on 16 bytes, else 1 (id by id).
  int load_ids = 1;
};

class BaselineRace {
 public:
  /// The row's noise-free part, from its logits (its noise is not read):
  /// every thread's loads, the loads at which its max grew, and the row's sum.
  /// Kept: a few growths a thread, not the loads, so that a study can hold
  /// one for each of its logit rows.
  BaselineRace(const oracle::RowView& row, float eps, const BaselineLaunch& launch);
  /// The key the block compares for id i had it been its thread's best:
  /// exp(xs - m) / (E + eps) at its load, rescaled with its thread's later
  /// maxima and to the row's, divided by the row's sum. `e` is its noise.
  float key(std::int64_t i, float e) const;
  /// The baseline's token among `candidates` (ascending ids, the rest of the
  /// row certainly below them), `noise` the row's: each thread's best as its
  /// fold compares them (at the later one's load; a tie keeps the lower id),
  /// then the block's largest final key, a tie to the lower id. -1 when there
  /// is none.
  std::int64_t token(const std::vector<std::int64_t>& candidates, const float* noise) const;

 private:
  /// A load at which its thread's running max of x * (1 / T) grew.
  struct Growth {
    std::int32_t load;  ///< the load's index in its thread's order
    float before, after;
  };
  int thread_of(std::int64_t i) const;
  std::int32_t load_of(int thread, std::int64_t i) const;
  /// The thread's running max after load `at` (-inf before its first growth).
  float max_after(int thread, std::int32_t at) const;
  /// The key of id i at its load, rescaled through the thread's loads up to `until` (exclusive).
  float key_until(int thread, std::int32_t at, std::int64_t i, float e, std::int32_t until) const;
  float final_key(int thread, float k) const;

  oracle::RowView row_;  ///< its logits (its noise is not read)
  float eps_, inv_t_;
  BaselineLaunch launch_;
  std::int64_t whole_ = 0;  ///< ids covered by whole loads of launch_.load_ids
  std::vector<std::int32_t> first_growth_;  ///< per thread, into growths_; one more entry at the end
  std::vector<Growth> growths_;             ///< every thread's, in its order
  std::vector<std::int32_t> load_count_;    ///< per thread
  float gmax_ = 0, sum_ = 0;
};

}  // namespace raceoracle::analysis
