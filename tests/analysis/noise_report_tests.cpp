// The noise report: Exp(1) draws pass the goodness-of-fit test, a truncated
// tail, a floor and a wrong scale fail it, and the counts are exact; tallies
// merge (a divergence run's shards) into the tally of all their draws.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "analysis/noise_report.h"

namespace raceoracle::analysis {
namespace {

std::vector<float> draws(std::size_t n, std::uint64_t seed, float (*make)(double u)) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<float> v(n);
  for (auto& e : v) e = make(u(rng));
  return v;
}

NoiseReport report(const std::vector<float>& v) {
  NoiseTally t;
  t.add(v.data(), std::int64_t(v.size()));
  return t.finish();
}

float exp1(double u) { return float(-std::log1p(-u)); }

TEST(NoiseReport, Exp1DrawsPass) {
  // Five seeds: a correct generator gives p-values spread over (0, 1).
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const NoiseReport r = report(draws(2'000'000, seed, exp1));
    ASSERT_TRUE(r.tested());
    EXPECT_GT(r.p_value, 1e-3) << r.describe();
    EXPECT_GT(r.dof, 60);
  }
}

TEST(NoiseReport, ACompleteTwentyFourBitGeneratorFitsExactly) {
  // Every draw -log(1 - u) of a 24-bit uniform u, once each (as
  // std::exponential_distribution<float> computes it): the bins hold exactly
  // the Exp(1) mass, so chi-squared is ~0, although the draws stop at 16.64.
  std::vector<float> v;
  v.reserve(std::size_t(1) << 24);
  for (std::uint32_t k = 0; k < (1u << 24); ++k) v.push_back(-std::log(1.0f - std::ldexp(float(k), -24)));
  const NoiseReport r = report(v);
  EXPECT_LT(r.chi_squared, 1e-3) << r.describe();
  EXPECT_FLOAT_EQ(float(r.max_finite), float(kFp32UniformMaxDraw));
  EXPECT_EQ(r.zeros, 1);
}

TEST(NoiseReport, TruncatedTailFails) {
  // u in [0, 1 - 1e-4): no draw above 9.21, where Exp(1) puts 1e-4 of them;
  // the largest term is a tail bin left empty.
  const NoiseReport r = report(draws(2'000'000, 1, [](double u) { return exp1(u * (1 - 1e-4)); }));
  EXPECT_LT(r.p_value, 1e-12) << r.describe();
  EXPECT_NEAR(r.max_finite, 9.21, 0.01);
  EXPECT_EQ(r.worst_bin.find("E in [9.7"), 0u) << r.worst_bin;
  EXPECT_NE(r.worst_bin.find(" 0 observed"), std::string::npos) << r.worst_bin;
  // Clamped instead of truncated: the tail piles onto 9.21.
  EXPECT_LT(report(draws(2'000'000, 1, [](double u) { return exp1(std::min(u, 1 - 1e-4)); })).p_value, 1e-12);
}

TEST(NoiseReport, FloorAndScaleFail) {
  EXPECT_LT(report(draws(2'000'000, 2, [](double u) { return std::max(exp1(u), 1e-3f); })).p_value, 1e-12);
  EXPECT_LT(report(draws(2'000'000, 3, [](double u) { return 1.01f * exp1(u); })).p_value, 1e-6);
}

TEST(NoiseReport, CountsZerosInfinitiesAndInvalidDraws) {
  std::vector<float> v = draws(10000, 4, exp1);
  v[0] = 0.0f;
  v[1] = 0.0f;
  v[2] = std::numeric_limits<float>::infinity();
  v[3] = std::numeric_limits<float>::quiet_NaN();
  v[4] = -1.0f;
  const NoiseReport r = report(v);
  EXPECT_EQ(r.draws, 10000);
  EXPECT_EQ(r.zeros, 2);
  EXPECT_EQ(r.infinite, 1);
  EXPECT_EQ(r.invalid, 2);
  EXPECT_GT(r.min_positive, 0);
  EXPECT_NEAR(r.expected_max, std::log(10000.0) + 0.5772, 1e-3);
}

TEST(NoiseTally, MergedTalliesAreTheTallyOfAllTheirDraws) {
  std::vector<float> a = draws(50000, 3, exp1), b = draws(70000, 4, exp1);
  a.push_back(0.0f), a.push_back(std::numeric_limits<float>::infinity()), b.push_back(-1.0f);
  NoiseTally ta, tb, all;
  ta.add(a.data(), std::int64_t(a.size()));
  tb.add(b.data(), std::int64_t(b.size()));
  all.add(a.data(), std::int64_t(a.size()));
  all.add(b.data(), std::int64_t(b.size()));
  ta.merge(tb);
  EXPECT_EQ(ta.state(), all.state());
  EXPECT_EQ(ta.finish().describe(), all.finish().describe());
  // Its state survives JSON and back; a state of another bin count is refused.
  EXPECT_EQ(NoiseTally::from_state(nlohmann::json::parse(all.state().dump())).state(), all.state());
  EXPECT_EQ(NoiseTally::from_state(NoiseTally{}.state()).finish().describe(), NoiseTally{}.finish().describe());
  nlohmann::json bad = all.state();
  bad["bins"].erase(0);
  EXPECT_THROW(NoiseTally::from_state(bad), std::invalid_argument);
  bad = all.state();
  bad.erase("draws");
  EXPECT_THROW(NoiseTally::from_state(bad), std::invalid_argument);
}

TEST(NoiseReport, TooFewDrawsAreNotTested) {
  const NoiseReport r = report(draws(50, 5, exp1));
  EXPECT_FALSE(r.tested());
  EXPECT_NE(r.describe().find("too few"), std::string::npos);
}

}  // namespace
}  // namespace raceoracle::analysis
