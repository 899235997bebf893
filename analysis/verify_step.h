#pragma once
/// A verify step's dump judged by the oracle (SPEC §11): every request's
/// chain decided and the sampler's k + 1 ids judged; what `raceoracle
/// verify-step` reports. The format, written by the Python package's
/// write_verify_dump: safetensors with `target_logits` [R, k + 1, V] (BF16,
/// F16 or F32), `draft_ids` [R, k] (I32 or I64), `draft_probs` [R, k, V] (F32;
/// absent: deterministic drafts), `uniforms` [R, k] (F64 or F32),
/// `recovery_noise` and `bonus_noise` [R, V] (F32), `temperatures` [R] (F32),
/// `tokens` [R, k + 1] (I32 or I64; -1 after the emitted token), optionally
/// `draft_counts` [R] (I32 or I64: each request's own k_r <= k, its ids k_r +
/// 1 then -1; absent: every request has k) and `top_k` (I32 or I64), `top_p`,
/// `min_p` (F32), each [R], all three or none: each request's filters (SPEC
/// §9), applied to every target row of a sampling request; metadata: the
/// contract fields (protocol/contract_fields.h), `eps`, `greedy_eps`, and
/// `uniform_compare` (f64, the default, or f32: race::VerifyRules).
#include <cstdint>
#include <string>
#include <vector>

#include "oracle/verify.h"
#include "protocol/safetensors.h"

namespace raceoracle::analysis {

struct VerifyStepReport : oracle::OutcomeCounts {
  std::int64_t requests = 0, drafts = 0, vocab = 0;
  std::string logits_dtype;
  bool draft_probs = false;  ///< stochastic drafts (false: deterministic, Q the point mass)
  bool filtered = false;     ///< the requests carry filters (top_k, top_p, min_p)
  oracle::NumericsContract contract;
  oracle::RaceConstants constants;
  oracle::VerifyRules rules;
  std::int64_t accepted = 0;  ///< drafts the sampler accepted, over every request judged in contract
  std::vector<std::string> failures;  ///< readable, the first few
  /// Requests out of contract for their parameters (oracle::is_parameter):
  /// how many, and the first few with their reason and values. They fail
  /// the run unless `parameters_allowed` (verify-step --allow-out-of-contract).
  std::int64_t bad_parameters = 0;
  std::vector<std::string> bad_parameter_lines;
  bool parameters_allowed = false;
  bool ok() const { return !failed() && (parameters_allowed || bad_parameters == 0); }
};

/// Throws SafetensorsError naming the problem on a bad file or document.
VerifyStepReport verify_step_file(const std::string& path, int max_failures = 10);
VerifyStepReport verify_step_document(const protocol::Safetensors& s, int max_failures = 10);

}  // namespace raceoracle::analysis
