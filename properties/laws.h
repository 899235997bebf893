#pragma once
/// The laws of SPEC §5, each a plain function over one materialized case: an
/// empty string when the law holds, otherwise a readable account of the first
/// row that breaks it (the ids that matter, the oracle's verdict with its
/// ambiguity set, what the kernel returned).
#include <string>

#include "subject/subject.h"

namespace raceoracle::properties {

struct LawContext {
  const subject::Subject& subject;
  const subject::Batch& batch;
  kernels::FusedConfig config;
};

using LawCheck = std::string (*)(const LawContext&);

std::string agrees_with_oracle(const LawContext& c);
std::string greedy_is_exact(const LawContext& c);      ///< lowest id, bit-exact, noise-blind
std::string masked_ids_never_win(const LawContext& c);
std::string forced_row_gives_forced_id(const LawContext& c);
std::string fully_masked_row_is_zero(const LawContext& c);
std::string tokens_in_range(const LawContext& c);      ///< out-of-contract rows included
std::string partials_are_finite(const LawContext& c);  ///< fused only
std::string fused_matches_baseline(const LawContext& c);
std::string deterministic(const LawContext& c);        ///< repeated launches, other tile sizes
std::string rows_are_independent(const LawContext& c);  ///< a row's token, its filters with it, whatever the batch
/// A row's token alone and among batchmates of every size in kBatchmateSizes: the same (exact), or another
/// only where both are explained (within_contract), as the subject declares.
std::string batchmate_invariance(const LawContext& c);
std::string key_error_within_bound(const LawContext& c);  ///< fused only: stage-1 keys vs the certified bound
std::string nan_isolation(const LawContext& c);        ///< a NaN logit acts like a masked id
std::string sentinel_escapes_visibly(const LawContext& c);  ///< fused only: no result clamp
std::string large_stride_rows(const LawContext& c);    ///< 64-bit row offsets (rows * stride > 2^32)


/// Largest |fp32 key / exact key - 1| / bound seen by key_error_within_bound
/// in this process (tightness of the error model on real kernel output).
double worst_key_error_ratio();

}  // namespace raceoracle::properties
