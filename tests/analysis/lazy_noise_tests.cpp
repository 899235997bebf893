// Noise drawn only where it can matter (analysis/lazy_noise.h): whatever
// thresholds a draw was lowered through, the row's noise, completed by
// `materialize`, is i.i.d. Exp(1), id by id and jointly; the drawn ids are
// exactly those whose key reaches the threshold; draws replay from (key, stream).
#include "analysis/lazy_noise.h"

#include <gtest/gtest.h>

#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <random>

#include "analysis/noise_report.h"

namespace raceoracle::analysis {
namespace {

constexpr float kEps = 1e-10f;

/// Two leaders 0.1 apart, a masked id, a body of N(0, 1), a run of equal logits.
std::vector<float> test_row() {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> body(0, 1);
  std::vector<float> x(200);
  for (float& v : x) v = body(rng);
  x[0] = 5.0f;
  x[1] = 4.9f;
  x[50] = -INFINITY;
  for (int i = 100; i < 110; ++i) x[std::size_t(i)] = 2.5f;
  return x;
}

double weight(const SortedRow& r, std::int64_t i, double t) {
  return std::isfinite(r.logits[i]) ? std::exp((double(r.logits[i]) - r.max) / t) : 0.0;
}

double mass(const SortedRow& r, double t) {
  double z = 0;
  for (std::int32_t i : r.by_logit) z += weight(r, i, t);
  return z;
}

NoiseReport fit(const std::vector<float>& v) {
  NoiseTally tally;
  tally.add(v.data(), std::int64_t(v.size()));
  return tally.finish();
}

TEST(LazyNoise, SortsTheFiniteIdsByFallingLogit) {
  const std::vector<float> x{1.0f, 3.0f, -INFINITY, 3.0f, -2.0f};
  const SortedRow r = sort_row(x.data(), 5);
  EXPECT_EQ(r.by_logit, (std::vector<std::int32_t>{1, 3, 0, 4}));
  EXPECT_EQ(r.max, 3.0f);
  EXPECT_EQ(r.min_finite, -2.0f);
  EXPECT_FALSE(r.nan_or_pos_inf);
  const std::vector<float> bad{1.0f, NAN};
  EXPECT_TRUE(sort_row(bad.data(), 2).nan_or_pos_inf);
}

TEST(LazyNoise, EveryIdsNoiseIsExp1WhateverThresholdsTheDrawWentThrough) {
  // 40,000 draws of the row, each lowered through three thresholds (about 4,
  // 40 and 400 ids expected to reach them), then completed. The noise of the
  // leader (drawn almost always), of the runner-up, of a body id (drawn
  // rarely), of the masked id and of every id pooled must each fit Exp(1);
  // the leaders' pair must be independent (a 4 x 4 grid of Exp(1) quartiles).
  const std::vector<float> x = test_row();
  const SortedRow row = sort_row(x.data(), std::int64_t(x.size()));
  const double t = 0.5, z = mass(row, t);
  std::vector<float> all, leader, second, body, masked;
  std::vector<std::int64_t> grid(16, 0);
  const double q[3] = {std::log(4.0 / 3.0), std::log(2.0), std::log(4.0)};  // Exp(1) quartiles
  const auto quartile = [&](float e) { return int(e > q[0]) + int(e > q[1]) + int(e > q[2]); };
  std::vector<float> out(x.size());
  std::int64_t drawn = 0;
  for (std::uint64_t d = 0; d < 40000; ++d) {
    UniformStream rng(11, d);
    LazyNoise n(row, t, kEps, rng);
    for (double k : {z / 4, z / 40, z / 400}) n.lower_to(k);
    drawn += std::int64_t(n.ids().size());
    n.materialize(out.data());
    all.insert(all.end(), out.begin(), out.end());
    leader.push_back(out[0]);
    second.push_back(out[1]);
    body.push_back(out[7]);
    masked.push_back(out[50]);
    ++grid[std::size_t(4 * quartile(out[0]) + quartile(out[1]))];
  }
  EXPECT_GT(drawn, 40000 * 10) << "the thresholds were meant to draw tens of ids a row";
  for (const auto& [name, v] : {std::pair{"every id", &all}, std::pair{"the leader", &leader}, std::pair{"the runner-up", &second},
                                std::pair{"a body id", &body}, std::pair{"the masked id", &masked}}) {
    const NoiseReport r = fit(*v);
    ASSERT_TRUE(r.tested()) << name;
    EXPECT_GT(r.p_value, 1e-3) << name << ": " << r.describe();
  }
  double chi2 = 0;
  for (std::int64_t c : grid) chi2 += (double(c) - 2500.0) * (double(c) - 2500.0) / 2500.0;
  EXPECT_GT(boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(15), chi2)), 1e-3)
      << "the leaders' noise is not independent: chi-squared " << chi2;
}

TEST(LazyNoise, TheDrawnIdsAreExactlyThoseWhoseKeyReachesTheThreshold) {
  const std::vector<float> x = test_row();
  const SortedRow row = sort_row(x.data(), std::int64_t(x.size()));
  std::vector<float> out(x.size());
  for (double t : {0.05, 1.0, 8.0})
    for (std::uint64_t d = 0; d < 500; ++d) {
      UniformStream rng(5, d);
      LazyNoise n(row, t, kEps, rng);
      const double z = mass(row, t);
      n.lower_to(z / 3);
      n.lower_to(z / 30);
      const double kappa = n.kappa();
      EXPECT_EQ(kappa, z / 30);
      n.materialize(out.data());
      std::vector<bool> drawn(x.size(), false);
      for (std::int64_t i : n.ids()) drawn[std::size_t(i)] = true;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double key = weight(row, std::int64_t(i), t) / (double(out[i]) + double(kEps));
        if (drawn[i]) EXPECT_GE(key, kappa * (1 - 0x1p-22)) << "id " << i << " drawn at T = " << t;
        else EXPECT_LT(key, kappa * (1 + 0x1p-22)) << "id " << i << " left out at T = " << t;
      }
    }
}

TEST(LazyNoise, ADrawReplaysFromItsKeyAndStream) {
  const std::vector<float> x = test_row();
  const SortedRow row = sort_row(x.data(), std::int64_t(x.size()));
  const auto draw = [&](std::uint64_t key, std::uint64_t stream) {
    UniformStream rng(key, stream);
    LazyNoise n(row, 1.0, kEps, rng);
    n.lower_to(mass(row, 1.0) / 50);
    std::vector<float> out(x.size());
    n.materialize(out.data());
    return out;
  };
  EXPECT_EQ(draw(1, 2), draw(1, 2));
  EXPECT_NE(draw(1, 2), draw(1, 3));
  EXPECT_NE(draw(1, 2), draw(2, 2));
}

TEST(LazyNoise, UniformsLieInsideTheOpenInterval) {
  UniformStream rng(0, 0);
  double lo = 1, hi = 0, sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.open01();
    lo = std::min(lo, u), hi = std::max(hi, u), sum += u;
  }
  EXPECT_GT(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_NEAR(sum / 100000, 0.5, 5 * std::sqrt(1.0 / 12 / 100000));
}

}  // namespace
}  // namespace raceoracle::analysis
