// Hand-derived expectations for the float64 oracle (SPEC §1). Vocabularies
// are tiny so each answer can be checked on paper; the comment above each
// case gives the arithmetic.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "oracle/oracle.h"

namespace raceoracle::oracle {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

NumericsContract post() { return {}; }
NumericsContract pre() {
  NumericsContract c;
  c.order = ScalingOrder::pre;
  return c;
}

Verdict run(const std::vector<float>& x, const std::vector<float>& e, float T,
            const NumericsContract& c = post()) {
  RowView r{x.data(), Dtype::f32, e.data(), std::int64_t(x.size()), T};
  return decide(r, c);
}
std::vector<float> ones(std::size_t n) { return std::vector<float>(n, 1.0f); }

// --- greedy rows -----------------------------------------------------------

TEST(Greedy, LowestIdOfTheMaximum) {
  // max is 3 at ids 1 and 2: the lowest, 1.
  Verdict v = run({1, 3, 3, 2}, ones(4), 0.0f);
  EXPECT_EQ(v.row_class, RowClass::greedy);
  EXPECT_EQ(v.token, 1);
  EXPECT_EQ(v.ambiguous, std::vector<std::int64_t>{1});
  EXPECT_EQ(v.runner_up, 2);
  EXPECT_EQ(v.gap, 0.0);
}

TEST(Greedy, NoiseIsNotReadNotEvenWhenItIsNaN) {
  Verdict v = run({1, 3, 2}, {kNaN, -1.0f, kInf}, 0.0f);
  EXPECT_EQ(v.row_class, RowClass::greedy);
  EXPECT_EQ(v.token, 1);
}

TEST(Greedy, NegativeTemperatureIsGreedy) { EXPECT_EQ(run({0, 2, 1}, ones(3), -1.0f).row_class, RowClass::greedy); }

TEST(Greedy, TemperatureEqualToGreedyEpsIsGreedy) {
  // T <= greedy_eps in fp32: 1e-10f itself is greedy, its next float up is not.
  // x = [0, -1e-5], E = [1e9, 1e-9]: greedy picks 0; sampling at t = 1e-5
  // gives key1 = e^-1 / 1e-9 >> key0 = 1e-9, so 1.
  std::vector<float> x{0.0f, -1e-5f}, e{1e9f, 1e-9f};
  EXPECT_EQ(run(x, e, 1e-10f).token, 0);
  Verdict up = run(x, e, std::nextafter(1e-10f, 1.0f));
  EXPECT_EQ(up.row_class, RowClass::sampling);
  EXPECT_EQ(up.token, 1);
}

// --- sampling rows ---------------------------------------------------------

TEST(Sampling, TemperatureBelowTheClampUsesOneE5) {
  // x = [0, -2e-5], E = [1, 0.1]. With t = max(T, 1e-5) = 1e-5:
  // key0 = 1, key1 = e^-2 / 0.1 = 1.353 -> 1. Unclamped T = 1e-7 would give
  // key1 = e^-200 / 0.1 ~ 0 -> 0.
  std::vector<float> x{0.0f, -2e-5f}, e{1.0f, 0.1f};
  EXPECT_EQ(run(x, e, 1e-7f).token, 1);
  EXPECT_EQ(run(x, e, 1e-5f).token, 1);
  EXPECT_NEAR(run(x, e, 1e-5f).key, std::exp(-2.0) / 0.1, 1e-6);
}

TEST(Sampling, ZeroNoiseWinsThroughEps) {
  // key1 = e^-1 / (0 + 1e-10) = 3.7e9 against key0 = 1 / (1 + 1e-10).
  Verdict v = run({0, -1}, {1.0f, 0.0f}, 1.0f);
  EXPECT_EQ(v.token, 1);
  EXPECT_NEAR(v.key / (std::exp(-1.0) / double(1e-10f)), 1.0, 1e-12);
}

TEST(Sampling, ALaunchEpsOfZeroWithAZeroDrawIsOutOfContractWhateverTheIdOrder) {
  // eps = 0 and E = 0, T clamped to 1e-5: id "top" (x = 2) would have key
  // 1 / 0 and every other id 0 / 0 (found by fuzz/oracle_decide, when such
  // keys were ranked). As for a sampler that adds no eps (EpsRule::none), a
  // zero draw then leaves the key without a value: the row is out of
  // contract, named, whatever the id order.
  for (int top : {0, 1, 5}) {
    std::vector<float> x(6, 0.0f), e(6, 0.0f);
    x[std::size_t(top)] = 2.0f;
    RowView r{x.data(), Dtype::f32, e.data(), 6, 1e-20f};  // greedy_eps 0: sampling, t = 1e-5
    const Verdict v = decide(r, post(), RaceConstants{0.0f, 0.0f});
    EXPECT_EQ(v.row_class, RowClass::invalid);
    EXPECT_EQ(v.reason, InvalidReason::zero_noise_without_eps);
    EXPECT_EQ(v.reason_id, 0);
  }
  // With no zero draw, eps = 0 is the ratio race p / E.
  std::vector<float> x{0.0f, 0.0f, 2.0f}, e{1.0f, 2.0f, 4.0f};
  RowView r{x.data(), Dtype::f32, e.data(), 3, 1.0f};
  const Verdict v = decide(r, post(), RaceConstants{0.0f, 0.0f});
  EXPECT_EQ(v.token, 2);  // e^2 / 4 = 1.85 > 1 / 1
  EXPECT_EQ(v.runner_up, 0);
}

TEST(Sampling, SmallestNoiseStep) {
  // E1 = 2^-24: key1 = e^-10 * 2^24 = 762 > key0 = 1.
  EXPECT_EQ(run({0, -10}, {1.0f, 0x1p-24f}, 1.0f).token, 1);
  // E1 = 2^-24 at x1 = -20: e^-20 * 2^24 = 3.5e-2 < 1.
  EXPECT_EQ(run({0, -20}, {1.0f, 0x1p-24f}, 1.0f).token, 0);
}

TEST(Sampling, HugeNoiseLoses) {
  // key0 = 1e-30, key1 = e^-1 = 0.37.
  EXPECT_EQ(run({0, -1}, {1e30f, 1.0f}, 1.0f).token, 1);
}

TEST(Sampling, EqualKeysAwayFromTheMaxTieToLowestAndAreAmbiguous) {
  // key0 = 1/100, key1 = key2 = e^-1 / 0.5 = 0.7358: lowest is 1; 2 computes
  // through a different tile max in a kernel, so fp32 may pick it.
  Verdict v = run({0, -1, -1}, {100.0f, 0.5f, 0.5f}, 1.0f);
  EXPECT_EQ(v.token, 1);
  EXPECT_EQ(v.runner_up, 2);
  EXPECT_EQ(v.gap, 0.0);
  EXPECT_EQ(v.ambiguous, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(judge(v, 2, 3), Outcome::explained);
}

TEST(Sampling, ExactTieAtTheMaxRequiresTheLowestId) {
  // x0 = x1 = M with equal noise: bit-identical keys in every kernel, so 0 is
  // required and 1 is a bug.
  Verdict v = run({2, 2, 0}, {0.5f, 0.5f, 3.0f}, 0.7f);
  EXPECT_EQ(v.token, 0);
  EXPECT_EQ(v.ambiguous, std::vector<std::int64_t>{0});
  EXPECT_EQ(judge(v, 1, 3), Outcome::unexplained);
}

TEST(Sampling, WholeMaskedTileNeverWinsEvenWithZeroNoise) {
  // ids 0, 1, 4 are -inf with E = 0 (they would win if unmasked).
  // key2 = e^-0.5 / 1 = 0.61, key3 = 1e-9.
  Verdict v = run({-kInf, -kInf, 0.0f, 0.5f, -kInf}, {0, 0, 1.0f, 1e9f, 0}, 1.0f);
  EXPECT_EQ(v.row_class, RowClass::sampling);
  EXPECT_EQ(v.token, 2);
  EXPECT_EQ(judge(v, 0, 5), Outcome::unexplained);
}

TEST(Sampling, Bf16LogitsWidenExactly) {
  // bf16 0x3F80 = 1, 0x4000 = 2, 0xC000 = -2, 0x3FC0 = 1.5.
  std::vector<std::uint16_t> x{0x3F80, 0x4000, 0xC000, 0x3FC0};
  std::vector<float> e{1.0f, 1e6f, 1.0f, 1.0f};
  RowView r{x.data(), Dtype::bf16, e.data(), 4, 1.0f};
  EXPECT_EQ(r.logit(3), 1.5);
  EXPECT_EQ(decide(r, post()).token, 3);  // key3 = e^-0.5 = 0.61 > key0 = e^-1, key1 = 1e-6
  r.temperature = 0.0f;
  EXPECT_EQ(decide(r, post()).token, 1);
}

// --- forced and fully masked rows -------------------------------------------

TEST(Forced, TheOneUnmaskedIdForEveryTemperature) {
  for (float T : {0.0f, 1e-10f, 1e-6f, 0.7f, 100.0f}) {
    Verdict v = run({-kInf, -kInf, 5.0f}, {0.0f, 0.0f, 1e30f}, T);
    EXPECT_EQ(v.row_class, RowClass::forced) << T;
    EXPECT_EQ(v.token, 2) << T;
  }
}

TEST(FullyMasked, IdZeroForGreedyAndSampling) {
  for (float T : {0.0f, 1.0f}) {
    Verdict v = run({-kInf, -kInf, -kInf}, {5.0f, 0.0f, 1.0f}, T);
    EXPECT_EQ(v.row_class, RowClass::fully_masked);
    EXPECT_EQ(v.token, 0);
    EXPECT_EQ(judge(v, 1, 3), Outcome::unexplained);
  }
}

// --- out of contract ---------------------------------------------------------

TEST(Invalid, EachReasonIsNamedWithItsId) {
  struct Case { std::vector<float> x, e; float T; InvalidReason why; std::int64_t id; };
  const std::vector<Case> cases{
      {{0, kNaN, 1}, {1, 1, 1}, 1.0f, InvalidReason::nan_logit, 1},
      {{0, 1, kInf}, {1, 1, 1}, 0.0f, InvalidReason::pos_inf_logit, 2},
      {{0, 1}, {1, 1}, kNaN, InvalidReason::nan_temperature, -1},
      {{0, 1}, {1, 1}, kInf, InvalidReason::inf_temperature, -1},
      {{0, 1}, {1, kNaN}, 1.0f, InvalidReason::nan_noise, 1},
      {{0, 1}, {-1e-30f, 1}, 1.0f, InvalidReason::negative_noise, 0},
      {{0, 1}, {1, kInf}, 1.0f, InvalidReason::inf_noise, 1},
      {{-kInf, -kInf}, {kNaN, 1}, 1.0f, InvalidReason::nan_noise, 0},  // masked ids' noise is still read
  };
  for (const Case& c : cases) {
    Verdict v = run(c.x, c.e, c.T);
    EXPECT_EQ(v.row_class, RowClass::invalid) << to_string(c.why);
    EXPECT_EQ(v.reason, c.why);
    EXPECT_EQ(v.reason_id, c.id) << to_string(c.why);
    EXPECT_EQ(judge(v, 0, std::int64_t(c.x.size())), Outcome::out_of_contract);
    EXPECT_EQ(judge(v, std::int64_t(c.x.size()), std::int64_t(c.x.size())), Outcome::out_of_range);
  }
}

TEST(Invalid, NegativeZeroNoiseIsLegal) { EXPECT_EQ(run({0, -1}, {1.0f, -0.0f}, 1.0f).token, 1); }

TEST(Judge, OutOfRangeIsAlwaysAFailure) {
  Verdict v = run({1, 2}, ones(2), 0.0f);
  EXPECT_EQ(judge(v, -1, 2), Outcome::out_of_range);
  EXPECT_EQ(judge(v, 2, 2), Outcome::out_of_range);
  EXPECT_EQ(judge(v, 1, 2), Outcome::identical);
  EXPECT_TRUE(is_failure(judge(v, 0, 2)));
}

// --- the error model at work: a near-tie --------------------------------------

TEST(NearTie, ExplainedUnderPreScaleUnexplainedUnderPostScaleAtSmallT) {
  // x = [100, 99.99], T = 0.01, E0 = 1 and E1 planted so key1 = key0 (1 - 1e-5).
  // Post-scale error ~ 3u |x - M| / t + exp/div ulps ~ 5e-7 << 1e-5: a kernel
  // picking 1 has a bug. Pre-scale error ~ u (|x| + |M|) / t = 6e-8 * 200 / 0.01
  // = 1.2e-3 >> 1e-5: picking 1 is legitimate fp32 behaviour.
  const float T = 0.01f, x1 = 99.99f;
  const double key0 = 1.0 / (1.0 + double(1e-10f));
  const float e1 = float(std::exp((double(x1) - 100.0) / double(T)) / (key0 * (1 - 1e-5)) - double(1e-10f));
  std::vector<float> x{100.0f, x1}, e{1.0f, e1};
  Verdict vpost = run(x, e, T, post()), vpre = run(x, e, T, pre());
  ASSERT_EQ(vpost.token, 0);
  EXPECT_NEAR(vpost.gap, 1e-5, 2e-7);
  EXPECT_EQ(judge(vpost, 1, 2), Outcome::unexplained);
  EXPECT_EQ(judge(vpre, 1, 2), Outcome::explained);
  EXPECT_LT(vpost.rho, 1e-6);
  EXPECT_GT(vpre.rho, 1e-4);
}

// --- batches -----------------------------------------------------------------

TEST(Batch, RowStridesAndSharedNoise) {
  // Two rows of V = 2 stored with stride 3 (the third element is padding that
  // must not be read); one shared noise row (stride 0).
  std::vector<float> x{0, -1, 99, -1, 0, 99}, e{1.0f, 1e-3f}, T{1.0f, 0.0f};
  BatchView b{x.data(), Dtype::f32, 2, 2, 3, e.data(), 0, T.data()};
  auto v = decide_batch(b, post());
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].token, 1);  // e^-1 / 1e-3 = 368 > 1
  EXPECT_EQ(v[1].token, 1);  // greedy: max 0 at id 1
}

TEST(Batch, BadShapesAreClearErrors) {
  std::vector<float> x(4), e(4), T(2);
  BatchView ok{x.data(), Dtype::f32, 2, 2, 2, e.data(), 2, T.data()};
  auto expect_error = [](BatchView b, const char* needle) {
    try {
      validate(b);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const std::invalid_argument& err) {
      EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << err.what();
    }
  };
  BatchView b = ok;
  b.rows = 0;
  expect_error(b, "rows must be positive");
  b = ok;
  b.vocab = 0;
  expect_error(b, "vocab must be positive");
  b = ok;
  b.logit_stride = 1;
  expect_error(b, "logit row stride 1 is smaller than vocab 2");
  b = ok;
  b.noise_stride = 1;
  expect_error(b, "noise row stride 1");
  b = ok;
  b.logits = nullptr;
  expect_error(b, "logits pointer is null");
  b = ok;
  b.vocab = std::int64_t(1) << 32;
  b.logit_stride = b.noise_stride = b.vocab;
  expect_error(b, "does not fit the int32 tokens");
  EXPECT_NO_THROW(validate(ok));
}

}  // namespace
}  // namespace raceoracle::oracle
