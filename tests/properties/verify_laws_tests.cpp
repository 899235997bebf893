// The verify step's laws (properties/verify_laws.h): a case survives its JSON
// round trip and bad ones are refused naming why; requests_of picks requests;
// every law holds on both verify kernels; each named verify mutant is killed,
// its counterexample narrowed to one request that fails again when replayed
// (and passes on the real kernel); a mutant survives a law that cannot see it.
#include <gtest/gtest.h>

#include <utility>

#include "kernels/device_memory.h"
#include "properties/verify_laws.h"

namespace raceoracle::properties {
namespace {

class VerifyLaws : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernels::device_count() == 0) GTEST_SKIP() << "no " << kernels::backend_name() << " device found";
  }
};

RunSettings settings(int cases) {
  RunSettings s;
  s.cases = cases;
  s.corpus_dir.clear();
  return s;
}

TEST(VerifyCase, SurvivesItsJsonRoundTripAndBadOnesAreRefused) {
  VerifyCase c;
  c.seed = 18446744073709551615ull;
  c.shape = {7, 5, 2049, race::Dtype::bf16};
  c.request = 6;
  EXPECT_EQ(verify_case_from_json(to_json(c)), c);
  EXPECT_EQ(verify_case_from_json(to_json(VerifyCase{})), VerifyCase{});
  auto refused = [](const std::string& text, const std::string& why) {
    try {
      verify_case_from_json(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused("{", "JSON");
  refused(R"({"seed":"1","requests":2,"drafts":1,"vocab":5,"dtype":"f32"})", "'request'");
  refused(R"({"seed":"1","requests":2,"drafts":1,"vocab":5,"dtype":"f16","request":-1})", "f16");
  refused(R"({"seed":"1","requests":2,"drafts":1,"vocab":5,"dtype":"f32","request":2})", "out of range");
  refused(R"({"seed":1,"requests":2,"drafts":1,"vocab":5,"dtype":"f32","request":-1})", "wrong type");
}

TEST(VerifyCase, NamesAndMutantsAreResolved) {
  EXPECT_EQ(find_verify_subject("verify-fused").defect, kernels::Defect::none);
  EXPECT_THROW(find_verify_subject("verify-fused~no_m_safe"), std::invalid_argument);
  EXPECT_THROW(find_verify_subject("verify-nothing"), std::invalid_argument);
  EXPECT_TRUE(is_verify_name("verify-fused~bonus_after_reject"));
  EXPECT_FALSE(is_verify_name("fused-post"));
  EXPECT_THROW(select_verify_laws({"AgreesWithOracle"}), std::invalid_argument);  // a sampling law
  EXPECT_EQ(select_verify_laws({}).size(), verify_laws().size());
  if (!kernels::kMutantsBuilt) {  // a build without them lists none and refuses a known one by name
    EXPECT_TRUE(verify_mutants({}).empty());
    EXPECT_THROW(find_verify_subject("verify-probs~accept_strict"), std::invalid_argument);
    return;
  }
  EXPECT_EQ(find_verify_subject("verify-probs~accept_strict").name(), "verify-probs~accept_strict");
  EXPECT_EQ(verify_mutants({}).size(), kernels::verify_kernels().size() * std::size(kernels::kVerifyOnly));
  EXPECT_EQ(verify_mutants({"verify-fused"}).size(), std::size(kernels::kVerifyOnly));
}

TEST(VerifyCase, RequestsOfPicksAndReordersRequests) {
  const race::NumericsContract c = kernels::find_verify_kernel("verify-fused")->contract();
  VerifyCase vc;
  vc.seed = 3;
  vc.shape = {4, 2, 37, race::Dtype::f32};
  const subject::VerifyBatch b = materialize(vc, c);
  vc.request = 2;
  const subject::VerifyBatch one = materialize(vc, c);
  ASSERT_EQ(one.requests, 1);
  EXPECT_EQ(one.target_f32, std::vector<float>(b.target_f32.begin() + 2 * 3 * 37, b.target_f32.begin() + 3 * 3 * 37));
  EXPECT_EQ(one.draft_ids, std::vector<std::int32_t>(b.draft_ids.begin() + 4, b.draft_ids.begin() + 6));
  EXPECT_EQ(one.uniforms, std::vector<double>(b.uniforms.begin() + 4, b.uniforms.begin() + 6));
  EXPECT_EQ(one.temperatures[0], b.temperatures[2]);
  EXPECT_EQ(one.recovery_noise, std::vector<float>(b.recovery_noise.begin() + 2 * 37, b.recovery_noise.begin() + 3 * 37));
  const subject::VerifyBatch twice = subject::requests_of(b, {1, 1});
  EXPECT_EQ(twice.requests, 2);
  EXPECT_EQ(twice.bonus_noise, [&] {
    std::vector<float> v(b.bonus_noise.begin() + 37, b.bonus_noise.begin() + 74);
    v.insert(v.end(), v.begin(), v.end());
    return v;
  }());
  EXPECT_THROW(subject::requests_of(b, {4}), std::out_of_range);
}

TEST_F(VerifyLaws, EveryLawHoldsOnBothKernels) {
  for (const auto& k : kernels::verify_kernels())
    for (const VerifyLaw& law : verify_laws()) {
      const LawResult r = run_verify_law(law, {&k, kernels::Defect::none}, settings(12));
      EXPECT_TRUE(r.ok()) << law.name << " on " << k.name << ": " << r.counterexample;
      EXPECT_EQ(r.cases, 12);
    }
}

// Each named verify mutant is killed by the oracle's law; the laws that must
// kill each are its gate, Mutant.verify-* (mutants/CMakeLists.txt).
TEST_F(VerifyLaws, EachNamedMutantIsKilledAndItsCounterexampleReplays) {
  const VerifyLaw& law = *select_verify_laws({"VerifyAgreesWithOracle"}).front();
  for (const VerifySubject& m : verify_mutants({})) {
    const LawResult r = run_verify_law(law, m, settings(100));
    ASSERT_EQ(r.verdict, LawResult::Verdict::failed) << m.name() << " survived " << r.cases << " cases";
    const VerifyCase c = verify_case_from_json(r.case_json);
    EXPECT_TRUE(c.shape.requests == 1 || c.request >= 0) << m.name() << ": not narrowed to one request: " << r.case_json;
    EXPECT_NE(r.counterexample.find(describe(c)), std::string::npos) << r.counterexample;
    EXPECT_FALSE(run_verify_case(law, m, c).empty()) << m.name() << ": " << r.case_json;
    EXPECT_TRUE(run_verify_case(law, {m.kernel, kernels::Defect::none}, c).empty()) << m.name() << ": " << r.case_json;
  }
}

TEST_F(VerifyLaws, AMutantSurvivesALawThatCannotSeeIt) {
  // Drawing the recovered token from the target instead of the residual
  // never emits a bonus after a rejection, nor breaks the greedy chain.
  for (const auto& k : kernels::verify_kernels()) {
    const VerifyMutantRun run = run_verify_mutant({&k, kernels::Defect::recover_from_target},
                                                  select_verify_laws({"BonusOnlyAfterFullAcceptance",
                                                                      "GreedyVerifyIsTheArgmaxChain"}),
                                                  settings(20));
    EXPECT_TRUE(run.killers().empty()) << k.name;
  }
}

/// A verify step outside the process, as the laws see one (protocol's
/// ExternalSampler is the real one): here a verify kernel behind the
/// interface, or one that breaks down on every request.
class StepBehindTheInterface final : public subject::ExternalVerifyStep {
 public:
  StepBehindTheInterface(const kernels::VerifyKernel& k, kernels::Defect d, bool breaks_down)
      : kernel_(k), defect_(d), breaks_down_(breaks_down) {}
  const std::string& name() const override { return name_; }
  race::NumericsContract contract() const override { return kernel_.contract(); }
  race::VerifyRules verify_rules() const override { return {}; }
  kernels::Status run_verify(const subject::VerifyBatch& b, std::vector<std::int32_t>& ids) const override {
    ++runs;
    if (breaks_down_) {
      breakdown_ = "the sampler crashed: killed by signal 6";
      return kernels::Status::error(breakdown_);
    }
    ids = subject::run_verify_kernel(kernel_, b, defect_);
    return {};
  }
  std::string take_breakdown() const override { return std::exchange(breakdown_, {}); }
  std::string replay_args() const override { return "--sampler 'python3 step.py'"; }
  mutable int runs = 0;

 private:
  const kernels::VerifyKernel& kernel_;
  kernels::Defect defect_;
  bool breaks_down_;
  std::string name_ = "step-behind-the-interface";
  mutable std::string breakdown_;
};

TEST_F(VerifyLaws, AStepOutsideTheProcessIsJudgedAsAKernelIs) {
  const kernels::VerifyKernel& k = kernels::verify_kernels().front();
  const StepBehindTheInterface real(k, kernels::Defect::none, false);
  const VerifySubject s{nullptr, kernels::Defect::none, &real};
  EXPECT_EQ(s.name(), "step-behind-the-interface");
  EXPECT_EQ(s.replay_args(false), "--sampler 'python3 step.py'");
  for (const VerifyLaw& law : verify_laws()) {
    const LawResult r = run_verify_law(law, s, settings(12));
    EXPECT_TRUE(r.ok()) << law.name << ": " << r.counterexample;
  }
  const StepBehindTheInterface strict(k, kernels::Defect::accept_strict, false);
  const LawResult r = run_verify_law(*select_verify_laws({"VerifyAgreesWithOracle"}).front(),
                                     {nullptr, kernels::Defect::none, &strict}, settings(100));
  EXPECT_EQ(r.verdict, LawResult::Verdict::failed);
  EXPECT_NE(r.counterexample.find("on step-behind-the-interface"), std::string::npos) << r.counterexample;
}

TEST_F(VerifyLaws, AStepThatBreaksDownEndsItsLawAsAnErrorWithoutShrinking) {
  const StepBehindTheInterface broken(kernels::verify_kernels().front(), kernels::Defect::none, true);
  const LawResult r = run_verify_law(*select_verify_laws({"VerifyAgreesWithOracle"}).front(),
                                     {nullptr, kernels::Defect::none, &broken}, settings(100));
  EXPECT_EQ(r.verdict, LawResult::Verdict::error);
  EXPECT_NE(r.counterexample.find("killed by signal 6"), std::string::npos) << r.counterexample;
  EXPECT_EQ(broken.runs, 1);  // not asked again: no shrink step, no further case
}

}  // namespace
}  // namespace raceoracle::properties
