#pragma once
/// Verify requests (SPEC §11) owned on the host, in the layout the verify
/// kernels read; the one way tests and laws run a verify kernel on them and
/// judge its output. The generator is fixtures/verify_requests.h.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/defect.h"
#include "kernels/registry.h"
#include "oracle/verify.h"

namespace raceoracle::subject {

/// A batch of requests of up to `drafts` drafts each, in the layout the
/// verify kernels read (kernels::VerifyArgs).
struct VerifyBatch {
  race::Dtype dtype = race::Dtype::f32;
  std::int64_t requests = 0, drafts = 0, vocab = 0;
  std::vector<float> target_f32;            ///< [requests, drafts + 1, vocab] (dtype f32)
  std::vector<std::uint16_t> target_bf16;   ///< the same (dtype bf16)
  std::vector<std::int32_t> draft_ids;      ///< [requests, drafts]
  std::vector<std::int32_t> draft_counts;   ///< [requests]: each request's own k_r in [0, drafts], or empty: all `drafts`
  std::vector<float> draft_probs;           ///< [requests, drafts, vocab], or empty: deterministic drafts
  std::vector<double> uniforms;             ///< [requests, drafts]
  std::vector<float> recovery_noise, bonus_noise;  ///< [requests, vocab] each
  std::vector<float> temperatures;          ///< [requests]
  std::vector<race::RowFilter> filters;     ///< [requests]: each request's filters (SPEC §9), or empty: none
  race::RaceConstants constants;

  const void* target() const;
  std::int64_t draft_count(std::int64_t r) const;  ///< request r's own count as given (drafts without counts)
  /// Request r as the oracle reads it.
  oracle::VerifyView request(std::int64_t r) const;
};

/// The requests `rs` of `b`, in that order (a request may repeat): a failing
/// request alone, or the batch reordered.
VerifyBatch requests_of(const VerifyBatch& b, const std::vector<std::int64_t>& rs);

/// How a message names request r of `b`, with its temperature ("the request"
/// in a batch of one: a failure narrowed to one request).
std::string request_name(const VerifyBatch& b, std::int64_t r);

/// The k + 1 ids per request (race::kVerifyPlaceholder after the emitted
/// one) that verify kernel `k` built with `defect` writes for `b`, [requests, drafts + 1].
std::vector<std::int32_t> run_verify_kernel(const kernels::VerifyKernel& k, const VerifyBatch& b,
                                            kernels::Defect defect = kernels::Defect::none);

/// Every request of a batch judged against the oracle.
struct VerifyTally : oracle::OutcomeCounts {
  std::string first_failure;  ///< the first failing request, in words (empty: none)
};
VerifyTally judge_verify_batch(const VerifyBatch& b, const std::vector<std::int32_t>& tokens,
                               const race::NumericsContract& contract, const race::VerifyRules& rules = {});

/// A verify step that lives outside this process (protocol/: a sampler that
/// declared `step = verify`), judged by the verify laws beside the verify kernels.
class ExternalVerifyStep {
 public:
  virtual ~ExternalVerifyStep() = default;
  virtual const std::string& name() const = 0;
  virtual race::NumericsContract contract() const = 0;
  virtual race::VerifyRules verify_rules() const = 0;
  /// The k + 1 ids per request it writes for `b` into `ids`; a status saying
  /// why none came back otherwise (an error it raised on these inputs, or a breakdown).
  virtual kernels::Status run_verify(const VerifyBatch& b, std::vector<std::int32_t>& ids) const = 0;
  /// Non-empty once it broke down (not an answer about the inputs): why. Reading clears it.
  virtual std::string take_breakdown() const = 0;
  /// How `raceoracle check` names it: "--sampler 'CMD'" with any overrides.
  virtual std::string replay_args() const = 0;
};

}  // namespace raceoracle::subject
