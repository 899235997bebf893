// The fast oracle (decide: fp32 screen, float64 keys for the ids it keeps)
// against the reference (decide_reference: every id's float64 key), verdict
// for verdict: token, class, reason, key, rho, runner-up, gap and ambiguity
// set must be identical, bit for bit. Inputs: every row family of the
// generators (SPEC §4: near ties ulps apart, exact ties, masked tiles, noise
// edges, out-of-contract rows...), both dtypes, the top of rows crowded with
// keys a few ulps apart, rows reordered so the screen
// meets keys in rising, falling and drawn order, contracts from exact to very
// coarse, and eps from 0 to 1.
//
// Cases: RACEORACLE_DIFFERENTIAL_CASES (default 300, the CI depth); the deep
// run (10,000 cases) and its result are in oracle/SCREEN.md.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "fixtures/generators.h"
#include "oracle/oracle.h"
#include "oracle/reference.h"

namespace {

using namespace raceoracle;
using oracle::Verdict;

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// "" when the verdicts are identical, else the first difference.
std::string difference(const Verdict& fast, const Verdict& ref) {
  auto field = [](const char* name, const auto& f, const auto& r) { return fmt::format("{}: fast {} reference {}", name, f, r); };
  if (fast.token != ref.token) return field("token", fast.token, ref.token);
  if (fast.row_class != ref.row_class) return field("class", to_string(fast.row_class), to_string(ref.row_class));
  if (fast.reason != ref.reason || fast.reason_id != ref.reason_id) return field("reason id", fast.reason_id, ref.reason_id);
  if (!same(fast.key, ref.key)) return field("key", fast.key, ref.key);
  if (!same(fast.rho, ref.rho)) return field("rho", fast.rho, ref.rho);
  if (fast.runner_up != ref.runner_up) return field("runner-up", fast.runner_up, ref.runner_up);
  if (!same(fast.runner_up_key, ref.runner_up_key)) return field("runner-up key", fast.runner_up_key, ref.runner_up_key);
  if (!same(fast.gap, ref.gap)) return field("gap", fast.gap, ref.gap);
  if (fast.ambiguous != ref.ambiguous)
    return field("ambiguity set", fmt::format("{{{}}}", fmt::join(fast.ambiguous, ",")),
                 fmt::format("{{{}}}", fmt::join(ref.ambiguous, ",")));
  return "";
}

/// Reorders row r's ids (noise with them, unless the batch shares one noise
/// row): 0 as drawn, 1 logits rising, 2 falling, 3 reversed.
void reorder(subject::Batch& b, std::int64_t r, int order) {
  if (order == 0) return;
  std::vector<std::int64_t> ids(std::size_t(b.vocab));
  std::iota(ids.begin(), ids.end(), 0);
  if (order == 3) std::reverse(ids.begin(), ids.end());
  else
    std::stable_sort(ids.begin(), ids.end(), [&](std::int64_t i, std::int64_t j) {
      return order == 1 ? b.x(r, i) < b.x(r, j) : b.x(r, i) > b.x(r, j);  // NaN rows keep some order: any is fine
    });
  std::vector<float> x(ids.size()), e(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) x[k] = b.x(r, ids[k]), e[k] = b.e(r, ids[k]);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    b.x(r, std::int64_t(k)) = x[k];
    if (b.noise_stride != 0) b.e(r, std::int64_t(k)) = e[k];
  }
}

/// One step down in the row's dtype (bf16 ulps for bf16 logits).
float step_down(float v, race::Dtype d) {
  if (d == race::Dtype::f32) return std::nextafter(v, -std::numeric_limits<float>::infinity());
  const std::uint16_t h = race::round_to_bf16(v);
  if (v == 0) return race::widen_bf16(0x8001);
  return race::widen_bf16(std::uint16_t(v > 0 ? h - 1 : h + 1));
}

/// Crowds the top of row r: `n` ids spread over the row get logits 0..2
/// steps below the row max and noise 0..2 ulps above the max id's, so up to
/// n + 1 keys lie within a few ulps of each other (exact ties included).
void crowd(subject::Batch& b, std::int64_t r, int n) {
  std::int64_t m = 0;
  for (std::int64_t i = 1; i < b.vocab; ++i)
    if (b.x(r, i) > b.x(r, m)) m = i;
  if (!std::isfinite(b.x(r, m))) return;
  for (int j = 1; j <= n; ++j) {
    const std::int64_t id = (m + j * (b.vocab / (n + 1) + 1)) % b.vocab;
    float x = b.x(r, m), e = b.e(r, m);
    for (int k = 0; k < j % 3; ++k) x = step_down(x, b.dtype);
    for (int k = 0; k < (j / 3) % 3; ++k) e = std::nextafter(e, std::numeric_limits<float>::infinity());
    b.x(r, id) = x;
    if (b.noise_stride != 0) b.e(r, id) = e;
  }
}

