// The mutant harness on its own: a pair's child that gives no verdict is a
// crash, never a kill; a child receives every run setting its parent holds;
// no child outlives the harness.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/registry.h"
#include "mutants/harness.h"
#include "tests/support/mutants_built.h"

namespace raceoracle::mutants {
namespace {
// A pair whose child gives no verdict (here: its exec fails; on a GPU: a
// runtime unusable after fork) is a crash, never a kill.
TEST(MutantHarness, AChildWithoutAVerdictIsACrashNeverAKill) {
  RACEORACLE_SKIP_WITHOUT_MUTANTS();
  mutants::HarnessSettings s;
  s.run.cases = 5;
  s.timeout_s = 60;
  s.self_exe = "/nonexistent/raceoracle";
  const mutants::MutantReport r = mutants::run_mutant(subject::subject_of(*kernels::find_kernel("fused-post~result_clamp")), s);
  EXPECT_FALSE(r.killed());
  EXPECT_TRUE(r.crashed());
  EXPECT_EQ(r.status(), "RuntimeError");
}

// Every field differs from its default: a field the child did not receive
// (it once got seed, cases, corpus and reproduce as positional arguments, and
// matrix and shrink_seconds reverted to defaults) fails the comparison.
TEST(MutantHarness, AChildReceivesEveryRunSetting) {
  properties::RunSettings run;
  run.seed = 18446744073709551615ull;  // above 2^53: a JSON number would lose it
  run.cases = 7;
  run.reproduce = "BchdRGFt \"quoted\" \\ and\nnewline";
  run.corpus_dir = "/tmp/a corpus";
  run.matrix = false;
  run.shrink_seconds = 0.25;
  ASSERT_NE(run, properties::RunSettings{});
  const std::vector<std::string> args = pair_child_args("/bin/raceoracle", "fused-post~no_m_safe", "AgreesWithOracle", run, 9);
  ASSERT_EQ(args.size(), 6u);
  EXPECT_EQ(args[1], "__pair");
  EXPECT_EQ(properties::run_settings_from_json(args[4]), run);
}

}  // namespace
}  // namespace raceoracle::mutants
