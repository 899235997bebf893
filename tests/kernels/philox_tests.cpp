// Drawn noise (race/noise.h) as a building block: the kernels' own
// Philox-4x32-10 (kernels/philox.h) against Random123's through the oracle's
// copy (oracle/drawn_noise.h), bit for bit; the uniform map exhaustively; the
// fp32 conversion's error against float64; and the draws' fit to Exp(1), with
// a control that the fit test can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/philox.h"
#include "oracle/drawn_noise.h"

namespace raceoracle {
namespace {

using kernels::philox::Words;

Words kernel_words(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3, std::uint32_t k0,
                   std::uint32_t k1) {
  return kernels::philox::philox4x32_10(race::PhiloxInput{{c0, c1, c2, c3}, {k0, k1}});
}

// The published known answers of Philox-4x32-10 (Random123's kat_vectors).
TEST(Philox, KnownAnswers) {
  struct Kat {
    std::uint32_t c[4], k[2], want[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& t : kats) {
    const Words w = kernel_words(t.c[0], t.c[1], t.c[2], t.c[3], t.k[0], t.k[1]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(w.w[i], t.want[i]) << "word " << i;
  }
}

// The noise layout end to end: every (seed, offset, row, id) the kernels draw
// is the word the oracle draws through Random123.
TEST(Philox, KernelWordsAreRandom123Words) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 20000; ++k) {
    const std::uint64_t seed = rng(), offset = k % 3 == 0 ? 0 : rng();
    const std::uint32_t row = std::uint32_t(k % 5 == 0 ? rng() : rng() % 512);
    const std::uint32_t q = std::uint32_t(rng() % (1u << 30));
    const Words w = kernels::philox::philox4x32_10(race::philox_input(seed, offset, row, q));
    for (std::uint32_t j = 0; j < 4; ++j)
      ASSERT_EQ(w.w[j], oracle::drawn_word(seed, offset, row, 4 * q + j)) << "seed " << seed << " row " << row;
  }
}

TEST(Philox, EveryInputWordMatters) {  // a key or counter word dropped from the layout shows
  const std::uint64_t seed = 0x0123456789abcdefull, offset = 0xfedcba9876543210ull;
  const std::uint32_t base = oracle::drawn_word(seed, offset, 3, 9);
  EXPECT_NE(base, oracle::drawn_word(seed ^ 1, offset, 3, 9));
  EXPECT_NE(base, oracle::drawn_word(seed ^ (1ull << 40), offset, 3, 9));
  EXPECT_NE(base, oracle::drawn_word(seed, offset ^ 1, 3, 9));
  EXPECT_NE(base, oracle::drawn_word(seed, offset ^ (1ull << 40), 3, 9));
  EXPECT_NE(base, oracle::drawn_word(seed, offset, 4, 9));
  EXPECT_NE(base, oracle::drawn_word(seed, offset, 3, 13));  // the next call, same word
  EXPECT_NE(base, oracle::drawn_word(seed, offset, 3, 10));  // the same call, next word
}

// All 2^23 uniforms: odd multiples of 2^-24, strictly increasing, in (0, 1).
TEST(DrawnNoise, UniformsAreExactAndOpen) {
  float prev = 0.0f;
  for (std::uint32_t t = 0; t < (1u << 23); ++t) {
    const float u = race::uniform_of((t << 9) | (t & 511u));  // the low 9 bits are dropped
    ASSERT_EQ(double(u), (2.0 * t + 1.0) * 0x1p-24) << t;
    ASSERT_EQ(kernels::philox::uniform_from_bits((t << 9) | (t & 511u)), u) << t;  // the kernels' bit assembly
    ASSERT_GT(u, prev);
    prev = u;
  }
  EXPECT_LT(prev, 1.0f);
  EXPECT_EQ(race::uniform_of(0), 0x1p-24f);
  EXPECT_EQ(race::uniform_of(~0u), 1.0f - 0x1p-24f);
}

// All 2^23 values of E in fp32 against -log(u) in float64: finite, positive,
// within the conversion's stated accuracy (docs/DRAWN_NOISE.md, "Accuracy").
TEST(DrawnNoise, Fp32ConversionIsWithinOneUlp) {
  double worst = 0.0;
  for (std::uint32_t t = 0; t < (1u << 23); ++t) {
    const std::uint32_t w = t << 9;
    const float e = kernels::philox::exponential_of(w);
    const double exact = oracle::exponential_of(w);
    ASSERT_TRUE(std::isfinite(e) && e > 0.0f) << t;
    const double ulp = std::ldexp(1.0, std::ilogb(e) - 23);
    worst = std::max(worst, std::abs(double(e) - exact) / ulp);
  }
  RecordProperty("worst_ulp", std::to_string(worst));
  EXPECT_LE(worst, 1.0);
  EXPECT_EQ(kernels::philox::exponential_of(~0u), float(-std::log1p(-0x1p-24)));  // the smallest E
}

// The complement of every word, 1 - u, is exact and gives u back exactly, so
// the screen's E from the complement (-logf(1 - r)) is the draw's bit for bit;
// the floor of E from the complement alone is at most 2^-22 above E (the
// proof's allowance) and within 2^-15.4 below it, on both sides of the switch
// from series to log2 (kernels/SCREEN.md, "Drawn noise").
TEST(DrawnNoise, ComplementIsExactAndItsFloorIsWithinItsBounds) {
  double worst_above = 0.0, worst_below = 0.0;  // floor / E - 1 at its largest; 1 - floor / E likewise
  for (std::uint32_t t = 0; t < (1u << 23); ++t) {
    const std::uint32_t w = t << 9;
    const float u = kernels::philox::uniform_from_bits(w), r = kernels::philox::complement_from_bits(w);
    ASSERT_EQ(double(r), 1.0 - double(u)) << t;
    ASSERT_EQ(1.0f - r, u) << t;
    ASSERT_EQ(-logf(1.0f - r), kernels::philox::exponential_of(w)) << t;
    const double floor = kernels::philox::exponential_floor(r), e = oracle::exponential_of(w);
    worst_above = std::max(worst_above, floor / e - 1.0);
    worst_below = std::max(worst_below, 1.0 - floor / e);
  }
  auto text = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", x);
    return std::string(b);
  };
  RecordProperty("floor_above_e_at_most", text(worst_above));
  RecordProperty("floor_below_e_at_most", text(worst_below));
  EXPECT_LE(worst_above, 0x1p-22);
  EXPECT_LE(worst_below, std::exp2(-15.4));
  EXPECT_GT(worst_below, 0x1p-17);  // the 2^-16 shrink shows: the measure is of the floor in use
}

// The oracle's noise row is every E rounded to fp32, and distinct uniforms
// keep distinct values: equal noise in the row means one word, which the
// kernel turns into one E too, so the oracle's exact-tie rule (ids at the
// max with equal noise tie exactly) holds for drawn noise.
TEST(DrawnNoise, OracleRowIsTheRoundedEAndDistinctUniformsStayDistinct) {
  std::vector<float> row(1000);
  oracle::drawn_noise_row(7, 1ull << 40, 3, std::int64_t(row.size()), row.data());
  for (std::uint32_t i = 0; i < row.size(); ++i)
    ASSERT_EQ(row[i], float(oracle::drawn_noise(7, 1ull << 40, 3, i))) << i;
  float prev = INFINITY;
  for (std::uint32_t t = 0; t < (1u << 23); ++t) {
    const float e = float(oracle::exponential_of(t << 9));
    ASSERT_LT(e, prev) << t;  // u increases with t: E strictly decreases
    prev = e;
  }
}

/// sqrt(n) * the Kolmogorov-Smirnov distance of `e` (sorted here) from Exp(1).
double ks_statistic(std::vector<double> e) {
  std::sort(e.begin(), e.end());
  const double n = double(e.size());
  double d = 0.0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    const double f = -std::expm1(-e[i]);  // Exp(1)'s CDF
    d = std::max({d, f - double(i) / n, double(i + 1) / n - f});
  }
  return std::sqrt(n) * d;
}