class Quiet : public rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

int cases() {
  const char* env = std::getenv("RACEORACLE_DIFFERENTIAL_CASES");
  return env ? std::max(1, std::atoi(env)) : 300;
}

TEST(OracleDifferential, SignedZerosAtTheMaxReadAsStored) {
  // +0 and -0 compare equal: which one a max keeps depends on the order it
  // reads them in. The verdict reads the token's own logit (found by fuzzing).
  const float z = 0.0f, nz = -0.0f;
  for (const std::vector<float>& x : {std::vector<float>{nz, z, -1.0f}, {z, nz, -1.0f}, {-1.0f, nz, nz, z}}) {
    const std::vector<float> e(x.size(), 1.0f);
    for (const float T : {0.0f, 1.0f}) {
      const oracle::RowView row{x.data(), race::Dtype::f32, e.data(), std::int64_t(x.size()), T};
      const Verdict fast = oracle::decide(row, {}), ref = oracle::decide_reference(row, {});
      EXPECT_EQ(difference(fast, ref), "") << "T " << T << ": " << fast.describe();
      EXPECT_TRUE(same(fast.key, T == 0 ? double(x[std::size_t(fast.token)]) : fast.key));
    }
  }
}

TEST(OracleDifferential, FastVerdictsEqualTheReferenceOnEveryRowClass) {
  const std::vector<race::NumericsContract> contracts = {
      {},                                                          // post, CUDA's expf
      {race::ScalingOrder::pre, 2.0, 0.5, 2.0, true},              // pre-scale, two stages
      {race::ScalingOrder::post, 1.0, 0.5, 2.0, false},            // one stage, glibc expf
      {race::ScalingOrder::pre, 0.5, 0.5, 0.5, false},             // correctly rounded everything
      {race::ScalingOrder::post, 16384.0, 2.0, 2.0, true},         // coarse: large ambiguity sets
  };
  const std::vector<float> eps = {race::kDefaultEps, 0.0f, 1e-3f, 1.0f, 1e-30f, 1e35f};
  fixtures::gen::CaseOptions options;
  options.max_rows = 4;
  std::string failure;
  int rows = 0;
  auto property = [&] {
    const fixtures::CaseSpec spec = *fixtures::gen::batch(options);
    const int order = *rc::gen::inRange(0, 4);
    const int crowded = *rc::gen::element(0, 0, 2, 5, 9);
    const race::NumericsContract c = *rc::gen::elementOf(contracts);
    const float e = *rc::gen::elementOf(eps);
    const float hot = *rc::gen::element(0.0f, 0.0f, 0.0f, 1e30f, 3e38f);  // past the screen's range: the reference decides
    subject::Batch b = fixtures::materialize(spec);
    b.eps = e;
    for (std::int64_t r = 0; r < b.rows; ++r) {
      crowd(b, r, crowded), reorder(b, r, order);
      if (hot != 0) b.temperatures[std::size_t(r)] = hot;
    }
    const oracle::BatchView view = b.view();
    for (std::int64_t r = 0; r < b.rows; ++r) {
      ++rows;
      const Verdict fast = oracle::decide(view.row(r), c, {b.eps, b.greedy_eps});
      const Verdict ref = oracle::decide_reference(view.row(r), c, {b.eps, b.greedy_eps});
      if (const std::string d = difference(fast, ref); !d.empty()) {
        failure = fmt::format("{}\n  crowd {} order {} T {} eps {} contract {} exp_ulp {}\n  {}\n  fast: {}\n  reference: {}",
                              fixtures::describe(spec), crowded, order, hot, e, to_string(c.order), c.exp_ulp, d, fast.describe(),
                              ref.describe());
        RC_FAIL(failure);
      }
    }
  };
  rc::detail::TestParams params;
  params.seed = race::kCiSeed;
  params.maxSuccess = cases();
  params.maxSize = 100;  // Debian's RapidCheck: sizes above 100 are undefined behaviour
  Quiet quiet;
  const rc::detail::TestResult result = rc::detail::checkProperty(
      rc::detail::toProperty(property), {"OracleDifferential", "fast == reference"}, params, quiet, {});
  rc::detail::FailureResult failed;
  rc::detail::SuccessResult passed;
  EXPECT_FALSE(result.match(failed)) << failure;
  ASSERT_TRUE(result.match(passed) || result.match(failed));
  std::printf("%d cases, %d rows: every verdict identical\n", passed.numSuccess, rows);
}

}  // namespace
