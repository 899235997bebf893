// The oracle under a sampler's declared conventions (race/definition.h,
// docs/CONVENTIONS.md): its greedy rule and the eps it adds decide the row as
// the sampler computes it; the definition's own rows are unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "oracle/oracle.h"

namespace raceoracle::oracle {
namespace {

NumericsContract with(race::Conventions k) {
  NumericsContract c;
  c.conventions = k;
  return c;
}
Verdict run(const std::vector<float>& x, const std::vector<float>& e, float T, const NumericsContract& c) {
  RowView r{x.data(), Dtype::f32, e.data(), std::int64_t(x.size()), T};
  return decide(r, c);
}

// x = [0, -1e-5], E = [1e9, 1e-9]: a greedy row picks 0; sampled at t = 1e-5,
// key1 = e^-1 / 1e-9 >> key0 = 1e-9, so 1.
const std::vector<float> kX{0.0f, -1e-5f}, kE{1e9f, 1e-9f};

TEST(Conventions, GreedyByTEqualsZero) {
  const NumericsContract zero = with({.greedy = race::GreedyRule::zero});
  EXPECT_EQ(run(kX, kE, 0.0f, zero).row_class, RowClass::greedy);
  EXPECT_EQ(run(kX, kE, -0.0f, zero).row_class, RowClass::greedy);  // -0 == 0
  // 0 < T <= greedy_eps and T < 0: sampled at t = 1e-5.
  for (const float T : {1e-10f, -1.0f}) {
    const Verdict v = run(kX, kE, T, zero);
    EXPECT_EQ(v.row_class, RowClass::sampling) << T;
    EXPECT_EQ(v.token, 1) << T;
    EXPECT_EQ(run(kX, kE, T, {}).token, 0) << "the definition: greedy at " << T;
  }
}

TEST(Conventions, GreedyByTBelowAConstant) {
  const NumericsContract below = with({.greedy = race::GreedyRule::below, .greedy_below = 1e-5f});
  EXPECT_EQ(run(kX, kE, std::nextafter(1e-5f, 0.0f), below).token, 0);  // greedy
  EXPECT_EQ(run(kX, kE, 1e-10f, below).token, 0);
  EXPECT_EQ(run(kX, kE, -1.0f, below).token, 0);
  const Verdict at = run(kX, kE, 1e-5f, below);  // T = c: sampled
  EXPECT_EQ(at.row_class, RowClass::sampling);
  EXPECT_EQ(at.token, 1);
  // The definition samples T just above greedy_eps; T < c makes it greedy.
  EXPECT_EQ(run(kX, kE, std::nextafter(1e-10f, 1.0f), {}).token, 1);
  EXPECT_EQ(run(kX, kE, std::nextafter(1e-10f, 1.0f), below).token, 0);
}

// x = [0, 1], T = 1, E = [1e-12, 1e-11]. With eps = 1e-10: key0 = 1 / 1.01e-10
// = 9.9e9 < key1 = e / 1.1e-10 = 2.5e10, so 1. Without eps: key0 = 1e12 >
// key1 = 2.7e11, so 0. With eps 1 of the sampler's own: key0 = 1 < key1 = e, so 1.
TEST(Conventions, TheEpsTheSamplerAdds) {
  const std::vector<float> x{0.0f, 1.0f}, e{1e-12f, 1e-11f};
  EXPECT_EQ(run(x, e, 1.0f, {}).token, 1);
  EXPECT_EQ(run(x, e, 1.0f, with({.eps = race::EpsRule::none})).token, 0);
  const Verdict fixed = run(x, e, 1.0f, with({.eps = race::EpsRule::fixed, .eps_fixed = 1.0f}));
  EXPECT_EQ(fixed.token, 1);
}

TEST(Conventions, WithoutEpsAZeroDrawIsOutOfContract) {
  // p / E with E = 0 is infinite (0 / 0 at a masked id): the sampler's noise must exclude 0.
  const race::Conventions none{.eps = race::EpsRule::none};
  const Verdict v = run({0.0f, 5.0f, 0.0f}, {1.0f, 1.0f, 0.0f}, 1.0f, with(none));
  EXPECT_EQ(v.row_class, RowClass::invalid);
  EXPECT_EQ(v.reason, InvalidReason::zero_noise_without_eps);
  EXPECT_EQ(v.reason_id, 2);
  EXPECT_EQ(run({0.0f, 5.0f, 0.0f}, {1.0f, 1.0f, 0.0f}, 1.0f, {}).token, 2) << "the definition: E + eps";
  EXPECT_EQ(run({0.0f, 5.0f, 0.0f}, {1.0f, 1.0f, 0.0f}, 0.0f, with(none)).token, 1) << "a greedy row reads no noise";
}

TEST(Conventions, TiesToTheHighestId) {
  const NumericsContract high = with({.ties = race::TieRule::highest_id});
  // A greedy row with its maximum at ids 1 and 3: the definition gives 1, the rule 3; the runner-up maps back too.
  const std::vector<float> x{0.0f, 2.0f, 1.5f, 2.0f, -1.0f}, e(5, 1.0f);
  EXPECT_EQ(run(x, e, 0.0f, {}).token, 1);
  const Verdict g = run(x, e, 0.0f, high);
  EXPECT_EQ(g.row_class, RowClass::greedy);
  EXPECT_EQ(g.token, 3);
  EXPECT_EQ(g.runner_up, 1);
  EXPECT_EQ(g.ambiguous, std::vector<std::int64_t>{3});
  // A sampling row with an exact tie at the max (equal logits, equal noise): only 3 may win, not 1.
  const Verdict s = run(x, e, 1.0f, high);
  EXPECT_EQ(s.row_class, RowClass::sampling);
  EXPECT_EQ(s.token, 3);
  EXPECT_EQ(s.ambiguous, std::vector<std::int64_t>{3});
  EXPECT_EQ(run(x, e, 1.0f, {}).ambiguous, std::vector<std::int64_t>{1});
  // No tie: the same verdict either way; a fully masked row still gives 0; an invalid row names its first bad id.
  const std::vector<float> y{0.0f, 3.0f, 1.0f};
  EXPECT_EQ(run(y, {1.0f, 1.0f, 1.0f}, 1.0f, high).token, run(y, {1.0f, 1.0f, 1.0f}, 1.0f, {}).token);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(run({-inf, -inf, -inf}, {1.0f, 1.0f, 1.0f}, 1.0f, high).token, 0);
  const Verdict bad = run(y, {1.0f, -1.0f, -1.0f}, 1.0f, high);
  EXPECT_EQ(bad.row_class, RowClass::invalid);
  EXPECT_EQ(bad.reason_id, 1);
}

TEST(Conventions, AFullyMaskedRowMayGiveAnyId) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x{-inf, -inf, -inf}, e{1.0f, 1.0f, 1.0f};
  const Verdict def = run(x, e, 1.0f, {}), any = run(x, e, 1.0f, with({.fully_masked = race::FullyMasked::any}));
  EXPECT_EQ(any.row_class, RowClass::fully_masked);
  EXPECT_EQ(judge(def, 2, 3), Outcome::unexplained);
  EXPECT_EQ(judge(any, 2, 3), Outcome::explained);
  EXPECT_EQ(judge(any, 0, 3), Outcome::identical);
  EXPECT_EQ(judge(any, 3, 3), Outcome::out_of_range);
  // A row with an unmasked id is judged as before.
  const Verdict one = run({-inf, 0.0f, -inf}, e, 1.0f, with({.fully_masked = race::FullyMasked::any}));
  EXPECT_EQ(judge(one, 2, 3), Outcome::unexplained);
}

TEST(Conventions, TheDefinitionsOwnAreUnchanged) {
  EXPECT_EQ(NumericsContract{}.conventions, race::Conventions{});
  for (const float T : {0.0f, 1e-10f, -1.0f, 1e-5f, 0.7f})
    EXPECT_EQ(run(kX, kE, T, {}).token, run(kX, kE, T, with({})).token);
}

}  // namespace
}  // namespace raceoracle::oracle
