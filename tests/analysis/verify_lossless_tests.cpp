// The verify step's losslessness law (analysis/verify_lossless.h) and the
// emitted law's band (oracle/verify_distribution.h): the definition itself
// (the oracle's exact chain) passes with independent noise, over seeds and
// both dtypes; the same pipeline with its verify noise tied to the draft's
// (../shared/FIELD_BUGS.md #25) fails, and so does a recovered token drawn from
// the target instead of the residual; the band holds the target's law;
// malformed runs and files are refused, the settings round-trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "analysis/verify_lossless_study.h"
#include "fixtures/verify_requests.h"
#include "oracle/verify_distribution.h"
#include "protocol/contract_fields.h"
#include "tests/protocol/safetensors_files.h"

namespace raceoracle::analysis {
namespace {

LosslessRun run(const VerifyStep& step, VerifyNoise noise, std::int64_t runs, std::uint64_t seed,
                race::Dtype dtype = race::Dtype::f32) {
  LosslessStudy s;
  s.noise = noise, s.runs = runs, s.seed = seed, s.dtype = dtype;
  return run_lossless(step, {}, s);
}

/// The definition, except that a rejection's token is the race on P_j (the
/// target) with the recovery noise instead of the residual race.
std::vector<std::int32_t> recovered_from_target(const subject::VerifyBatch& b) {
  std::vector<std::int32_t> out = definition_step()(b);
  for (std::int64_t q = 0; q < b.requests; ++q) {
    std::int32_t* ids = out.data() + q * (b.drafts + 1);
    std::int64_t a = 0;
    while (a < b.drafts && ids[a + 1] != race::kVerifyPlaceholder) ++a;
    const oracle::VerifyView v = b.request(q);
    if (a < b.drafts && v.temperature > 0)
      ids[a] = std::int32_t(oracle::decide(v.target_row(a, v.recovery_noise), {}, b.constants).token);
  }
  return out;
}

TEST(VerifyLossless, TheDefinitionPassesOverSeeds) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const LosslessRun r = run(definition_step(), VerifyNoise::independent, 1 << 14, seed,
                              seed % 2 ? race::Dtype::bf16 : race::Dtype::f32);
    EXPECT_TRUE(r.report.passed()) << "seed " << seed << "\n" << describe(r.report);
    EXPECT_EQ(r.report.first.rows.size(), 8u);
    EXPECT_GE(r.report.second_rows.size(), 8u) << describe(r.report);  // most requests accept often enough
    EXPECT_GT(r.report.second_draws, 1000) << describe(r.report);
  }
}

TEST(VerifyLossless, VerifyNoiseTiedToTheDraftsFails) {
  // The uniform the draft's winning E was made from: drafts accepted too often.
  const LosslessRun u = run(definition_step(), VerifyNoise::uniform_from_draft, 1 << 12, race::kCiSeed);
  EXPECT_FALSE(u.report.passed());
  EXPECT_FALSE(u.report.first.passed) << describe(u.report);
  // The recovery race on the draft race's noise: the residual's ids with much
  // draft mass held back. Smaller: it needs 4x the runs.
  const LosslessRun r = run(definition_step(), VerifyNoise::recovery_from_draft, 1 << 14, race::kCiSeed);
  EXPECT_FALSE(r.report.passed()) << describe(r.report);
  // The same runs with independent noise pass (the same seed).
  EXPECT_TRUE(run(definition_step(), VerifyNoise::independent, 1 << 14, race::kCiSeed).report.passed());
}

TEST(VerifyLossless, ARecoveredTokenFromTheTargetFails) {
  const LosslessRun r = run(recovered_from_target, VerifyNoise::independent, 1 << 12, race::kCiSeed);
  EXPECT_FALSE(r.report.first.passed) << describe(r.report);
  bool named = false;
  for (const auto& row : r.report.first.rows) named |= row.failed && row.failure.find("drawn") != std::string::npos;
  EXPECT_TRUE(named) << describe(r.report);
}

