// The divergence study on small shapes (cpu backend): every key inside its
// bound, the rate estimate against a counted rate, two dumps compared, the
// rows of a logits file reused.
#include "analysis/divergence.h"

#include <gtest/gtest.h>

#include <cmath>

#include "subject/batch.h"
#include "fixtures/llm_like.h"
#include "protocol/safetensors.h"
#include "tests/protocol/safetensors_files.h"

namespace raceoracle::analysis {
namespace {

using protocol::Safetensors;
using protocol::testing::tensor;
using DivergenceFiles = protocol::testing::SafetensorsFiles;

TEST(Divergence, SmallRunStaysInsideItsBound) {
  DivergenceOptions o;
  o.temperatures = {0.05f, 0.7f};
  o.rows = 3;
  o.vocab = 3000;
  o.dtype = oracle::Dtype::f32;
  const auto rows = run_divergence(o).rows;
  ASSERT_EQ(rows.size(), 4u);  // two temperatures x two orders
  for (const auto& r : rows) {
    EXPECT_EQ(r.rows, 3);
    EXPECT_LE(r.worst_ratio, 1.0) << race::to_string(r.order) << " T=" << r.temperature;
    EXPECT_LE(r.kernel_stage1_ratio, 1.0);
    EXPECT_EQ(r.unexplained + r.base_unexplained, 0);
    EXPECT_GT(r.max_bound, 0.0);
  }
  // First principles: the winner sits at the row max, where post-scale's
  // argument (x - M) / t is exactly 0 but pre-scale's x/t - M/t carries
  // ~2u |M| / t: at T = 0.05 pre-scale's winner bound is far wider.
  EXPECT_GT(rows[1].median_full_bound, 10 * rows[0].median_full_bound);
}

TEST(Divergence, PredictsHowOftenTheBaselinePicksAnotherIdThanFusedPost) {
  // N(10000, 0.01^2) at T = 0.03: x / t ~ 3 10^5, whose rounding (up to
  // half an ulp, 0.016) moves the pre-scale keys by up to 1.6%, so the
  // baseline and fused-post part on about one row in 200: countable on 2,048
  // rows. (The prediction is for small widths: at T = 0.01, widths near 0.7%,
  // it undercounts by 30%; docs/DIVERGENCE.md.)
  DivergenceOptions o;
  o.temperatures = {0.03f};
  o.rows = 2048;
  o.vocab = 256;
  o.dtype = oracle::Dtype::f32;
  o.normal_sigma = 0.01f;
  o.normal_centre = 10000;
  const auto rows = run_divergence(o).rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].base_apart_measured) << "the baseline sits in fused-pre's row";
  const DivergenceRow& pre = rows[1];
  ASSERT_TRUE(pre.base_apart_measured);
  EXPECT_GT(pre.base_apart.mean_threshold, 1e-3);
  EXPECT_GE(pre.base_apart_counted, 5) << "too few rows apart to check the prediction";
  EXPECT_TRUE(pre.base_apart.agrees_with_count(pre.base_apart_counted))
      << pre.base_apart_counted << " counted, predicted " << pre.base_apart.rate << " [" << pre.base_apart.lo << ", "
      << pre.base_apart.hi << "]";
  EXPECT_EQ(pre.base_unexplained, 0);
  // Without kernels (the rate study: other noise, 256 logit rows reused) the
  // baseline's tokens are the emulation's: a prediction whose interval meets
  // the one above, and a count that agrees with it.
  o.kernels = false;
  const auto lazy = run_divergence(o).rows;
  ASSERT_EQ(lazy.size(), 2u);
  EXPECT_FALSE(lazy[0].base_apart_measured);
  ASSERT_TRUE(lazy[1].base_apart_measured);
  const RateEstimate& l = lazy[1].base_apart;
  EXPECT_GT(l.mean_threshold, 1e-3);
  EXPECT_TRUE(l.lo <= pre.base_apart.hi && pre.base_apart.lo <= l.hi)
      << "[" << l.lo << ", " << l.hi << "] against [" << pre.base_apart.lo << ", " << pre.base_apart.hi << "]";
  EXPECT_GE(lazy[1].base_apart_counted, 5);
  EXPECT_TRUE(l.agrees_with_count(lazy[1].base_apart_counted)) << lazy[1].base_apart_counted;
}

