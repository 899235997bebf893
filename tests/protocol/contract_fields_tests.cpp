// The contract overrides cross the command line, the replay command and the
// reports as contract fields: each term set survives the round trip exactly,
// an unset one stays unset, and a field that is no overridable term, or a
// malformed value, is refused naming it.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <string>

#include "protocol/contract_fields.h"

namespace raceoracle::protocol {
namespace {

TEST(ContractOverrides, SurviveTheirFieldsRoundTripInEveryTerm) {
  const auto result = rc::check("round trip", [] {
    ContractOverrides o;
    if (*rc::gen::arbitrary<bool>())
      o.scaling_order = *rc::gen::element(oracle::ScalingOrder::post, oracle::ScalingOrder::pre);
    // Any double in [0, kMaxUlp], not only short decimals: the shortest form must read back exactly.
    const auto ulp = rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                                  [](std::uint64_t b) { return std::ldexp(double(b >> 11), -53) * kMaxUlp; });
    if (*rc::gen::arbitrary<bool>()) o.exp_ulp = *ulp;
    if (*rc::gen::arbitrary<bool>()) o.div_ulp = *ulp;
    if (*rc::gen::arbitrary<bool>()) o.stages = *rc::gen::element(1, 2);
    RC_ASSERT(overrides_from_fields(to_fields(o)) == o);
  });
  EXPECT_TRUE(result);
  // Each term alone, so that one the list forgot shows by its name.
  ContractOverrides one;
  EXPECT_TRUE(to_fields(one).empty());
  one.div_ulp = 0.1;
  EXPECT_EQ(to_fields(one), (Fields{{"div_ulp", "0.1"}}));
  EXPECT_EQ(overrides_from_fields(to_fields(one)), one);
  one = {};
  one.stages = 1;
  EXPECT_EQ(overrides_from_fields(to_fields(one)), one);
  one = {};
  one.scaling_order = oracle::ScalingOrder::pre;
  EXPECT_EQ(override_flags(one), " --scaling-order pre");
}

void expect_refused(const Fields& f, const std::string& named) {
  try {
    overrides_from_fields(f);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
}

TEST(ContractOverrides, RefuseFieldsThatAreNoOverridableTerm) {
  expect_refused({{"noise_ulp", "1"}}, "'noise_ulp' is not a contract term the command line overrides");
  expect_refused({{"exp_ulp", "x"}}, "'exp_ulp' = 'x' is not a decimal number");
  expect_refused({{"div_ulp", "-1"}}, "'div_ulp' = '-1': ulps must be in");
  expect_refused({{"stages", "3"}}, "'stages' = '3'");
  expect_refused({{"scaling_order", "sideways"}}, "'scaling_order' = 'sideways'");
}

TEST(ContractOverrides, ApplyOnlyTheTermsSet) {
  oracle::NumericsContract c = default_sampler_contract();
  c.order = oracle::ScalingOrder::pre;
  ContractOverrides o;
  EXPECT_EQ(describe_contract(apply(o, c)), describe_contract(c));
  o.exp_ulp = 7;
  const oracle::NumericsContract a = apply(o, c);
  EXPECT_EQ(a.exp_ulp, 7);
  EXPECT_EQ(a.rescale_ulp, 7);  // an exp override is the rescale's too
  EXPECT_EQ(a.order, oracle::ScalingOrder::pre);
  EXPECT_EQ(a.div_ulp, c.div_ulp);
}

}  // namespace
}  // namespace raceoracle::protocol
