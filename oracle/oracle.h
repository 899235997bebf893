#pragma once
/// The float64 oracle: the exact function of SPEC §1 and a verdict per row.
#include <string>
#include <vector>

#include "oracle/contract.h"
#include "oracle/error_model.h"
#include "oracle/row.h"

namespace raceoracle::oracle {

enum class RowClass : std::uint8_t { greedy, sampling, forced, fully_masked, invalid };
const char* to_string(RowClass c);

/// Why a row is out of contract. A kernel must still return an id in [0, V).
/// Noise is checked only for rows that read it (not greedy rows).
/// T = +inf is out of contract too: x / t is undefined for a masked id (-inf / inf).
enum class InvalidReason : std::uint8_t {
  none, nan_logit, pos_inf_logit, nan_temperature, inf_temperature, nan_noise, negative_noise, inf_noise,
  zero_noise_without_eps,  ///< no eps (race::EpsRule::none, or the launch's eps = 0): a key divides by a zero draw
  bad_filter,  ///< top_p outside (0, 1] or min_p outside [0, 1] (SPEC §9)
  bad_draft,   ///< a verify request's draft id outside [0, V), or a draft probability negative, NaN or inf (SPEC §11)
  bad_uniform,  ///< a verify request's acceptance uniform outside [0, 1), or NaN (SPEC §11)
  bad_draft_count  ///< a verify request's own draft count outside [0, k] (SPEC §11)
};
const char* to_string(InvalidReason r);
/// Whether `r` lies in the parameters a request carries (temperature, noise,
/// filters, drafts, uniforms, draft counts), which whoever made the inputs
/// chose, rather than in the logits a model produced: a file whose requests
/// have such parameters judges less than it seems (`verify`, `verify-step`).
constexpr bool is_parameter(InvalidReason r) {
  return r != InvalidReason::none && r != InvalidReason::nan_logit && r != InvalidReason::pos_inf_logit &&
         r != InvalidReason::zero_noise_without_eps;
}

/// The oracle's verdict for one row, in float64.
/// `ambiguous` lists every id that fp32 arithmetic under the contract could
/// legitimately pick; it holds `token` and is almost always {token}.
struct Verdict {
  std::int64_t token = 0;
  RowClass row_class = RowClass::sampling;
  InvalidReason reason = InvalidReason::none;
  std::int64_t reason_id = -1;  ///< first offending id (-1: the temperature)
  double key = 0;               ///< sampling: the winner's exact key; greedy: its logit
  double rho = 0;               ///< relative bound of the winner's fp32 key
  std::int64_t runner_up = -1;  ///< best id after `token`, -1 if none
  double runner_up_key = 0;
  /// sampling: (key - runner_up_key) / key; greedy: the logit difference.
  double gap = 0;
  std::vector<std::int64_t> ambiguous;
  /// A filtered row (SPEC §9): how many ids the definition keeps, and how many
  /// ids' membership fp32 may flip (their race winners are in `ambiguous`). -1: unfiltered.
  std::int64_t kept = -1, kept_boundary = 0;
  /// A fully masked row of a sampler that declares race::FullyMasked::any: every id in range is explained.
  bool any_id = false;

  std::string describe() const;  ///< one readable line
};

Verdict decide(const RowView& row, const NumericsContract& contract, const RaceConstants& k = {});

/// Rows in parallel on `threads` OS threads (0: all cores). Validates `b` first.
std::vector<Verdict> decide_batch(const BatchView& b, const NumericsContract& contract,
                                  const RaceConstants& k = {}, int threads = 0);

/// The common scale of a sampling row (row max and clamped temperature).
RowScale row_scale(const RowView& row, const RaceConstants& k = {});

/// How a kernel's token compares with the verdict.
enum class Outcome : std::uint8_t {
  identical,        ///< same id as the oracle
  explained,        ///< another id of the ambiguity set
  unexplained,      ///< a bug
  out_of_range,     ///< not in [0, V): always a bug, out-of-contract rows included
  out_of_contract,  ///< invalid row, token in range: all that can be asked
};
const char* to_string(Outcome o);
Outcome judge(const Verdict& v, std::int64_t token, std::int64_t vocab);
inline bool is_failure(Outcome o) { return o == Outcome::unexplained || o == Outcome::out_of_range; }
/// How many judgements came out each way.
struct OutcomeCounts {
  std::int64_t identical = 0, explained = 0, unexplained = 0, out_of_range = 0, out_of_contract = 0;
  void add(Outcome o);
  bool failed() const { return unexplained + out_of_range > 0; }
};

}  // namespace raceoracle::oracle
