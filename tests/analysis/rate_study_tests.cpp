// The divergence study without kernels (analysis/rate_study.h): every row it
// decides from the ids that can matter gets the oracle's verdict over every
// id, on rows built to crowd the top (the study checks this itself on the
// rows it draws in full; here every row is one); the pool is reused in turn;
// runs replay from their seed.
#include "analysis/rate_study.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "protocol/safetensors.h"
#include "tests/protocol/safetensors_files.h"

namespace raceoracle::analysis {
namespace {

using protocol::Safetensors;
using protocol::testing::tensor;
using RateStudyFiles = protocol::testing::SafetensorsFiles;

/// Rows of 48 ids made to crowd the race's top: exact ties at the max,
/// logits one fp32 ulp apart, a run of equal logits, masked ids, one row
/// with a single finite id (forced) and one with a NaN (out of contract).
std::vector<float> crowded_rows(int rows, std::int64_t V) {
  std::mt19937_64 rng(17);
  std::normal_distribution<float> body(0, 2);
  std::vector<float> x(std::size_t(rows * V));
  for (int r = 0; r < rows; ++r) {
    float* row = x.data() + r * V;
    for (std::int64_t i = 0; i < V; ++i) row[i] = body(rng);
    switch (r % 6) {
      case 0: row[3] = row[9] = row[40] = 6.0f; break;  // ties at the max
      case 1: for (int i = 0; i < 8; ++i) row[5 * i] = std::nextafter(4.0f, float(i)); break;
      case 2: for (int i = 10; i < 30; ++i) row[i] = 1.5f; break;
      case 3: for (int i = 0; i < V; i += 2) row[i] = -INFINITY; break;
      default: break;
    }
  }
  for (std::int64_t i = 1; i < V; ++i) x[std::size_t(7 * V + i)] = -INFINITY;  // row 7: forced
  x[std::size_t(13 * V + 5)] = NAN;                                             // row 13: out of contract
  return x;
}

TEST_F(RateStudyFiles, EveryRowDecidedFromTheIdsThatCanMatterGetsTheOraclesVerdictOverEveryId) {
  // V = 48: the study draws every row in full as well (its self-check covers
  // 2^22 draws), so a row whose verdict differs throws. Temperatures from
  // peaked to flat, the kernels' contracts and a coarse one (large ambiguity sets).
  const std::int64_t V = 48;
  const int R = 60;
  Safetensors s;
  s.tensors["logits"] = tensor("F32", {R, V}, crowded_rows(R, V));
  DivergenceOptions o;
  o.logits_file = write(s, "crowded.safetensors");
  o.kernels = false;
  o.rows = 3000;
  o.logit_rows = R;
  o.temperatures = {0.02f, 0.3f, 1.0f, 5.0f};
  for (const std::optional<double> ulp : {std::optional<double>{}, std::optional<double>{16384.0}}) {
    o.exp_ulp = ulp;
    DivergenceResult res;
    ASSERT_NO_THROW(res = finish(run_rate_study(o)));
    ASSERT_EQ(res.rows.size(), 8u);
    for (const auto& d : res.rows) EXPECT_EQ(d.rows, 3000);
    EXPECT_NE(res.method.find("60 logit rows"), std::string::npos) << res.method;
    EXPECT_NE(res.method.find("first 3000 rows"), std::string::npos) << res.method;
    EXPECT_EQ(res.noise.draws, 4 * 3000 * V);
  }
  double ambiguous = 0;
  for (const auto& d : finish(run_rate_study(o)).rows) ambiguous += d.ambiguous_fraction * double(d.rows);
  EXPECT_GT(ambiguous, 50) << "the coarse contract was meant to make rows with more than one legitimate id common";
}

TEST(RateStudy, ReplaysFromItsSeedAndReusesThePoolInTurn) {
  DivergenceOptions o;
  o.kernels = false;
  o.vocab = 4096;
  o.rows = 500;
  o.batches = 2;
  o.logit_rows = 7;
  o.temperatures = {0.7f};
  const DivergenceResult a = finish(run_rate_study(o)), b = finish(run_rate_study(o));
  EXPECT_NE(a.method.find("7 logit rows"), std::string::npos) << a.method;
  ASSERT_EQ(a.rows.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(a.rows[std::size_t(i)].rows, 1000);
    EXPECT_EQ(a.rows[std::size_t(i)].rate.rate, b.rows[std::size_t(i)].rate.rate);
    EXPECT_EQ(a.rows[std::size_t(i)].keys, b.rows[std::size_t(i)].keys);
  }
  o.seed += 1;
  EXPECT_NE(finish(run_rate_study(o)).rows[0].rate.rate, a.rows[0].rate.rate);
  o.logit_rows = 0;
  EXPECT_THROW(run_rate_study(o), std::invalid_argument);
}

TEST(RateStudy, PredictsHowOftenPreScaleAndPostScalePickDifferentIds) {
  // Flat rows far from 0, N(1000, 0.1^2): at T = 0.1 pre-scale rounds x / t
  // at |x / t| ~ 10^4, an ulp of 9.8e-4, so the two orders rank a near tie
  // differently over a width of about ulp / 6 = 1.6e-4 (docs/DIVERGENCE.md,
  // "fused-pre beside fused-post"): ~16 rows in 10^5. The count of emulated
  // tokens must agree with the prediction; at T = 1 the orders are one.
  DivergenceOptions o;
  o.kernels = false;
  o.normal_sigma = 0.1f;
  o.normal_centre = 1000.0f;
  o.dtype = oracle::Dtype::f32;
  o.vocab = 1024;
  o.rows = 50000;
  o.batches = 2;
  o.temperatures = {0.1f, 1.0f};
  const DivergenceResult res = finish(run_rate_study(o));
  ASSERT_EQ(res.rows.size(), 4u);
  EXPECT_FALSE(res.rows[0].apart_measured) << "the pair is fused-pre's row";
  const DivergenceRow& low = res.rows[1];
  ASSERT_TRUE(low.apart_measured);
  EXPECT_GT(low.apart.mean_threshold, 1e-4);
  EXPECT_LT(low.apart.mean_threshold, 2.5e-4);
  EXPECT_GE(low.apart_counted, 5) << "too few rows apart to check the prediction";
  EXPECT_TRUE(low.apart.agrees_with_count(low.apart_counted))
      << low.apart_counted << " counted, predicted " << low.apart.rate << " [" << low.apart.lo << ", " << low.apart.hi << "]";
  EXPECT_LT(low.apart.rate, 0.1 * low.rate.rate) << "two orders disagree far less often than the contract allows";
  EXPECT_EQ(res.rows[3].apart.rate, 0);
  EXPECT_EQ(res.rows[3].apart_counted, 0);
  // The single-pass baseline beside fused-post, emulated thread by thread: it
  // rounds the same product x * (1 / T) as fused-pre, so at T = 0.1 it ranks
  // as fused-pre does and its count agrees with its own prediction; at T = 1
  // only its rescales and its division by the row sum move its keys (about
  // 3e-8 of a key), too little to count in 10^5 rows.
  ASSERT_TRUE(low.base_apart_measured);
  EXPECT_EQ(low.base_apart.rows, low.rows);
  EXPECT_GT(low.base_apart.mean_threshold, 1e-4);
  EXPECT_LT(low.base_apart.mean_threshold, 2.5e-4);
  EXPECT_GE(low.base_apart_counted, 5) << "too few rows apart to check the prediction";
  EXPECT_TRUE(low.base_apart.agrees_with_count(low.base_apart_counted))
      << low.base_apart_counted << " counted, predicted " << low.base_apart.rate << " [" << low.base_apart.lo << ", "
      << low.base_apart.hi << "]";
  const DivergenceRow& one = res.rows[3];
  ASSERT_TRUE(one.base_apart_measured);
  EXPECT_GT(one.base_apart.mean_threshold, 0) << "the rescales and the division move the baseline's keys at T = 1";
  EXPECT_LT(one.base_apart.mean_threshold, 1e-6);
  EXPECT_TRUE(one.base_apart.agrees_with_count(one.base_apart_counted)) << one.base_apart_counted;
  EXPECT_FALSE(res.rows[0].base_apart_measured) << "the baseline's pair is fused-pre's row";
}

}  // namespace
}  // namespace raceoracle::analysis
