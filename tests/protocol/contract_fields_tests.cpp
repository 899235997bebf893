// The contract overrides cross the command line, the replay command and the
// reports as contract fields: each term set survives the round trip exactly,
// an unset one stays unset, and a field that is no overridable term, or a
// malformed value, is refused naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "protocol/contract_fields.h"

namespace raceoracle::protocol {
namespace {

TEST(ContractOverrides, SurviveTheirFieldsRoundTripInEveryTerm) {
  std::mt19937_64 rng(race::kCiSeed);  // fixed: the same 2000 cases every run
  for (int n = 0; n < 2000; ++n) {
    ContractOverrides o;
    // Any double in [0, kMaxUlp], not only short decimals: the shortest form must read back exactly.
    auto ulp = [&] { return std::ldexp(double(rng() >> 11), -53) * kMaxUlp; };
    if (rng() % 2) o.scaling_order = rng() % 2 ? oracle::ScalingOrder::pre : oracle::ScalingOrder::post;
    if (rng() % 2) o.exp_ulp = ulp();
    if (rng() % 2) o.div_ulp = ulp();
    if (rng() % 2) o.key_bf16 = rng() % 2 == 0;
    if (rng() % 3 == 0) {  // the log domain, which states no rescale or normalisation
      o.key_domain = race::KeyDomain::log;
    } else {
      if (rng() % 2) o.key_domain = race::KeyDomain::ratio;
      if (rng() % 2) o.normalises = rng() % 2 == 0;
      if (rng() % 2) o.stages = 1 + int(rng() % 2);
      else if (rng() % 2) o.rescales = int(rng() % 100);
    }
    ASSERT_EQ(overrides_from_fields(to_fields(o)), o) << override_flags(o);
  }
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
  one = {};
  one.key_domain = race::KeyDomain::log;
  one.key_bf16 = true;
  EXPECT_EQ(override_flags(one), " --key-domain log --key-dtype bf16");
  EXPECT_EQ(overrides_from_fields(to_fields(one)), one);
  one = {};
  one.rescales = 41;
  one.normalises = true;
  EXPECT_EQ(overrides_from_fields(to_fields(one)), one);
  const oracle::NumericsContract applied = apply(one, default_sampler_contract());
  EXPECT_EQ(applied.rescales, 41);
  EXPECT_TRUE(applied.normalises);
}

/// `read(f)` refuses `f` with a message that holds `named`.
template <class Read>
void expect_refused_by(Read read, const Fields& f, const std::string& named) {
  try {
    read(f);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
}
void expect_refused(const Fields& f, const std::string& named) {
  expect_refused_by([](const Fields& g) { overrides_from_fields(g); }, f, named);
}
void expect_contract_refused(const Fields& f, const std::string& named) {
  expect_refused_by([](const Fields& g) { parse_contract(g); }, f, named);
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

// A sampler's conventions (docs/CONVENTIONS.md) read from its fields, written
// back only where they differ from the definition, each named as a deviation.
TEST(Conventions, ReadWrittenAndNamedAsDeviations) {
  const oracle::NumericsContract c = parse_contract(
      {{"greedy_rule", "below"}, {"greedy_below", "1e-05"}, {"eps_rule", "none"}, {"nan_logits", "out_of_contract"}});
  EXPECT_EQ(c.conventions.greedy, race::GreedyRule::below);
  EXPECT_EQ(c.conventions.greedy_below, 1e-5f);
  EXPECT_EQ(c.conventions.eps, race::EpsRule::none);
  EXPECT_FALSE(c.conventions.nan_is_masked);
  EXPECT_EQ(parse_contract(contract_fields(c)).conventions, c.conventions);  // the round trip
  const auto d = deviations(c.conventions);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].declared, "T < 1e-05");
  EXPECT_NE(d[1].consequence.find("zero noise draw"), std::string::npos) << d[1].describe();
  EXPECT_NE(d[2].consequence.find("NanIsolation does not apply"), std::string::npos) << d[2].describe();
  EXPECT_NE(describe_contract(c).find("greedy rule T < 1e-05"), std::string::npos) << describe_contract(c);
  // The definition's conventions: no field written, nothing to report.
  const Fields plain = contract_fields(default_sampler_contract());
  EXPECT_EQ(plain.count("greedy_rule") + plain.count("eps_rule") + plain.count("nan_logits"), 0u);
  EXPECT_TRUE(deviations({}).empty());
  const oracle::NumericsContract zero = parse_contract({{"greedy_rule", "zero"}, {"eps_rule", "fixed"}, {"eps_fixed", "0.5"}});
  EXPECT_EQ(zero.conventions.greedy, race::GreedyRule::zero);
  EXPECT_EQ(zero.conventions.eps_fixed, 0.5f);
  EXPECT_EQ(deviations(zero.conventions)[0].declared, "T == 0");
}

TEST(Conventions, MalformedOnesAreRefusedNamingTheField) {
  expect_contract_refused({{"greedy_rule", "T==0"}}, "'greedy_rule' = 'T==0': must be one of 'definition', 'zero', 'below'");
  expect_contract_refused({{"greedy_rule", "below"}}, "needs 'greedy_below'");
  expect_contract_refused({{"greedy_below", "0.1"}}, "'greedy_rule' is not 'below'");
  expect_contract_refused({{"eps_rule", "fixed"}}, "needs 'eps_fixed'");
  expect_contract_refused({{"eps_rule", "fixed"}, {"eps_fixed", "-1"}}, "'eps_fixed' = '-1': must be >= 0");
  expect_contract_refused({{"eps_fixed", "1"}}, "'eps_rule' is not 'fixed'");
  expect_contract_refused({{"nan_logits", "ignored"}}, "'nan_logits' = 'ignored'");
  expect_contract_refused({{"greedy_rule", "below"}, {"greedy_below", "nan"}}, "'greedy_below'");
}

TEST(ArithmeticTerms, ReadAndWrittenBackAsDeclared) {
  // Each term of oracle/ERROR_MODEL.md "The field's arithmetic" alone and together, through the fields and back.
  const Fields declared[] = {
      {{"scale_op", "divide"}},
      {{"key_op", "reciprocal"}},
      {{"key_dtype", "bf16"}},
      {{"rescales", "1"}, {"online_ids", "4096"}, {"normalise", "sum"}, {"scaling_order", "pre"}},
      {{"rescales", "7"}},
      {{"key_domain", "log"}, {"log_ulp", "2"}, {"stages", "1"}},
      {{"key_domain", "log"}, {"key_dtype", "bf16"}, {"stages", "1"}, {"scale_op", "divide"}},
  };
  for (const Fields& f : declared) {
    const Fields written = contract_fields(parse_contract(f));
    for (const auto& [key, value] : f) {
      const std::string expect = key == "rescales" && value == "1" ? "2" : value;  // one rescale is written as stages 2
      const std::string field = key == "rescales" && value == "1" ? "stages" : key;
      ASSERT_TRUE(written.count(field)) << key;
      EXPECT_EQ(written.at(field), expect) << key;
    }
    EXPECT_EQ(contract_fields(parse_contract(written)), written);  // a fixed point
  }
  const oracle::NumericsContract online = parse_contract(declared[3]);
  EXPECT_EQ(online.rescales, 1);
  EXPECT_EQ(online.online_ids, 4096);
  EXPECT_TRUE(online.normalises);
  EXPECT_NE(describe_contract(online).find("online max (a rescale per 4096 ids)"), std::string::npos) << describe_contract(online);
  const oracle::NumericsContract log = parse_contract(declared[5]);
  EXPECT_EQ(log.domain, race::KeyDomain::log);
  EXPECT_EQ(log.log_ulp, 2);
  EXPECT_NE(describe_contract(log).find("log-domain race (logf 2 ulp)"), std::string::npos) << describe_contract(log);
}

TEST(ContractFields, EveryFieldWrittenIsKnownAndAMisspeltOneIsRefused) {
  // Every field contract_fields can write is a contract field of the schema (one list of what is read).
  oracle::NumericsContract c = parse_contract({{"greedy_rule", "below"}, {"greedy_below", "1"}, {"eps_rule", "fixed"},
                                               {"eps_fixed", "1"}, {"nan_logits", "out_of_contract"}, {"scale_op", "divide"},
                                               {"key_op", "reciprocal"}, {"key_dtype", "bf16"}, {"rescales", "3"},
                                               {"online_ids", "8"}, {"normalise", "sum"}, {"tie_rule", "highest_id"},
                                               {"fully_masked", "any"}, {"batch_invariance", "exact"}});
  EXPECT_EQ(c.conventions.ties, race::TieRule::highest_id);
  EXPECT_EQ(c.conventions.fully_masked, race::FullyMasked::any);
  EXPECT_EQ(c.batch_invariance, race::BatchInvariance::exact);
  c.noise_ulp = 1;
  Fields all = contract_fields(c);
  all.merge(contract_fields(parse_contract({{"key_domain", "log"}})));
  all["noise_ulp"] = "1";
  EXPECT_NO_THROW(refuse_unknown_fields(all, {}));
  EXPECT_NO_THROW(refuse_unknown_fields({{"name", "x"}}, {"name"}));
  expect_refused_by([](const Fields& g) { refuse_unknown_fields(g, {"type", "name"}); }, {{"greedy_rul", "zero"}},
                    "'greedy_rul' is no field raceoracle reads");
}

TEST(FilterSemantics, RoundTripAndRefusalsNameTheField) {
  for (int ties = 0; ties < 2; ++ties)
    for (int mass = 0; mass < 2; ++mass)
      for (int order = 0; order < 2; ++order)
        for (int depth : {0, 1, 18, 163839}) {
          oracle::NumericsContract c = default_sampler_contract();
          c.filters = {true, race::TopKTies(ties), race::TopPMass(mass), race::TieOrder(order), depth};
          const Fields f = contract_fields(c);
          EXPECT_EQ(f.at("filters"), "top_k,top_p,min_p");
          EXPECT_EQ(parse_contract(f).filters, c.filters) << f.at("top_k_ties") << " " << f.at("top_p_mass");
          EXPECT_NO_THROW(refuse_unknown_fields(f, {}));
        }
  EXPECT_FALSE(contract_fields(default_sampler_contract()).count("filters"));  // no filters: no field
  EXPECT_FALSE(parse_contract({}).filters.applied);
  expect_refused_by([](const Fields& g) { parse_contract(g); }, {{"top_p_mass", "joint"}},
                    "'top_p_mass' is given but 'filters' is not 'top_k,top_p,min_p'");
  expect_refused_by([](const Fields& g) { parse_contract(g); }, {{"filters", "top_k,top_p,min_p"}, {"top_p_mass", "both"}},
                    "'top_p_mass' = 'both': must be one of 'top_k_first', 'joint'");
  expect_refused_by([](const Fields& g) { parse_contract(g); }, {{"filters", "top_k"}}, "'filters' = 'top_k'");
  // The other semantics are what a report tries when a token is unexplained.
  oracle::NumericsContract c = default_sampler_contract();
  c.filters.applied = true;
  std::string labels;
  for (const TermWidening& w : missing_terms(c)) labels += w.label + "; ";
  EXPECT_NE(labels.find("top_p_mass = joint"), std::string::npos) << labels;
  EXPECT_NE(labels.find("top_k_ties = exactly_k"), std::string::npos) << labels;
  EXPECT_NE(labels.find("filter_ties = any"), std::string::npos) << labels;
}

TEST(ArithmeticTerms, MalformedOrContradictoryOnesAreRefusedNamingTheField) {
  expect_contract_refused({{"rescales", "-1"}}, "'rescales' = '-1': must be a whole number");
  expect_contract_refused({{"rescales", "1.5"}}, "'rescales' = '1.5'");
  expect_contract_refused({{"online_ids", "lots"}}, "'online_ids' = 'lots' is not a decimal number");
  expect_contract_refused({{"rescales", "2"}, {"stages", "2"}}, "'stages' and 'rescales' are both given");
  expect_contract_refused({{"normalise", "max"}}, "'normalise' = 'max': must be one of 'none', 'sum'");
  expect_contract_refused({{"key_domain", "gumbel"}}, "'key_domain' = 'gumbel': must be one of 'ratio', 'log'");
  expect_contract_refused({{"log_ulp", "-2"}}, "'log_ulp' = '-2'");
  // A log-domain race rescales nothing: the default rescale is dropped, a stated one refused.
  EXPECT_EQ(parse_contract({{"key_domain", "log"}}).rescales, 0);
  expect_contract_refused({{"key_domain", "log"}, {"stages", "2"}}, "cannot be given with it");
  expect_contract_refused({{"key_domain", "log"}, {"stages", "1"}, {"key_op", "reciprocal"}}, "cannot be given with it");
}

}  // namespace
}  // namespace raceoracle::protocol
