#pragma once
/// The speculative-decoding verify step in float64 (SPEC §11): for one
/// request, the exact chain (how many drafts are accepted, the token then
/// emitted) and every chain fp32 arithmetic may legitimately produce: the
/// counts it allows, and for each the tokens it may emit. The derivation is
/// oracle/ERROR_MODEL.md, "The verify step".
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "oracle/oracle.h"
#include "oracle/probability.h"
#include "race/verify.h"

namespace raceoracle::oracle {

using race::VerifyRules;

/// One verify request (SPEC §11). Views only.
struct VerifyView {
  const void* target = nullptr;  ///< [drafts + 1, vocab] logits of `dtype`, rows `stride` elements apart
  Dtype dtype = Dtype::f32;
  std::int64_t vocab = 0;
  std::int64_t stride = 0;
  std::int64_t drafts = 0;                  ///< k (the request's own count)
  bool draft_count_in_contract = true;      ///< false: the count given was outside [0, k] (drafts holds it clamped)
  const std::int32_t* draft_ids = nullptr;  ///< [k]
  const float* draft_probs = nullptr;       ///< [k, vocab] (rows `vocab` apart), or nullptr: deterministic drafts
  const double* uniforms = nullptr;         ///< [k]
  const float* recovery_noise = nullptr;    ///< [vocab]: the residual race's E
  const float* bonus_noise = nullptr;       ///< [vocab]: the bonus race's E
  float temperature = 1.0f;
  const race::RowFilter* filter = nullptr;  ///< the request's filters, applied to every target row; nullptr: none

  /// Target row `j` (0..drafts) with `noise` as its E.
  RowView target_row(std::int64_t j, const float* noise) const;
  /// The draft probability of id `i` at position `j` (the point mass at the draft without draft probabilities).
  double draft_prob(std::int64_t j, std::int64_t i) const;
};

/// Requests laid out as the verify kernels read them (kernels::VerifyArgs):
/// targets [R, k + 1, V] of `dtype`, drafts and uniforms [R, k], draft
/// probabilities [R, k, V] or none, noise rows [R, V], temperatures [R].
struct VerifyBatchView {
  const void* target = nullptr;
  Dtype dtype = Dtype::f32;
  std::int64_t requests = 0, drafts = 0, vocab = 0;
  const std::int32_t* draft_ids = nullptr;
  const float* draft_probs = nullptr;
  const double* uniforms = nullptr;
  const float* recovery_noise = nullptr;
  const float* bonus_noise = nullptr;
  const float* temperatures = nullptr;
  /// [requests]: each request's own count k_r in [0, drafts], its drafts the
  /// first k_r of its row and its bonus row target row k_r; null: every request has `drafts`.
  const std::int32_t* draft_counts = nullptr;

  VerifyView request(std::int64_t r) const;  ///< request r (unfiltered)
};

/// Whether fp32 arithmetic may accept a draft: surely, surely not, or either way.
enum class Acceptance : std::uint8_t { accept, reject, either };
const char* to_string(Acceptance a);

struct VerifyVerdict {
  RowClass request_class = RowClass::sampling;  ///< greedy, sampling or invalid
  InvalidReason reason = InvalidReason::none;
  std::int64_t reason_position = -1;  ///< the target row or draft position it concerns (-1: the request)
  std::int64_t reason_id = -1;
  std::int64_t accepted = 0;  ///< the exact chain: drafts accepted (a)
  std::int64_t token = 0;     ///< the exact chain: the token emitted after them
  /// Per draft position evaluated (up to the first certain rejection): fp32's latitude.
  std::vector<Acceptance> acceptance;
  /// Per draft position evaluated: P / Q of the draft, exact (sampling requests).
  std::vector<double> ratio;
  /// Per count a in [0, k]: the tokens a chain stopping there may emit,
  /// ascending; empty where fp32 cannot stop there.
  std::vector<std::vector<std::int64_t>> emitted;

  bool allows(std::int64_t a) const { return a >= 0 && a < std::int64_t(emitted.size()) && !emitted[std::size_t(a)].empty(); }
  std::string describe() const;  ///< one readable line
};

/// The verdict for one request, under the sampler's numerics contract (its
/// conventions included) and verify rules.
VerifyVerdict decide_verify(const VerifyView& r, const NumericsContract& c, const RaceConstants& k = {},
                            const VerifyRules& rules = {});

/// Target row j's probabilities over its kept set (every finite id when
/// unfiltered): exact, and the interval of each that fp32 may compute (with
/// `eps`, the request's race eps, for the row's scale).
Probabilities target_probabilities(const VerifyView& r, std::int64_t j, const NumericsContract& c, float eps);

/// The interval of the ratio P'[d] / q that fp32 may compute for draft `d`
/// (its probability's interval in `P`, the division's rounding), q > 0.
std::pair<double, double> acceptance_ratio(const Probabilities& P, std::int64_t d, double q, const NumericsContract& c);

/// How a sampler's k + 1 ids compare with the verdict, and why in words.
struct VerifyJudgement {
  Outcome outcome = Outcome::identical;
  std::string why;  ///< empty when identical
};
/// `out`: the ids the sampler wrote, `slots` of them (the batch's k + 1 where
/// requests have counts of their own: every one past the request's k_r + 1
/// must hold the placeholder); by default the request's k + 1.
VerifyJudgement judge_verify(const VerifyVerdict& v, const VerifyView& r, const std::int32_t* out, std::int64_t slots = 0);

}  // namespace raceoracle::oracle
