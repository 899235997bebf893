// The verify step's oracle (SPEC §11, oracle/verify.h): its chain on hand-made
// requests, its out-of-contract rules, the judge's verdict on malformed
// outputs; then the soundness and tightness of its fp32 bounds against an
// emulation of the verify step as vLLM computes it (fp32 softmax, ratio,
// residual race), and the definition's losslessness by simulation.
#include <gtest/gtest.h>

#include <boost/math/distributions/chi_squared.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "oracle/probability.h"
#include "oracle/verify.h"

namespace raceoracle::oracle {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// One verify request, owned.
struct Request {
  std::int64_t V = 0, k = 0;
  std::vector<float> x;  // [(k + 1) V]
  std::vector<std::int32_t> d;
  std::vector<float> q;  // [k V], or empty: deterministic drafts
  std::vector<double> u;
  std::vector<float> R, B;
  float T = 1;
  race::RowFilter f;
  bool filtered = false;

  Request(std::int64_t vocab, std::int64_t drafts)
      : V(vocab), k(drafts), x(std::size_t((drafts + 1) * vocab), 0.0f), d(std::size_t(drafts), 0),
        u(std::size_t(drafts), 0.5), R(std::size_t(vocab), 1.0f), B(std::size_t(vocab), 1.0f) {}
  float& logit(std::int64_t j, std::int64_t i) { return x[std::size_t(j * V + i)]; }
  float& draft(std::int64_t j, std::int64_t i) {
    if (q.empty()) q.assign(std::size_t(k * V), 0.0f);
    return q[std::size_t(j * V + i)];
  }
  VerifyView view() const {
    VerifyView v;
    v.target = x.data();
    v.dtype = Dtype::f32;
    v.vocab = V;
    v.stride = V;
    v.drafts = k;
    v.draft_ids = d.data();
    v.draft_probs = q.empty() ? nullptr : q.data();
    v.uniforms = u.data();
    v.recovery_noise = R.data();
    v.bonus_noise = B.data();
    v.temperature = T;
    v.filter = filtered ? &f : nullptr;
    return v;
  }
};

NumericsContract vllm_contract() {
  NumericsContract c;
  c.order = ScalingOrder::pre;  // logits / T, then the softmax
  c.scale_divides = true;
  c.exp_ulp = 1.0;              // glibc expf
  c.rescales = 0;
  c.normalises = true;
  c.conventions.eps = race::EpsRule::none;  // prob / q
  return c;
}

VerifyVerdict decide_of(const Request& r, const NumericsContract& c = vllm_contract(), const RaceConstants& k = {}) {
  return decide_verify(r.view(), c, k);
}

Outcome judge_of(const Request& r, const VerifyVerdict& v, std::vector<std::int32_t> out) {
  return judge_verify(v, r.view(), out.data()).outcome;
}

// P = (0.5, 0.25, 0.125, 0.125) at T = 1 from logits log P.
void set_row(Request& r, std::int64_t j, std::vector<double> p) {
  for (std::int64_t i = 0; i < r.V; ++i) r.logit(j, i) = p[std::size_t(i)] > 0 ? float(std::log(p[std::size_t(i)])) : -kInf;
}

TEST(VerifyOracle, DeterministicDraftsAcceptWhileTheTargetProbabilityReachesTheUniform) {
  Request r(4, 2);
  set_row(r, 0, {0.5, 0.25, 0.125, 0.125});
  set_row(r, 1, {0.5, 0.25, 0.125, 0.125});
  set_row(r, 2, {0.1, 0.2, 0.3, 0.4});
  r.d = {0, 1};
  r.u = {0.3, 0.9};  // 0.5 >= 0.3 accepted; 0.25 < 0.9 rejected
  r.R = {1.0f, 1.0f, 0.01f, 1.0f};
  const VerifyVerdict v = decide_of(r);
  ASSERT_EQ(v.request_class, RowClass::sampling) << v.describe();
  EXPECT_EQ(v.accepted, 1);
  // The residual without the draft 1: keys 0.5, 0, 12.5, 0.125: id 2.
  EXPECT_EQ(v.token, 2);
  EXPECT_EQ(v.emitted[1], std::vector<std::int64_t>{2});
  EXPECT_FALSE(v.allows(0));
  EXPECT_FALSE(v.allows(2));
  EXPECT_EQ(judge_of(r, v, {0, 2, -1}), Outcome::identical);
  // The draft id itself never wins the residual race, however small its E.
  r.R = {1.0f, 1e-30f, 1.0f, 1.0f};
  EXPECT_EQ(decide_of(r).token, 0);
}

TEST(VerifyOracle, EveryDraftAcceptedEmitsTheBonusRace) {
  Request r(4, 1);
  set_row(r, 0, {0.5, 0.25, 0.125, 0.125});
  set_row(r, 1, {0.1, 0.2, 0.3, 0.4});
  r.d = {0};
  r.u = {0.3};
  r.B = {1.0f, 1.0f, 1.0f, 0.001f};
  VerifyVerdict v = decide_of(r);
  EXPECT_EQ(v.accepted, 1);
  EXPECT_EQ(v.token, 3);
  EXPECT_EQ(v.acceptance[0], Acceptance::accept);
  EXPECT_FALSE(v.allows(0));
  EXPECT_EQ(judge_of(r, v, {0, 3}), Outcome::identical);
  EXPECT_EQ(judge_of(r, v, {0, 1}), Outcome::unexplained);
  // u at the exact ratio (accepted: the rule is >=): fp32 may go either way,
  // and both chains are explained, each with its own token.
  r.u = {v.ratio[0]};
  v = decide_of(r);
  EXPECT_EQ(v.accepted, 1);
  EXPECT_EQ(v.acceptance[0], Acceptance::either);
  EXPECT_TRUE(v.allows(0)) << v.describe();
  EXPECT_EQ(judge_of(r, v, {0, 3}), Outcome::identical);
  EXPECT_EQ(judge_of(r, v, {std::int32_t(v.emitted[0][0]), -1}), Outcome::explained);
}

TEST(VerifyOracle, ARowTiedAtItsMaxIsComputedExactlySoTheCompareAtEqualityIsCertain) {
  Request r(4, 1);
  r.logit(0, 0) = r.logit(0, 1) = 1.0f, r.logit(0, 2) = r.logit(0, 3) = -kInf;  // P = (0.5, 0.5, 0, 0), exactly in fp32
  set_row(r, 1, {0.25, 0.25, 0.25, 0.25});
  r.d = {1};
  r.u = {0.5};  // P / Q = 0.5 >= 0.5: accepted, and fp32 cannot say otherwise
  EXPECT_EQ(decide_of(r).acceptance[0], Acceptance::accept) << decide_of(r).describe();
  r.u = {std::nextafter(0.5, 1.0)};
  EXPECT_EQ(decide_of(r).acceptance[0], Acceptance::reject);
  // Q = 0.75: the fp32 ratio fl(0.5 / 0.75) and the exact 2/3 bracket what fp32 may do.
  r.draft(0, 1) = 0.75f, r.draft(0, 0) = 0.25f;
  r.u = {2.0 / 3.0};
  EXPECT_EQ(decide_of(r).acceptance[0], Acceptance::accept);
  r.u = {double(0.5f / 0.75f)};
  EXPECT_EQ(decide_of(r).acceptance[0], Acceptance::either);
  r.u = {std::nextafter(double(0.5f / 0.75f), 1.0)};
  EXPECT_EQ(decide_of(r).acceptance[0], Acceptance::reject);
}

TEST(VerifyOracle, StochasticDraftsRaceTheResidualAndAnIdWithoutResidualNeverWins) {
  Request r(4, 1);
  set_row(r, 0, {0.4, 0.3, 0.2, 0.1});
  set_row(r, 1, {0.25, 0.25, 0.25, 0.25});
  r.draft(0, 0) = 0.1f, r.draft(0, 1) = 0.6f, r.draft(0, 2) = 0.1f, r.draft(0, 3) = 0.2f;
  r.d = {1};
  r.u = {0.9};  // 0.3 / 0.6 = 0.5 < 0.9: rejected
  // Residual (0.3, 0, 0.1, 0): ids 1 and 3 have none; a zero E there must not make them win (FIELD_BUGS #27).
  r.R = {1.0f, 1e-30f, 1.0f, 1e-30f};
  VerifyVerdict v = decide_of(r);
  EXPECT_EQ(v.accepted, 0);
  EXPECT_EQ(v.token, 0);
  EXPECT_EQ(v.emitted[0], std::vector<std::int64_t>{0});
  r.R[2] = 0.1f;  // keys 0.3 and 1.0: id 2
  v = decide_of(r);
  EXPECT_EQ(v.token, 2);
  EXPECT_EQ(judge_of(r, v, {2, -1}), Outcome::identical);
  EXPECT_EQ(judge_of(r, v, {0, -1}), Outcome::unexplained);  // the target's race, not the residual's
  EXPECT_EQ(judge_of(r, v, {1, 0}), Outcome::unexplained);   // a rejected draft emitted, then the bonus
}

TEST(VerifyOracle, AZeroDraftProbabilityRejectsAndAnAllZeroResidualGivesIdZero) {
  Request r(3, 1);
  set_row(r, 0, {0.2, 0.3, 0.5});
  set_row(r, 1, {0.2, 0.3, 0.5});
  r.draft(0, 1) = 0.3f, r.draft(0, 2) = 0.7f;
  // A draft at Q = 0 (not one a drafter would make) is rejected, even at u = 0.
  r.d = {0};
  r.u = {0.0};
  VerifyVerdict v = decide_of(r);
  EXPECT_EQ(v.accepted, 0);
  EXPECT_EQ(v.acceptance[0], Acceptance::reject);
  EXPECT_EQ(v.token, 0);  // residual (0.2, 0, 0)
  // A forced target row and a draft distribution equal to it: no residual anywhere, id 0 (SPEC §11).
  set_row(r, 0, {0.0, 1.0, 0.0});
  r.q = {0.0f, 1.0f, 0.0f};
  r.R = {1.0f, 1.0f, 1e-20f};
  v = decide_of(r);
  EXPECT_EQ(v.accepted, 0);
  EXPECT_EQ(v.token, 0);
  EXPECT_TRUE(std::binary_search(v.emitted[0].begin(), v.emitted[0].end(), 0));
  EXPECT_FALSE(std::binary_search(v.emitted[0].begin(), v.emitted[0].end(), 2)) << v.describe();  // masked: never
}

TEST(VerifyOracle, GreedyRequestsAcceptWhileTheDraftIsTheLowestArgmax) {
  Request r(5, 3);
  set_row(r, 0, {0.1, 0.4, 0.4, 0.05, 0.05});  // tie at ids 1 and 2: 1
  set_row(r, 1, {0.1, 0.1, 0.1, 0.6, 0.1});
  set_row(r, 2, {0.9, 0.025, 0.025, 0.025, 0.025});
  set_row(r, 3, {0.2, 0.2, 0.2, 0.2, 0.2});
  r.T = 1e-10f;  // == greedy_eps: greedy
  r.d = {1, 3, 4};
  r.u = {0.99, 0.99, 0.99};  // never read
  VerifyVerdict v = decide_of(r);
  ASSERT_EQ(v.request_class, RowClass::greedy);
  EXPECT_EQ(v.accepted, 2);
  EXPECT_EQ(v.token, 0);
  EXPECT_EQ(judge_of(r, v, {1, 3, 0, -1}), Outcome::identical);
  EXPECT_EQ(judge_of(r, v, {1, 3, 4, 0}), Outcome::unexplained);
  r.d = {1, 3, 0};
  v = decide_of(r);
  EXPECT_EQ(v.accepted, 3);
  EXPECT_EQ(v.token, 0);  // all tied: the lowest id
  // Greedy requests read neither noise nor uniforms: NaN there changes nothing.
  r.R[0] = std::nanf(""), r.u[0] = std::nan("");
  EXPECT_EQ(decide_of(r).accepted, 3);
}

/// V = 4, two drafts (ids 0 and 1), every row uniform: P = 0.25 everywhere.
Request uniform_request(std::vector<double> u) {
  Request r(4, 2);
  for (std::int64_t j = 0; j <= 2; ++j) set_row(r, j, {0.25, 0.25, 0.25, 0.25});
  r.d = {0, 1};
  r.u = std::move(u);
  return r;
}

TEST(VerifyOracle, OutOfContractRequestsNameTheirReasonAndStillNeedAWellFormedOutput) {
  const Request base = uniform_request({0.9, 0.9});
  struct Case {
    const char* what;
    std::function<void(Request&)> edit;
    InvalidReason reason;
  };
  const std::vector<Case> cases = {
      {"NaN logit in the bonus row", [](Request& r) { r.logit(2, 3) = std::nanf(""); }, InvalidReason::nan_logit},
      {"+inf logit", [](Request& r) { r.logit(1, 0) = kInf; }, InvalidReason::pos_inf_logit},
      {"draft id past V", [](Request& r) { r.d[1] = 4; }, InvalidReason::bad_draft},
      {"negative draft probability", [](Request& r) { r.draft(0, 0) = -0.1f; }, InvalidReason::bad_draft},
      {"uniform of 1", [](Request& r) { r.u[1] = 1.0; }, InvalidReason::bad_uniform},
      {"NaN uniform", [](Request& r) { r.u[0] = std::nan(""); }, InvalidReason::bad_uniform},
      {"NaN temperature", [](Request& r) { r.T = std::nanf(""); }, InvalidReason::nan_temperature},
      {"zero recovery draw without eps", [](Request& r) { r.R[2] = 0.0f; }, InvalidReason::zero_noise_without_eps},
      {"negative recovery draw", [](Request& r) { r.R[2] = -1.0f; }, InvalidReason::negative_noise},
      {"bad top_p", [](Request& r) { r.filtered = true, r.f.top_p = 0.0f; }, InvalidReason::bad_filter},
  };
  for (const Case& c : cases) {
    Request r = base;
    c.edit(r);
    const VerifyVerdict v = decide_of(r);
    EXPECT_EQ(v.request_class, RowClass::invalid) << c.what << ": " << v.describe();
    EXPECT_EQ(v.reason, c.reason) << c.what << ": " << v.describe();
    EXPECT_EQ(judge_of(r, v, {3, -1, -1}), Outcome::out_of_contract) << c.what;
    EXPECT_EQ(judge_of(r, v, {-1, -1, -1}), Outcome::out_of_range) << c.what;
    EXPECT_EQ(judge_of(r, v, {0, 7, -1}), Outcome::out_of_range) << c.what;
  }
  // Noise the request never reads is not judged: every draft surely accepted, the recovery draw unread.
  Request r = base;
  r.u = {0.0, 0.0};
  r.R[2] = std::nanf("");
  EXPECT_EQ(decide_of(r).request_class, RowClass::sampling);
}

/// A batch whose requests have counts of their own (SPEC §11): request r
/// reads its first k_r drafts and target rows 0..k_r, writes k_r + 1 ids then
/// the placeholder up to the batch's k + 1; a count outside [0, k] is out of
/// contract, clamped so that nothing past the request's rows is read.
TEST(VerifyOracle, RequestsWithCountsOfTheirOwn) {
  Request r = uniform_request({0.0, 0.0});  // k = 2, P/Q = 0.25 >= u = 0: every draft accepted
  std::vector<std::int32_t> counts{1};
  VerifyBatchView b{r.x.data(), Dtype::f32, 1, r.k, r.V, r.d.data(), r.q.empty() ? nullptr : r.q.data(), r.u.data(),
                    r.R.data(), r.B.data(), &r.T, counts.data()};
  VerifyView v = b.request(0);
  EXPECT_EQ(v.drafts, 1);
  VerifyVerdict verdict = decide_verify(v, vllm_contract());
  ASSERT_EQ(verdict.request_class, RowClass::sampling) << verdict.describe();
  EXPECT_EQ(verdict.accepted, 1);  // its one draft accepted, the bonus from target row 1
  const std::int32_t bonus = std::int32_t(verdict.token);
  const std::vector<std::int32_t> good{r.d[0], bonus, -1}, past{r.d[0], bonus, r.d[1]};
  EXPECT_NE(judge_verify(verdict, v, good.data(), 3).outcome, Outcome::out_of_range);
  const VerifyJudgement j = judge_verify(verdict, v, past.data(), 3);
  EXPECT_EQ(j.outcome, Outcome::out_of_range);
  EXPECT_NE(j.why.find("past the request's 2 ids (its own count of drafts is 1)"), std::string::npos) << j.why;
  for (std::int32_t bad : {-1, 3}) {
    counts[0] = bad;
    v = b.request(0);
    EXPECT_GE(v.drafts, 0);
    EXPECT_LE(v.drafts, r.k);
    verdict = decide_verify(v, vllm_contract());
    EXPECT_EQ(verdict.request_class, RowClass::invalid) << bad;
    EXPECT_EQ(verdict.reason, InvalidReason::bad_draft_count) << bad;
  }
}

TEST(VerifyOracle, TheJudgeNamesMalformedOutputs) {
  const Request r = uniform_request({0.1, 0.1});
  const VerifyVerdict v = decide_of(r);
  ASSERT_EQ(v.accepted, 2);
  const VerifyView view = r.view();
  auto why = [&](std::vector<std::int32_t> out) { return judge_verify(v, view, out.data()); };
  EXPECT_EQ(why({-1, 0, 0}).outcome, Outcome::out_of_range);  // placeholder first, ids after it
  EXPECT_EQ(why({0, -1, 2}).outcome, Outcome::out_of_range);
  EXPECT_EQ(why({2, 1, 0}).outcome, Outcome::unexplained);  // position 0 is not the draft
  EXPECT_NE(why({2, 1, 0}).why.find("not the draft"), std::string::npos);
  EXPECT_EQ(why({0, 3, -1}).outcome, Outcome::unexplained);  // fp32 cannot reject a draft at 0.25 >= 0.1
  EXPECT_EQ(why({0, 1, 0}).outcome, Outcome::identical);      // the bonus: equal logits, equal E: the lowest id
  EXPECT_EQ(why({0, 1, 3}).outcome, Outcome::unexplained);    // an exact tie is not fp32's latitude
}

// ---- fp32 emulation of the verify step as vLLM computes it ----

/// softmax(x / t) in fp32 over the finite ids: the division, the max, expf,
/// a sequential sum, the division by it (torch's order on one row).
std::vector<float> softmax_f32(const float* x, std::int64_t V, float T) {
  const float t = race::clamp_temperature(T);
  std::vector<float> xs(static_cast<std::size_t>(V)), p(static_cast<std::size_t>(V), 0.0f);
  float m = -kInf;
  for (std::int64_t i = 0; i < V; ++i) m = std::max(m, xs[std::size_t(i)] = x[i] / t);
  float S = 0;
  for (std::int64_t i = 0; i < V; ++i) S += (p[std::size_t(i)] = std::exp(xs[std::size_t(i)] - m));
  for (auto& v : p) v = v / S;
  return p;
}

/// argmax of num_i / fl(E_i + eps) in fp32, ties to the lowest id.
std::int64_t race_f32(const std::vector<float>& num, const float* E, float eps) {
  std::int64_t best = 0;
  float top = -1;
  for (std::size_t i = 0; i < num.size(); ++i) {
    const float key = num[i] / (E[i] + eps);
    if (key > top) top = key, best = std::int64_t(i);
  }
  return best;
}

/// The k + 1 ids the emulated sampler writes. `from_target`: the recovered
/// token raced on P itself, not the residual (a defect the judge must see).
std::vector<std::int32_t> verify_f32(const Request& r, float eps, bool from_target = false) {
  std::vector<std::int32_t> out(std::size_t(r.k + 1), race::kVerifyPlaceholder);
  for (std::int64_t j = 0; j <= r.k; ++j) {
    const std::vector<float> P = softmax_f32(r.x.data() + j * r.V, r.V, r.T);
    if (j == r.k) {
      out[std::size_t(j)] = std::int32_t(race_f32(P, r.B.data(), eps));
      break;
    }
    const std::int32_t d = r.d[std::size_t(j)];
    const float q = r.q.empty() ? 1.0f : r.q[std::size_t(j * r.V + d)];
    if (q > 0 && double(P[std::size_t(d)] / q) >= r.u[std::size_t(j)]) {
      out[std::size_t(j)] = d;
      continue;
    }
    std::vector<float> res(P.size());
    for (std::int64_t i = 0; i < r.V; ++i) {
      const float qi = r.q.empty() ? (i == d ? 1.0f : 0.0f) : r.q[std::size_t(j * r.V + i)];
      res[std::size_t(i)] = from_target ? P[std::size_t(i)] : std::max(P[std::size_t(i)] - qi, 0.0f);
    }
    out[std::size_t(j)] = std::int32_t(race_f32(res, r.R.data(), eps));
    break;
  }
  return out;
}

/// A random request: Gaussian logits (some masked), draft distributions near
/// the target's (a draft model's), drafts drawn from them; uniforms drawn, or
/// planted at the exact ratio and one or a few ulps around it; noise Exp(1)
/// with planted tiny draws.
Request random_request(std::mt19937_64& g, const NumericsContract& c) {
  std::uniform_real_distribution<double> U(0, 1);
  const std::int64_t V = std::vector<std::int64_t>{2, 3, 7, 64, 257, 1000}[g() % 6];
  const std::int64_t k = std::int64_t(g() % 5);
  Request r(V, k);
  const double scale = std::vector<double>{0.5, 2, 6}[g() % 3];
  r.T = std::vector<float>{0.05f, 0.3f, 0.7f, 1.0f, 1.5f}[g() % 5];
  std::normal_distribution<double> N(0, scale);
  for (auto& x : r.x) x = U(g) < 0.05 ? -kInf : float(N(g));
  for (std::int64_t j = 0; j <= k; ++j) r.logit(j, std::int64_t(g() % std::uint64_t(V))) = float(N(g));  // a finite id each row
  const bool stochastic = g() % 3 != 0;
  std::exponential_distribution<float> Exp(1.0f);
  for (std::int64_t j = 0; j < k; ++j) {
    std::vector<float> drafted(static_cast<std::size_t>(V));
    for (std::int64_t i = 0; i < V; ++i) drafted[std::size_t(i)] = r.logit(j, i) + float(N(g) * 0.3);
    const std::vector<float> Q = softmax_f32(drafted.data(), V, r.T);
    std::discrete_distribution<std::int32_t> pick(Q.begin(), Q.end());
    r.d[std::size_t(j)] = stochastic ? pick(g) : std::int32_t(g() % std::uint64_t(V));
    if (stochastic)
      for (std::int64_t i = 0; i < V; ++i) r.draft(j, i) = Q[std::size_t(i)];
    r.u[std::size_t(j)] = U(g);
  }
  for (auto& e : r.R) e = g() % 50 == 0 ? 1e-30f : Exp(g);
  for (auto& e : r.B) e = g() % 50 == 0 ? 1e-30f : Exp(g);
  // Plant uniforms at the exact ratio and a few ulps around it.
  const VerifyVerdict v = decide_verify(r.view(), c);
  for (std::size_t j = 0; j < v.ratio.size(); ++j)
    if (g() % 2 == 0 && std::isfinite(v.ratio[j])) {
      const double shift = std::vector<double>{0, 0x1p-24, -0x1p-24, 0x1p-22, -0x1p-22, 1e-6, -1e-6}[g() % 7];
      r.u[j] = std::clamp(v.ratio[j] * (1 + shift), 0.0, std::nextafter(1.0, 0.0));
    }
  return r;
}

TEST(VerifyBound, ProbabilitiesAreWithinTheirBoundsAndTheBoundIsTight) {
  std::mt19937_64 g(race::kCiSeed);
  const NumericsContract c = vllm_contract();
  std::size_t ids = 0, outside = 0;
  double worst = 0;
  for (int n = 0; n < 300; ++n) {
    const Request r = random_request(g, c);
    for (std::int64_t j = 0; j <= r.k; ++j) {
      const RowView row = r.view().target_row(j, r.R.data());
      const Probabilities P = probabilities(row, row_scale(row), c, {}, {}, 0);
      const std::vector<float> p32 = softmax_f32(r.x.data() + j * r.V, r.V, r.T);
      for (std::size_t i = 0; i < p32.size(); ++i) {
        ++ids;
        const double a = p32[i];
        if (a < P.lo[i] || a > P.hi[i]) {
          ++outside;
          ADD_FAILURE() << fmt::format("request {} row {} id {}: fp32 p {:.9g} outside [{:.9g}, {:.9g}] (exact {:.9g})", n,
                                       j, i, a, P.lo[i], P.hi[i], P.p[i]);
        }
        if (P.p[i] > 1e-30) worst = std::max(worst, std::abs(a / P.p[i] - 1) / std::max(P.hi[i] / P.p[i] - 1, 1 - P.lo[i] / P.p[i]));
      }
    }
  }
  std::printf("[tightness] verify: %zu fp32 probabilities, %zu outside their bounds, worst actual/bound = %.3f\n", ids, outside,
              worst);
  ::testing::Test::RecordProperty("tightness_verify_probabilities", fmt::format("{:.3f}", worst));
  EXPECT_EQ(outside, 0u);
  EXPECT_GT(worst, 0.05);  // a bound 20 times too wide would hide real errors
}

TEST(VerifyBound, TheEmulatedSamplersChainsAreAllExplainedAndADefectIsNot) {
  std::mt19937_64 g(race::kCiSeed + 1);
  const NumericsContract c = vllm_contract();
  std::size_t identical = 0, explained = 0, either = 0, caught = 0, rejected = 0;
  for (int n = 0; n < 400; ++n) {
    const Request r = random_request(g, c);
    const VerifyVerdict v = decide_verify(r.view(), c);
    ASSERT_NE(v.request_class, RowClass::invalid) << v.describe();
    either += std::size_t(std::count(v.acceptance.begin(), v.acceptance.end(), Acceptance::either));
    const std::vector<std::int32_t> out = verify_f32(r, 0.0f);
    const VerifyJudgement j = judge_verify(v, r.view(), out.data());
    EXPECT_FALSE(is_failure(j.outcome)) << "request " << n << ": " << j.why;
    identical += j.outcome == Outcome::identical;
    explained += j.outcome == Outcome::explained;
    if (v.accepted < r.k) {
      ++rejected;
      const std::vector<std::int32_t> bad = verify_f32(r, 0.0f, true);
      caught += is_failure(judge_verify(v, r.view(), bad.data()).outcome);
    }
  }
  std::printf("[verify] 400 requests: %zu identical, %zu explained, %zu acceptances either way; the recovered token "
              "raced on P instead of the residual: %zu of %zu rejections caught\n",
              identical, explained, either, caught, rejected);
  EXPECT_GT(either, 20u);    // the planted uniforms reach the ambiguity
  EXPECT_GT(explained, 0u);  // and fp32 uses it
  EXPECT_GT(caught, rejected / 8);  // caught wherever the two races differ (deterministic drafts: rarely)
}

// ---- the definition's losslessness ----

TEST(VerifyDefinition, TheFirstEmittedTokenHasTheTargetsLawWhateverTheDraft) {
  // The oracle's chain with d ~ Q, u ~ U[0, 1), R iid Exp(1), counted over n
  // requests against P by a chi-square test at a false-alarm rate of 1e-9
  // (fixed seed). Its power: the same count with the recovered token raced on
  // P rather than the residual (a sampler the field has shipped) must fail.
  const std::vector<double> P = {0.4, 0.25, 0.2, 0.1, 0.05}, Q = {0.1, 0.5, 0.1, 0.25, 0.05};
  Request r(5, 1);
  set_row(r, 0, P);
  set_row(r, 1, P);
  for (std::int64_t i = 0; i < 5; ++i) r.draft(0, i) = float(Q[std::size_t(i)]);
  std::mt19937_64 g(race::kCiSeed);
  std::uniform_real_distribution<double> U(0, 1);
  std::exponential_distribution<float> Exp(1.0f);
  std::discrete_distribution<std::int32_t> draft(Q.begin(), Q.end());
  const int n = 40000;
  std::vector<double> counts(5, 0.0), wrong(5, 0.0);
  const NumericsContract c = vllm_contract();
  // The exact target law of the logits as fp32 holds them.
  const RowView row0 = r.view().target_row(0, r.R.data());
  const Probabilities exact = probabilities(row0, row_scale(row0), c, {}, {}, 0);
  for (int s = 0; s < n; ++s) {
    r.d[0] = draft(g);
    r.u[0] = U(g);
    for (auto& e : r.R) e = Exp(g);
    const VerifyVerdict v = decide_verify(r.view(), c);
    counts[std::size_t(v.accepted == 0 ? v.token : r.d[0])] += 1;
    if (v.accepted == 0) {
      std::vector<float> p(exact.p.begin(), exact.p.end());
      wrong[std::size_t(race_f32(p, r.R.data(), 0.0f))] += 1;
    } else {
      wrong[std::size_t(r.d[0])] += 1;
    }
  }
  auto chi2 = [&](const std::vector<double>& c) {
    double x = 0;
    for (std::size_t i = 0; i < 5; ++i) x += std::pow(c[i] - n * exact.p[i], 2) / (n * exact.p[i]);
    return x;
  };
  const double critical = boost::math::quantile(boost::math::complement(boost::math::chi_squared(4), 1e-9));
  std::printf("[lossless] %d requests: chi2 = %.2f (the residual race), %.2f (raced on P); critical %.2f at 1e-9\n", n,
              chi2(counts), chi2(wrong), critical);
  EXPECT_LT(chi2(counts), critical);
  EXPECT_GT(chi2(wrong), critical);
}

}  // namespace
}  // namespace raceoracle::oracle
