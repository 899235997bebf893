#pragma once
/// The verify step's losslessness, statistically (SPEC §11, "Why this output
/// is lossless"): a sampler that draws its drafts, uniforms and noise itself
/// (or a pipeline that draws them for a kernel) is run n times on each
/// request; the first emitted token must have the target's law P_0, and the
/// second, among the runs that accepted the first draft, the law P_1 whatever
/// the first was (split by whether it was the likeliest accepted draft).
/// Both are the frequency law (analysis/frequency.h: a family-wise false-alarm
/// rate that holds at every n, and the power it had) against the emitted
/// law's band (oracle/verify_distribution.h). Verify noise that is not
/// independent of the draft's moves one of the two. analysis/FREQUENCY.md,
/// "The verify step's losslessness", says why and what it measured.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/frequency.h"
#include "oracle/verify.h"
#include "protocol/safetensors.h"

namespace raceoracle::analysis {

struct LosslessSettings {
  double alpha = 1e-6;       ///< the run's family-wise false-alarm rate (half to each token's law)
  double min_expected = 16;  ///< a bin's least expected count
  double power = 0.99;       ///< the detection probability the power report is at
  /// The binned total-variation distance every request's first-token law must
  /// be visible at, with probability `power`: runs too few for it make the
  /// verdict INCONCLUSIVE (a failure naming about how many runs would do),
  /// never a vacuous pass (analysis/FREQUENCY.md, "Too few runs").
  double max_tv = 0.5;
  bool operator==(const LosslessSettings&) const = default;
};
/// As JSON and back (a missing field keeps its default; std::invalid_argument
/// naming a malformed or out-of-range one).
nlohmann::json to_json(const LosslessSettings& s);
LosslessSettings lossless_settings_from_json(const nlohmann::json& j);
/// Throws std::invalid_argument naming the first field out of its range.
void check(const LosslessSettings& s);

/// One row of the second token's law: a request's runs that accepted the
/// first draft, those whose first token was (or was not) the likeliest accepted.
struct SecondTokenRow {
  std::int64_t request = 0;
  bool likeliest = true;
  std::int64_t available = 0;  ///< such runs
};

struct LosslessReport {
  std::int64_t requests = 0, drafts = 0, vocab = 0, draws = 0;
  std::vector<std::string> malformed;  ///< runs whose k + 1 ids are no verify output (exact: each fails), the first few
  std::int64_t malformed_runs = 0;
  FrequencyReport first;               ///< a row per request: the first emitted token
  std::vector<SecondTokenRow> second_rows;
  std::int64_t second_draws = 0;       ///< per row of `second` (0: not tested)
  FrequencyReport second;
  std::vector<std::string> notes;      ///< what was left untested, and why
  /// Requests whose first-token law the runs could not see at `max_tv`, one
  /// line each (the first few): the verdict is then INCONCLUSIVE.
  std::vector<std::string> underpowered;
  std::int64_t underpowered_requests = 0;
  bool conclusive() const { return underpowered_requests == 0; }
  bool passed() const { return malformed_runs == 0 && first.passed && second.passed && conclusive(); }
  const char* verdict() const { return passed() ? "PASS" : !conclusive() && malformed_runs == 0 && first.passed && second.passed ? "INCONCLUSIVE" : "FAIL"; }
};

/// Judges `tokens` ([requests, draws, drafts + 1] ids, -1 after the emitted
/// one) of the requests of `b`: their targets, draft probabilities (or ids,
/// deterministic drafts), temperatures; their uniforms and noise are not read.
/// std::invalid_argument for a request out of contract or draws < 1.
LosslessReport verify_lossless(const oracle::VerifyBatchView& b, const std::vector<std::int32_t>& tokens,
                               std::int64_t draws, const oracle::NumericsContract& c, const oracle::RaceConstants& k,
                               const LosslessSettings& s = {});

/// The file `raceoracle verify-lossless` reads: safetensors with
/// `target_logits` [R, k + 1, V] (BF16, F16 or F32), `draft_probs` [R, k, V]
/// (F32) or `draft_ids` [R, k] (I32 or I64: deterministic drafts),
/// `temperatures` [R] (F32), `tokens` [R, n, k + 1] (I32 or I64); metadata: the
/// contract fields, `eps`, `greedy_eps`. Throws SafetensorsError naming the problem.
LosslessReport verify_lossless_file(const std::string& path, const LosslessSettings& s = {});
LosslessReport verify_lossless_document(const protocol::Safetensors& doc, const LosslessSettings& s = {});

nlohmann::json to_json(const LosslessReport& r);
/// Verdict, draws, each failure, the power of both laws.
std::string describe(const LosslessReport& r);

}  // namespace raceoracle::analysis