/// 2^20 draws of E: 16 rows of 65536 ids at one seed and offset.
std::vector<double> draws(std::uint64_t seed, std::uint64_t offset) {
  std::vector<double> e;
  for (std::uint32_t row = 0; row < 16; ++row)
    for (std::uint32_t q = 0; q < 65536 / 4; ++q) {
      const Words w = kernels::philox::philox4x32_10(race::philox_input(seed, offset, row, q));
      for (std::uint32_t x : w.w) e.push_back(kernels::philox::exponential_of(x));
    }
  return e;
}

// Kolmogorov's limit at a 0.1% level: sqrt(n) D > 1.949 with probability 0.001.
constexpr double kKsCritical = 1.949;

TEST(DrawnNoise, FitsExp1) {
  for (const auto& [seed, offset] : {std::pair<std::uint64_t, std::uint64_t>{20261130, 0}, {1, 1ull << 33}}) {
    const std::vector<double> e = draws(seed, offset);
    const double ks = ks_statistic(e);
    RecordProperty("ks_sqrt_n_d_seed_" + std::to_string(seed), std::to_string(ks));
    EXPECT_LT(ks, kKsCritical) << "seed " << seed;
    double mean = 0.0;
    for (double x : e) mean += x;
    mean /= double(e.size());
    EXPECT_NEAR(mean, 1.0, 5.0 / std::sqrt(double(e.size())));  // Exp(1): mean 1, sd 1
    // Neighbouring ids (within and across Philox calls) are uncorrelated.
    double c = 0.0;
    for (std::size_t i = 1; i < e.size(); ++i) c += (e[i] - 1.0) * (e[i - 1] - 1.0);
    EXPECT_LT(std::abs(c / double(e.size())), 5.0 / std::sqrt(double(e.size())));
  }
}

TEST(DrawnNoise, FitTestHasThePowerToFail) {  // E scaled by 1.01 is rejected
  std::vector<double> e = draws(20261130, 0);
  for (double& x : e) x *= 1.01;
  const double ks = ks_statistic(e);
  RecordProperty("ks_sqrt_n_d_scaled", std::to_string(ks));
  EXPECT_GT(ks, kKsCritical);
}

}  // namespace
}  // namespace raceoracle
