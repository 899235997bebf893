// The host's emulation of the fused kernels' keys (analysis/key_emulation.h)
// against the cpu kernel's own stage-1 partials, bit for bit: on every row
// class x edge of the coverage matrix, in contract and out, both dtypes and
// both scaling orders, and on rows at fp32's extremes (a max whose m / t
// overflows in pre-scale, a max near -FLT_MAX, subnormal E). An emulation
// that computes otherwise than the kernel (as one once computed pre-scale
// without the kernel's clamp of m / t) fails here.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

#include "analysis/key_emulation.h"
#include "subject/batch.h"
#include "fixtures/matrix.h"
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
