// The host's emulation of the fused kernels' keys (analysis/key_emulation.h)
// against the cpu kernel's own stage-1 partials, bit for bit: on every row
// class x edge of the coverage matrix, in contract and out, both dtypes and
// both scaling orders, and on rows at fp32's extremes (a max whose m / t
// overflows in pre-scale, a max near -FLT_MAX, subnormal E). An emulation
// that computes otherwise than the kernel (as one once computed pre-scale
// without the kernel's clamp of m / t) fails here.
#include <gtest/gtest.h>

#include <cfloat>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "analysis/key_emulation.h"
#include "subject/batch.h"
#include "fixtures/matrix.h"
#include "kernels/device_memory.h"
#include "kernels/key_arithmetic.h"
#include "kernels/registry.h"

namespace raceoracle::analysis {
namespace {

bool same(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

/// Rows that put fp32 at its edges: maxima whose m / t overflows (pre-scale),
/// finite maxima near -FLT_MAX, subnormal and huge E, at T from 1e-5 to 1e4.
subject::Batch extreme_rows() {
  const float T[] = {1e-5f, 1e-3f, 0.7f, 1e4f};
  const float maxima[] = {-FLT_MAX, -3e38f, -1e34f, -1e30f, 1e34f, FLT_MAX, 3e38f};
  subject::Batch b = subject::Batch::make(std::int64_t(std::size(T) * std::size(maxima)), 300);
  std::int64_t r = 0;
  for (float t : T)
    for (float m : maxima) {
      for (std::int64_t i = 0; i < b.vocab; ++i) {
        b.logits[std::size_t(r * b.logit_stride + i)] = i % 3 == 0 ? m : m * (1 - float(i % 7) * 1e-7f);
        b.noise[std::size_t(r * b.noise_stride + i)] = i % 5 == 0 ? 1e-40f : i % 5 == 1 ? 1e30f : 0.5f + float(i) * 1e-3f;
      }
      b.temperatures[std::size_t(r++)] = t;
    }
  return b;
}

/// The kernel's partials against the emulation: the tile winner's key from its tile max.
void expect_stage1_emulated(const kernels::Kernel& k, const subject::Batch& b, kernels::FusedConfig c, const std::string& what,
                            int& checked) {
  kernels::RunOptions o;
  o.config = c;
  const subject::KernelRun run = subject::run_kernel(k, b, o);
  ASSERT_TRUE(run.status.ok) << run.status.message;
  const kernels::HostPartials& p = run.partials;
  int shown = 0;
  for (std::int64_t r = 0; r < b.rows; ++r) {
    const float T = b.temperatures[std::size_t(r)];
    if (race::is_greedy(T, b.greedy_eps)) continue;  // a greedy row's partials hold logits, not keys
    for (std::int64_t t = 0; t < p.tiles; ++t) {
      const std::size_t q = std::size_t(r * p.tiles + t);
      const std::int64_t i = p.idx[q];
      if (i < 0 || i >= b.vocab) continue;
      const float want = emulated_stage1_key(b.x(r, i), b.e(r, i), b.eps, T, p.m[q], k.order);
      ++checked;
      if (same(p.key[q], want) || shown >= 5) continue;
      ++shown;
      ADD_FAILURE() << k.name << " " << what << " row " << r << " tile " << t << " id " << i << " (x " << b.x(r, i)
                    << ", E " << b.e(r, i) << ", T " << T << ", tile max " << p.m[q] << "): kernel key " << p.key[q]
                    << ", emulated " << want;
    }
  }
}

TEST(KeyEmulation, EqualsTheCpuKernelsStage1PartialsBitForBit) {
  if (std::string(kernels::backend_name()) != "cpu")
    GTEST_SKIP() << "the emulation uses the host's expf, which only the cpu backend's kernels share";
  fixtures::MatrixRequirement all;
  for (int r = 0; r < fixtures::kMatrixRows; ++r) all.rows.push_back(fixtures::MatrixRow(r));
  for (int e = 0; e < fixtures::kMatrixEdges; ++e) all.edges.push_back(fixtures::MatrixEdge(e));
  all.out_of_contract = true;
  const std::vector<fixtures::CaseSpec> cases = fixtures::matrix_cases(all);
  ASSERT_FALSE(cases.empty());
  int checked = 0;
  for (const char* name : {"fused-post", "fused-pre"}) {
    const kernels::Kernel& k = *kernels::find_kernel(name);
    for (std::size_t n = 0; n < cases.size(); ++n) {
      const subject::Batch b = fixtures::materialize(cases[n]);
      expect_stage1_emulated(k, b, kernels::kFusedConfigs[std::size_t(cases[n].config)], "matrix case " + std::to_string(n),
                             checked);
    }
    expect_stage1_emulated(k, extreme_rows(), kernels::FusedConfig{128, 64}, "extreme rows", checked);
  }
  EXPECT_GT(checked, 1000) << "too few keys compared to mean anything";
}

/// x * inv_t's rounding error in ulps of the rounded product, in (-1/2, 1/2]:
/// a product of two floats is exact in double.
double product_rounding(float x, float inv_t) {
  const double s = double(x) * double(inv_t);
  const float r = float(s);
  return (s - double(r)) / double(std::nextafter(r, INFINITY) - r);
}

/// Rows of V ids where the order of one pair is decided by whether x / t is
/// rounded before the max is subtracted: id 5 is the row max x0, whose product
/// rounds down by more than 0.3 ulp; id 6 is x1 < x0, whose product rounds up
/// by more than 0.3 ulp; E5 = 1 and E6 put the comparison halfway between the
/// rounded products' gap and the exact one. Rounded (pre-scale as the field
/// writes it) id 6 wins; exact (post-scale, or pre-scale fused into an FMA) id
/// 5 wins, by about 0.3 ulp of x / t either way, far beyond any expf's error.
/// Every other id sits 60 / t below and cannot win.
subject::Batch rounding_decided_rows(oracle::Dtype dtype, std::int64_t V) {
  const bool bf16 = dtype == oracle::Dtype::bf16;
  const float T[] = {0.3f, 0.7f, 1.3f};
  const float f32_magnitudes[] = {20.0f, 200.0f, 1500.0f}, bf16_magnitudes[] = {3.0f, 20.0f, 90.0f};
  const std::uint32_t step = bf16 ? 1u << 16 : 97u;  // bf16: representable logits only
  subject::Batch b = subject::Batch::make(std::int64_t(std::size(T) * std::size(f32_magnitudes)), V, dtype);
  std::int64_t r = 0;
  for (float t : T)
    for (float mag : bf16 ? bf16_magnitudes : f32_magnitudes) {
      const float inv_t = kernels::keys::inverse_temperature(t);
      auto rounding = [&](std::uint32_t bits) { return product_rounding(std::bit_cast<float>(bits), inv_t); };
      // The first x0 from mag up with an x1 below it, within 10 of x / t (so that E6 stays far above eps).
      float x0 = 0, x1 = 0;
      for (std::uint32_t b0 = std::bit_cast<std::uint32_t>(mag) & (bf16 ? 0xffff0000u : ~0u); x1 == 0; b0 += step) {
        if (rounding(b0) <= 0.3) continue;
        x0 = std::bit_cast<float>(b0);
        for (std::uint32_t b1 = b0 - step; x1 == 0 && (x0 - std::bit_cast<float>(b1)) * inv_t < 10.0f; b1 -= step)
          if (rounding(b1) < -0.3) x1 = std::bit_cast<float>(b1);
      }
      const double d_rounded = double(x0 * inv_t) - double(x1 * inv_t), d_exact = (double(x0) - double(x1)) * inv_t;
      for (std::int64_t i = 0; i < V; ++i) b.x(r, i) = x0 - 60.0f * t, b.e(r, i) = 1.0f;
      b.x(r, 5) = x0, b.e(r, 5) = 1.0f;
      b.x(r, 6) = x1, b.e(r, 6) = float(std::exp(-(d_rounded + d_exact) / 2));
      b.temperatures[std::size_t(r++)] = t;
    }
  b.round_logits();  // the filler; x0 and x1 are representable
  return b;
}

TEST(KeyEmulation, EveryKernelRanksAsItsOrderIsEmulatedWhereRoundingXOverTDecides) {
  if (kernels::device_count() == 0) GTEST_SKIP() << "no " << kernels::backend_name() << " device found";
  int decided_by_rounding = 0;
  for (auto dtype : {oracle::Dtype::f32, oracle::Dtype::bf16})
    for (std::int64_t V : {8, 5000}) {
      const subject::Batch b = rounding_decided_rows(dtype, V);
      auto emulated = [&](std::int64_t r, race::ScalingOrder order) {
        const float T = b.temperatures[std::size_t(r)], m = b.x(r, 5);
        const float k5 = emulated_key(m, b.e(r, 5), b.eps, T, m, m, order);
        const float k6 = emulated_key(b.x(r, 6), b.e(r, 6), b.eps, T, m, m, order);
        return k6 > k5 ? 6 : 5;
      };
      for (std::int64_t r = 0; r < b.rows; ++r) {
        ASSERT_EQ(emulated(r, race::ScalingOrder::pre), 6) << "row " << r << " is not decided by rounding";
        ASSERT_EQ(emulated(r, race::ScalingOrder::post), 5) << "row " << r << " is not decided by rounding";
        ++decided_by_rounding;
      }
      for (const kernels::Kernel& k : kernels::kernels()) {
        if (k.noise == kernels::NoiseSource::drawn) continue;  // it draws its own noise: none to plant
        const subject::KernelRun run = subject::run_kernel(k, b);
        ASSERT_TRUE(run.status.ok) << run.status.message;
        for (std::int64_t r = 0; r < b.rows; ++r)
          EXPECT_EQ(run.tokens[std::size_t(r)], emulated(r, k.order))
              << k.name << " " << oracle::to_string(dtype) << " V=" << V << " T=" << b.temperatures[std::size_t(r)]
              << ": x0 " << b.x(r, 5) << ", x1 " << b.x(r, 6) << " (E " << b.e(r, 6) << ")"
              << (k.order == race::ScalingOrder::pre ? ": x / t was not rounded before the max was subtracted (an FMA?)"
                                                     : "");
      }
    }
  EXPECT_EQ(decided_by_rounding, 36);
}

TEST(KeyEmulation, TheFullKeyIsTheStage1KeyRescaledToTheRowMax) {
  // The tile that holds the row max: its full key is its stage-1 key.
  for (auto order : {race::ScalingOrder::post, race::ScalingOrder::pre})
    for (float T : {1e-5f, 0.3f, 2.0f}) {
      EXPECT_EQ(emulated_key(1.5f, 0.7f, 1e-10f, T, 3.0f, 3.0f, order), emulated_stage1_key(1.5f, 0.7f, 1e-10f, T, 3.0f, order));
      // A lower tile is scaled by exp((m_t - M) / t) < 1.
      EXPECT_LT(emulated_key(2.0f, 0.7f, 1e-10f, T, 2.0f, 3.0f, order), emulated_stage1_key(2.0f, 0.7f, 1e-10f, T, 2.0f, order));
    }
  // A fully masked row: no NaN from -inf - -inf.
  EXPECT_EQ(emulated_key(-INFINITY, 1.0f, 1e-10f, 1.0f, -INFINITY, -INFINITY, race::ScalingOrder::pre), 0.0f);
}

}  // namespace
}  // namespace raceoracle::analysis