TEST(VerifyLossless, MalformedRunsFailByThemselves) {
  const subject::VerifyBatch b = lossless_requests(1, race::Dtype::f32);
  const std::int64_t n = 64, k = b.drafts;
  std::vector<std::int32_t> tokens(std::size_t(b.requests * n * (k + 1)), race::kVerifyPlaceholder);
  for (std::int64_t q = 0; q < b.requests * n; ++q) tokens[std::size_t(q * (k + 1))] = 0;  // id 0, then nothing
  auto judge = [&](const std::vector<std::int32_t>& t) {
    const oracle::VerifyBatchView view{b.target(), b.dtype, b.requests, k, b.vocab, b.draft_ids.data(),
                                       b.draft_probs.data(), b.uniforms.data(), b.recovery_noise.data(),
                                       b.bonus_noise.data(), b.temperatures.data()};
    return verify_lossless(view, t, n, {}, b.constants);
  };
  EXPECT_EQ(judge(tokens).malformed_runs, 0);
  std::vector<std::int32_t> bad = tokens;
  bad[0] = race::kVerifyPlaceholder;                     // request 0, run 0: nothing emitted
  bad[std::size_t(1 * (k + 1))] = std::int32_t(b.vocab);  // run 1: an id past V
  bad[std::size_t(2 * (k + 1) + 2)] = 5;                 // run 2: an id after the placeholder
  const LosslessReport r = judge(bad);
  EXPECT_EQ(r.malformed_runs, 3);
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.malformed.size(), 3u);
  EXPECT_NE(r.malformed[0].find("no token emitted"), std::string::npos) << r.malformed[0];
  EXPECT_NE(r.malformed[1].find("outside [0, 64)"), std::string::npos) << r.malformed[1];
  EXPECT_NE(r.malformed[2].find("after the placeholder"), std::string::npos) << r.malformed[2];
  EXPECT_THROW(verify_lossless({b.target(), b.dtype, b.requests, k, b.vocab, b.draft_ids.data(), b.draft_probs.data(),
                                b.uniforms.data(), b.recovery_noise.data(), b.bonus_noise.data(),
                                b.temperatures.data()},
                               tokens, n + 1, {}, b.constants),
               std::invalid_argument);
}

/// The band (ERROR_MODEL.md, "The verify step's emitted law") holds the
/// target's law for drafts that sum to 1 in fp32's rounding, with its width
/// reported (how tight it is).
TEST(VerifyEmittedLaw, TheBandHoldsTheTargetsLaw) {
  std::vector<double> widths;  // (high - low) / p per id, p > 1e-6
  std::int64_t ids = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    fixtures::VerifyShape shape;
    shape.requests = 8, shape.drafts = 2, shape.vocab = 1 + std::int64_t(seed * 37 % 700);
    shape.dtype = seed % 2 ? race::Dtype::bf16 : race::Dtype::f32;
    const subject::VerifyBatch b = fixtures::random_verify_batch(seed, shape, {});
    for (std::int64_t q = 0; q < b.requests; ++q) {
      const oracle::VerifyView v = b.request(q);
      for (std::int64_t j = 0; j <= v.drafts; ++j) {
        double q_sum = 0;
        for (std::int64_t i = 0; j < v.drafts && i < b.vocab; ++i) q_sum += v.draft_prob(j, i);
        if (j < v.drafts && std::abs(q_sum - 1) > 1e-6) continue;  // a planted draft law that is no law
        const oracle::Distribution d = oracle::emitted_distribution(v, j, {}, b.constants);
        if (d.row_class != oracle::RowClass::sampling) continue;
        for (std::int64_t i = 0; i < b.vocab; ++i) {
          const double p = d.p[std::size_t(i)];
          if (!(p > 0)) continue;
          ++ids;
          EXPECT_LE(d.low(i), p) << "seed " << seed << " request " << q << " position " << j << " id " << i;
          EXPECT_GE(d.high(i), p) << "seed " << seed << " request " << q << " position " << j << " id " << i;
          if (p > 1e-6) widths.push_back((d.high(i) - d.low(i)) / p);
        }
      }
    }
  }
  std::sort(widths.begin(), widths.end());
  auto at = [&](double f) { return widths[std::size_t(f * double(widths.size() - 1))]; };
  std::printf("%lld ids; the band's width relative to p (p > 1e-6): median %.3g, 99%% %.3g, 99.9%% %.3g, widest %.3g\n",
              static_cast<long long>(ids), at(0.5), at(0.99), at(0.999), widths.back());
  EXPECT_GT(ids, 10000);
  // fp32's few ulps and the declared slacks, not a statistical margin; wide
  // only where the residual is within fp32's error of 0 (Q near P at T 0.05).
  EXPECT_LT(at(0.5), 1e-4);
  EXPECT_LT(at(0.99), 1e-2);
}

