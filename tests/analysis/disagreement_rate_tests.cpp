// The disagreement-rate estimator: its interval covers the true rate at the
// stated level on gaps drawn exactly as the race makes them, and its checks
// (flatness, the Poisson interval) give the textbook values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analysis/disagreement_rate.h"

namespace raceoracle::analysis {
namespace {

/// The top-two relative gap of an exponential race whose winner had
/// probability 1 - lambda: g = D / (W + D), W ~ Exp(1), D ~ Exp(lambda)
/// (docs/DIVERGENCE.md). P(g <= c) = lambda c / (1 - c + lambda c).
double race_gap(std::mt19937_64& rng, double lambda) {
  std::exponential_distribution<double> w(1.0), d(lambda);
  const double a = w(rng), b = d(rng);
  return b / (a + b);
}

double true_rate(double lambda, double c) { return lambda * c / (1 - c + lambda * c); }

TEST(PoissonInterval, GarwoodValues) {
  // Tabulated exact 95% limits: k = 0 -> [0, 3.689], k = 10 -> [4.795, 18.39].
  EXPECT_EQ(poisson_interval(0).lo, 0);
  EXPECT_NEAR(poisson_interval(0).hi, 3.6889, 1e-3);
  EXPECT_NEAR(poisson_interval(10).lo, 4.7954, 1e-3);
  EXPECT_NEAR(poisson_interval(10).hi, 18.390, 1e-2);
}

TEST(WeightedPoissonInterval, EqualWeightsGiveGarwoodsScaledAndUnequalOnesAWiderOne) {
  // Ten events of weight 0.3: 0.3 x [4.795, 18.39].
  const Interval equal = weighted_poisson_interval(3.0, 0.9, 0.3);
  EXPECT_NEAR(equal.lo, 0.3 * poisson_interval(10).lo, 1e-9);
  EXPECT_NEAR(equal.hi, 0.3 * poisson_interval(10).hi, 1e-9);
  // The same sum from one event of 2.1 and nine of 0.1: one draw decides most of it.
  const Interval unequal = weighted_poisson_interval(3.0, 2.1 * 2.1 + 9 * 0.01, 2.1);
  EXPECT_LT(unequal.lo, equal.lo);
  EXPECT_GT(unequal.hi, equal.hi);
  const Interval none = weighted_poisson_interval(0, 0, 0.5);
  EXPECT_EQ(none.lo, 0);
  EXPECT_NEAR(none.hi, 0.5 * 3.6889, 1e-3);
  EXPECT_EQ(weighted_poisson_interval(0, 0, 0).hi, 0) << "no weight anywhere: nothing can be counted";
}

TEST(DisagreementRate, IntervalCoversTheTrueRate) {
  // 200 independent experiments of 20,000 rows; rows mix flat (lambda 1) and
  // peaked (lambda 0.2) races with a tolerated gap of 1e-4 or 3e-4.
  int covered = 0;
  const int experiments = 200;
  for (int x = 0; x < experiments; ++x) {
    std::mt19937_64 rng(1000 + x);
    std::vector<RowGap> gaps;
    double truth = 0;
    const std::int64_t rows = 20000;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double lambda = r % 3 == 0 ? 0.2 : 1.0, c = r % 2 ? 1e-4 : 3e-4;
      gaps.push_back({race_gap(rng, lambda), c});
      truth += true_rate(lambda, c);
    }
    truth /= double(rows);
    const RateEstimate e = estimate_rate(gaps, rows);
    covered += e.lo <= truth && truth <= e.hi;
  }
  // Exact coverage is 95% or more (the lower end is widened for the window's
  // bias); 200 experiments put the count near 190 +- 6.
  EXPECT_GE(covered, 180) << covered << " of " << experiments;
}

TEST(DisagreementRate, IntervalCoversTheTrueRateWhenWidthsVaryFromRowToRow) {
  // The widths of a pair of arithmetic orders (DIVERGENCE.md, "fused-pre
  // beside fused-post") are not the slowly varying tolerated gaps: most rows
  // 0, the rest spread over decades. Here 90% of rows 0 and the others c =
  // 2e-4 u^4 (u uniform): a row's weight in the window varies a hundredfold,
  // so the interval must carry the spread of the weights, not only the count
  // (Garwood's interval on the count times the mean weight covered 78 of 200).
  int covered = 0;
  const int experiments = 200;
  for (int x = 0; x < experiments; ++x) {
    std::mt19937_64 rng(5000 + x);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<RowGap> gaps;
    double truth = 0;
    const std::int64_t rows = 40000;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double c = u(rng) < 0.9 ? 0.0 : 2e-4 * std::pow(u(rng), 4);
      gaps.push_back({race_gap(rng, 1.0), c});
      truth += true_rate(1.0, c);
    }
    truth /= double(rows);
    const RateEstimate e = estimate_rate(gaps, rows);
    covered += e.lo <= truth && truth <= e.hi;
  }
  EXPECT_GE(covered, 180) << covered << " of " << experiments;
}