TEST(Divergence, RateEstimateHoldsTheCountedRateWhereEventsAreCommon) {
  // A coarse exp (2^14 ulps, ~2e-3 relative) on flat N(0, 1) rows makes
  // rows that may disagree common (~0.4%). The estimate from 1,024 rows must
  // hold the rate counted directly on 65,536 other rows, for both orders.
  DivergenceOptions o;
  o.temperatures = {1.0f};
  o.vocab = 512;
  o.dtype = oracle::Dtype::f32;
  o.normal_sigma = 1;
  o.exp_ulp = 16384;
  o.kernels = false;
  o.rows = 1024;
  const auto estimate = run_divergence(o).rows;
  o.rows = 4096;
  o.batches = 16;
  o.seed += 1;
  const auto counted = run_divergence(o).rows;
  ASSERT_EQ(estimate.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const auto& e = estimate[std::size_t(i)].rate;
    const double rate = counted[std::size_t(i)].ambiguous_fraction;
    EXPECT_GT(rate * double(counted[std::size_t(i)].rows), 100) << "too few events to count";
    EXPECT_TRUE(e.contains(rate)) << race::to_string(estimate[std::size_t(i)].order) << ": counted " << rate << " outside [" << e.lo << ", "
                                  << e.hi << "], estimate " << e.rate << " from " << e.in_window << " rows in the window";
    EXPECT_GT(e.flatness_p, 1e-3);
  }
}

TEST_F(DivergenceFiles, ComparesTwoDumpsPerTemperature) {
  // Row 0: ids 0 and 1 tie on the logit, their noise one ulp apart: either may
  // win. Row 1: id 1 wins by far. Row 2 (T = 0.5): id 3 wins by far.
  const std::int64_t V = 4;
  const std::vector<float> logits{1, 1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 5};
  const std::vector<float> noise{1.0f, std::nextafter(1.0f, 2.0f), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const std::vector<float> temps{1.0f, 1.0f, 0.5f};
  auto dump = [&](std::vector<std::int32_t> tokens, const std::vector<float>& e) {
    Safetensors s;
    s.tensors["logits"] = tensor("F32", {3, V}, logits);
    s.tensors["noise"] = tensor("F32", {3, V}, e);
    s.tensors["temperatures"] = tensor("F32", {3}, temps);
    s.tensors["tokens"] = tensor("I32", {3}, tokens);
    return s;
  };
  const std::string a = write(dump({0, 1, 3}, noise), "a.safetensors");
  const std::string b = write(dump({1, 2, 3}, noise), "b.safetensors");
  const auto res = compare_dumps(a, b);
  ASSERT_EQ(res.beside.size(), 2u);  // T = 0.5, then T = 1
  EXPECT_EQ(res.beside[0].temperature, 0.5f);
  EXPECT_EQ(res.beside[0].rows, 1);
  EXPECT_EQ(res.beside[0].differ, 0);
  const auto& t1 = res.beside[1];
  EXPECT_EQ(t1.rows, 2);
  EXPECT_EQ(t1.differ, 2);
  EXPECT_EQ(t1.explained, 1);
  EXPECT_EQ(t1.unexplained, 1);
  ASSERT_EQ(t1.unexplained_rows.size(), 1u);  // listed: the row, both tokens, which is outside its set
  EXPECT_EQ(t1.unexplained_rows[0], "row 1 (T = 1): the reference wrote 1, the other 2 (unexplained)");
  EXPECT_EQ(res.noise.draws, 12);
  EXPECT_EQ(compare_dumps(a, a).beside[1].differ, 0);

  std::vector<float> other = noise;
  other[5] = 2;
  const std::string c = write(dump({0, 1, 3}, other), "c.safetensors");
  try {
    compare_dumps(a, c);
    ADD_FAILURE() << "different noise accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("different noise"), std::string::npos) << e.what();
  }
}

TEST_F(DivergenceFiles, ReusesTheRowsOfALogitsFile) {
  subject::Batch rows = subject::Batch::make(3, 700, oracle::Dtype::f32);
  fixtures::fill_llm_like(rows, 5);
  Safetensors s;
  s.tensors["logits"] = tensor("F32", {3, 700}, rows.logits);
  const std::string path = write(s, "logits.safetensors");
  DivergenceOptions o;
  o.logits_file = path;
  o.rows = 5;
  o.batches = 2;
  o.temperatures = {0.7f};
  const auto res = run_divergence(o);
  ASSERT_EQ(res.rows.size(), 2u);
  EXPECT_EQ(res.rows[0].rows, 10);
  EXPECT_EQ(res.rows[0].unexplained, 0);
  EXPECT_EQ(res.noise.draws, 10 * 700);
  s.tensors.erase("logits");
  o.logits_file = write(s, "no-logits.safetensors");
  try {
    run_divergence(o);
    ADD_FAILURE() << "a file without logits accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("logits"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace raceoracle::analysis
