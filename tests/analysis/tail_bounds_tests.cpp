// The frequency law's building blocks (analysis/tail_bounds.h): each bound
// against exact or simulated probabilities, each inverse against its
// forward function.
#include "analysis/tail_bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace raceoracle::analysis {
namespace {

double kl(const std::vector<double>& a, const std::vector<double>& q) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] > 0) s += a[i] * std::log(a[i] / q[i]);
  return s;
}

TEST(TailBounds, MultinomialThresholdInvertsItsTail) {
  for (std::int64_t k : {2, 3, 10, 100, 5000})
    for (double alpha : {0.5, 1e-3, 1e-9}) {
      const double t = multinomial_kl_threshold(k, alpha);
      EXPECT_GT(t, double(k - 1));
      EXPECT_LE(multinomial_kl_tail(t, k), alpha * (1 + 1e-6));
      EXPECT_GT(multinomial_kl_tail(t * (1 - 1e-6), k), alpha * (1 - 1e-3)) << k << " " << alpha;
    }
  EXPECT_EQ(multinomial_kl_tail(3.0, 1), 0.0);
  EXPECT_TRUE(std::isinf(multinomial_kl_threshold(1, 1e-6)));
}

TEST(TailBounds, MultinomialTailBoundsTheSimulatedTail) {
  // n KL(p_hat || p) over 200000 multinomials of small n, where asymptotics
  // fail: the simulated tail never exceeds the bound (at a margin of 4
  // standard errors of the simulated frequency).
  std::mt19937_64 g(20261205);
  const std::vector<std::vector<double>> laws = {{0.5, 0.5}, {0.9, 0.05, 0.05}, {0.4, 0.3, 0.2, 0.05, 0.05}};
  for (const auto& p : laws)
    for (int n : {5, 40}) {
      std::discrete_distribution<int> pick(p.begin(), p.end());
      const int trials = 200000;
      std::vector<double> stats(trials);
      for (int t = 0; t < trials; ++t) {
        std::vector<double> c(p.size(), 0);
        for (int j = 0; j < n; ++j) c[std::size_t(pick(g))] += 1.0 / n;
        stats[std::size_t(t)] = n * kl(c, p);
      }
      const auto k = std::int64_t(p.size());
      for (double t : {double(k), 2.0 * double(k), 3.0 * double(k) + 3}) {
        double seen = 0;
        for (double s : stats) seen += s >= t;
        seen /= trials;
        const double bound = multinomial_kl_tail(t, k);
        EXPECT_LE(seen, bound + 4 * std::sqrt(bound * (1 - bound) / trials) + 1e-9) << "k " << k << " n " << n << " t " << t;
      }
    }
}

TEST(TailBounds, BinomialCriticalCountsAreChernoffsAndSound) {
  for (std::int64_t n : {10, 1000, 1000000})
    for (double p : {1e-6, 0.01, 0.3, 0.9})
      for (double alpha : {0.05, 1e-9}) {
        const std::int64_t up = binomial_upper_critical(n, p, alpha), down = binomial_lower_critical(n, p, alpha);
        if (up <= n) {
          EXPECT_LE(std::exp(-double(n) * kl_bernoulli(double(up) / double(n), p)), alpha * (1 + 1e-9));
          EXPECT_LE(binomial_at_least(n, p, up), alpha);  // exact tail below the bound: sound
          if (up - 1 > double(n) * p)
            EXPECT_GT(std::exp(-double(n) * kl_bernoulli(double(up - 1) / double(n), p)), alpha);
        }
        if (down >= 0) {
          EXPECT_LE(binomial_at_most(n, p, down), alpha);
          if (down + 1 < double(n) * p)
            EXPECT_GT(std::exp(-double(n) * kl_bernoulli(double(down + 1) / double(n), p)), alpha);
        }
      }
}

TEST(TailBounds, BinomialTailsAreExact) {
  // Against the sum of the probability mass function.
  for (double q : {0.01, 0.37, 0.99}) {
    const std::int64_t n = 30;
    std::vector<double> pmf(n + 1);
    for (std::int64_t c = 0; c <= n; ++c)
      pmf[std::size_t(c)] = std::exp(std::lgamma(n + 1.0) - std::lgamma(c + 1.0) - std::lgamma(n - c + 1.0) +
                                     double(c) * std::log(q) + double(n - c) * std::log1p(-q));
    for (std::int64_t c = -1; c <= n + 1; ++c) {
      double at_least = 0, at_most = 0;
      for (std::int64_t x = 0; x <= n; ++x) (x >= c ? at_least : at_most) += pmf[std::size_t(x)];
      at_most = c < 0 ? 0 : at_most + (c <= n ? pmf[std::size_t(c)] : 0);
      EXPECT_NEAR(binomial_at_least(n, q, c), at_least, 1e-12) << q << " " << c;
      EXPECT_NEAR(binomial_at_most(n, q, c), at_most, 1e-12) << q << " " << c;
    }
  }
}

TEST(TailBounds, MinKlInABoxIsTheMinimum) {
  // A degenerate box is its point; a law inside the box is at 0; elsewhere
  // the minimum is at most KL to any feasible point of a fine grid, and at
  // least the grid's best less the grid's step.
  const std::vector<double> a = {0.5, 0.3, 0.2}, p = {0.4, 0.4, 0.2};
  EXPECT_NEAR(min_kl_in_box(a, p, p), kl(a, p), 1e-12);
  EXPECT_NEAR(min_kl_in_box(a, {0.45, 0.25, 0.1}, {0.55, 0.35, 0.3}), 0.0, 1e-12);
  const std::vector<double> lo = {0.35, 0.35, 0.1}, hi = {0.45, 0.5, 0.3};
  const double got = min_kl_in_box(a, lo, hi);
  double best = 1e9;
  for (double q0 = lo[0]; q0 <= hi[0]; q0 += 1e-4)
    for (double q1 = lo[1]; q1 <= hi[1]; q1 += 1e-4) {
      const double q2 = 1 - q0 - q1;
      if (q2 < lo[2] || q2 > hi[2]) continue;
      best = std::min(best, kl(a, {q0, q1, q2}));
    }
  EXPECT_LE(got, best + 1e-12);
  EXPECT_GT(got, best - 1e-3);
}

TEST(TailBounds, NoncentralityForPowerMatchesTheNormalCase) {
  // One degree of freedom: chi2_1(lambda) = (Z + sqrt(lambda))^2, so power
  // 0.5 at x = 1.96^2 needs sqrt(lambda) = 1.96 (the far tail adds ~1e-9).
  EXPECT_NEAR(noncentrality_for_power(1, 1.959964 * 1.959964, 0.5), 1.959964 * 1.959964, 1e-3);
  // 0.99 needs sqrt(lambda) = 1.96 + 2.326.
  EXPECT_NEAR(std::sqrt(noncentrality_for_power(1, 1.959964 * 1.959964, 0.99)), 1.959964 + 2.326348, 1e-3);
  EXPECT_EQ(noncentrality_for_power(5, 0.0, 0.99), 0.0);
}

}  // namespace
}  // namespace raceoracle::analysis