TEST(DisagreementRate, EstimateIsCloseWithManyRows) {
  std::mt19937_64 rng(7);
  std::vector<RowGap> gaps;
  const std::int64_t rows = 2'000'000;
  for (std::int64_t r = 0; r < rows; ++r) gaps.push_back({race_gap(rng, 0.5), 1e-5});
  const RateEstimate e = estimate_rate(gaps, rows);
  EXPECT_NEAR(e.rate / true_rate(0.5, 1e-5), 1.0, 0.06);
  EXPECT_GT(e.flatness_p, 1e-3);
}

TEST(DisagreementRate, RowsThatCannotDisagreeDiluteTheRate) {
  std::mt19937_64 rng(3);
  std::vector<RowGap> gaps;
  for (int r = 0; r < 100000; ++r) gaps.push_back({race_gap(rng, 1.0), 1e-4});
  const RateEstimate all = estimate_rate(gaps, 100000), diluted = estimate_rate(gaps, 400000);
  EXPECT_NEAR(diluted.rate * 4, all.rate, 1e-12);
}

TEST(DisagreementRate, ASteepDensityFailsTheFlatnessCheck) {
  // Density rising linearly from 0 over the window: half as many gaps in the
  // lower half as a flat density gives.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<RowGap> gaps;
  for (int r = 0; r < 20000; ++r) gaps.push_back({0.02 * std::sqrt(u(rng)), 1e-4});
  EXPECT_LT(estimate_rate(gaps, 20000).flatness_p, 1e-6);
}

TEST(DisagreementRate, CoarseThresholdsWidenTheWindow) {
  std::vector<RowGap> gaps(100, {0.5, 0.01});
  EXPECT_DOUBLE_EQ(estimate_rate(gaps, 100).window, 0.08);
}

TEST(DisagreementRate, NoRowInTheWindowGivesAnUpperBound) {
  std::vector<RowGap> gaps(1000, {0.9, 1e-6});
  const RateEstimate e = estimate_rate(gaps, 1000);
  EXPECT_EQ(e.rate, 0);
  EXPECT_EQ(e.lo, 0);
  EXPECT_NEAR(e.hi, 3.6889 * 1e-6 / 0.02 / 1000, 1e-9);
}

TEST(DisagreementRate, ACountAgreesWhenItsOwnIntervalMeetsTheEstimates) {
  RateEstimate e;
  e.rows = 1'000'000;
  e.lo = 1.2e-6, e.hi = 1.4e-6;  // about 1.3 rows expected
  const Interval two = counted_interval(2, e.rows);  // [0.24e-6, 7.2e-6]
  EXPECT_NEAR(two.lo, 0.2422e-6, 1e-9);
  EXPECT_NEAR(two.hi, 7.2247e-6, 1e-9);
  EXPECT_FALSE(e.contains(2e-6)) << "the point count lies outside";
  EXPECT_TRUE(e.agrees_with_count(2)) << "but two rows cannot tell 1.3 from 2";
  EXPECT_TRUE(e.agrees_with_count(0));
  EXPECT_FALSE(e.agrees_with_count(9)) << "nine rows where 1.3 are expected: the count's lower end is 4.1e-6";
  e.lo = 50e-6, e.hi = 70e-6;  // 60 expected
  EXPECT_FALSE(e.agrees_with_count(0));
  EXPECT_FALSE(e.agrees_with_count(30));
  EXPECT_TRUE(e.agrees_with_count(45));
  EXPECT_TRUE(e.agrees_with_count(80));  // [63.4e-6, 99.6e-6]
  EXPECT_FALSE(e.agrees_with_count(95));  // [76.9e-6, 116e-6]
}

}  // namespace
}  // namespace raceoracle::analysis
