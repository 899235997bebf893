#pragma once
/// The losslessness law (analysis/verify_lossless.h) on a compiled-in verify
/// kernel: the requests it is judged on, and a pipeline that draws for each
/// run what an engine draws (the drafts from their probabilities, the
/// uniforms, the recovery and bonus noise), independently, or with the
/// verify noise tied to the draft's as the field has shipped it
/// (../shared/FIELD_BUGS.md #25): the law must pass the first and fail the others.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/verify_lossless.h"
#include "kernels/defect.h"
#include "kernels/registry.h"
#include "race/definition.h"
#include "subject/verify_batch.h"

namespace raceoracle::analysis {

/// How the pipeline draws a run's randomness.
enum class VerifyNoise : std::uint8_t {
  independent,          ///< d_j ~ Q_j by inverse CDF; u, R, B fresh
  uniform_from_draft,   ///< d_j by an exponential race on Q_j; u_j the uniform the winner's E was made from, 1 - e^-E
  recovery_from_draft,  ///< d_j by an exponential race on Q_j; the recovery noise row is position 0's race noise
};
inline constexpr VerifyNoise kVerifyNoises[] = {VerifyNoise::independent, VerifyNoise::uniform_from_draft,
                                                VerifyNoise::recovery_from_draft};
const char* to_string(VerifyNoise n);  ///< "independent", "uniform-from-draft", "recovery-from-draft"
/// std::invalid_argument naming the choices for an unknown name.
VerifyNoise verify_noise_from_string(std::string_view name);

struct LosslessStudy {
  std::int64_t runs = 1 << 14;  ///< runs per request
  race::Dtype dtype = race::Dtype::f32;
  std::uint64_t seed = race::kCiSeed;
  VerifyNoise noise = VerifyNoise::independent;
  LosslessSettings law;
};

/// The requests (2 drafts, V = 64; deterministic in the seed): drafts near the
/// target at T = 1, 0.7 and 0.3; a draft far from it (the residual carries the
/// law); draft mass on ids the target masks (T = 1.5); a greedy request; a
/// draft that is certain (a fixed draft); a draft equal to the target.
subject::VerifyBatch lossless_requests(std::uint64_t seed, race::Dtype dtype);

struct LosslessRun {
  LosslessReport report;
  double seconds = 0, kernel_seconds = 0;
};

/// A verify step: the k + 1 ids per request it writes for a batch, [requests, drafts + 1].
using VerifyStep = std::function<std::vector<std::int32_t>(const subject::VerifyBatch&)>;
/// The definition itself: the oracle's exact chain (SPEC §11 in float64).
VerifyStep definition_step(const race::NumericsContract& contract = {});

/// Runs `step` study.runs times on every request, drawing as `study.noise`
/// says, and judges under `contract` (the step's).
LosslessRun run_lossless(const VerifyStep& step, const race::NumericsContract& contract, const LosslessStudy& study);

}  // namespace raceoracle::analysis