class VerifyLosslessFiles : public protocol::testing::SafetensorsFiles {};

TEST_F(VerifyLosslessFiles, AFileOfTheDefinitionsRunsPassesAndBadFilesAreRefused) {
  using protocol::testing::tensor;
  const subject::VerifyBatch b = lossless_requests(3, race::Dtype::f32);
  const std::int64_t R = b.requests, k = b.drafts, V = b.vocab, n = 4096;
  // The runs, drawn as the study draws them.
  LosslessStudy s;
  s.runs = n;
  std::vector<std::int32_t> captured(std::size_t(R * n * (k + 1)));
  std::int64_t done = 0;
  const VerifyStep capture = [&](const subject::VerifyBatch& batch) {
    std::vector<std::int32_t> ids = definition_step()(batch);
    const std::int64_t copies = batch.requests / R;
    for (std::int64_t c = 0; c < copies; ++c)
      for (std::int64_t r = 0; r < R; ++r)
        std::copy_n(ids.begin() + (c * R + r) * (k + 1), k + 1, captured.begin() + (r * n + done + c) * (k + 1));
    done += copies;
    return ids;
  };
  s.seed = 3;
  ASSERT_TRUE(run_lossless(capture, {}, s).report.passed());
  protocol::Safetensors f;
  f.tensors["target_logits"] = tensor("F32", {R, k + 1, V}, b.target_f32);
  f.tensors["draft_probs"] = tensor("F32", {R, k, V}, b.draft_probs);
  f.tensors["temperatures"] = tensor("F32", {R}, b.temperatures);
  f.tensors["tokens"] = tensor("I32", {R, n, k + 1}, captured);
  f.metadata = protocol::contract_fields({});
  const LosslessReport r = verify_lossless_file(write(f, "runs.safetensors"));
  EXPECT_TRUE(r.passed()) << describe(r);
  EXPECT_EQ(r.draws, n);
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["verdict"], "PASS");
  EXPECT_EQ(j["first_token"]["rows"].size(), std::size_t(R));

  auto refused = [&](protocol::Safetensors bad, const std::string& needle) {
    try {
      verify_lossless_document(bad);
      ADD_FAILURE() << "no error; expected one naming " << needle;
    } catch (const protocol::SafetensorsError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  protocol::Safetensors bad = f;
  bad.tensors["tokens"] = tensor("I32", {R, k + 1}, std::vector<std::int32_t>(std::size_t(R * (k + 1)), 0));
  refused(bad, "tokens must be");
  bad = f;
  bad.tensors.erase("draft_probs");
  refused(bad, "needs draft_probs");
  bad = f;
  bad.tensors["draft_ids"] = tensor("I32", {R, k}, b.draft_ids);
  refused(bad, "not both");
  bad = f;
  bad.metadata["uniform_compare"] = "f32";
  refused(bad, "uniform_compare");
  bad = f;
  bad.tensors["temperatures"] = tensor("F32", {R}, std::vector<float>(std::size_t(R), NAN));
  refused(bad, "out of SPEC");
}

TEST(LosslessSettings, RoundTripThroughJson) {
  LosslessSettings s;
  s.alpha = 1e-4, s.min_expected = 20, s.power = 0.9;
  EXPECT_EQ(lossless_settings_from_json(nlohmann::json::parse(to_json(s).dump())), s);
  EXPECT_EQ(lossless_settings_from_json(nlohmann::json::object()), LosslessSettings{});
  EXPECT_THROW(lossless_settings_from_json({{"alpha", 0}}), std::invalid_argument);
  EXPECT_THROW(lossless_settings_from_json({{"alpah", 0.1}}), std::invalid_argument);
  EXPECT_THROW(lossless_settings_from_json({{"power", "high"}}), std::invalid_argument);
}

TEST(VerifyNoise, NamesRoundTrip) {
  for (VerifyNoise n : kVerifyNoises) EXPECT_EQ(verify_noise_from_string(to_string(n)), n);
  EXPECT_THROW(verify_noise_from_string("shared"), std::invalid_argument);
}

}  // namespace
}  // namespace raceoracle::analysis
