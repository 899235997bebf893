// The gate's progress line (mutants/gate.h): the count done of those to run,
// the verdict with its killers, the mutant's time and the time left from the
// mean so far; nothing left to say after the last.
#include "mutants/gate.h"

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "subject/subject.h"
#include "tests/support/mutants_built.h"

namespace raceoracle::mutants {
namespace {

TEST(GateProgress, SaysTheCountTheVerdictAndTheTimeLeft) {
  RACEORACLE_SKIP_WITHOUT_MUTANTS();
  MutantReport r;
  r.mutant = &subject::subject_of(*kernels::find_kernel("fused-post~high_id_tie"));
  r.seconds = 2.0;
  PairOutcome kill;
  kill.law = "AgreesWithOracle";
  kill.kind = PairOutcome::Kind::killed;
  r.pairs.push_back(kill);
  EXPECT_EQ(progress_line(r, 3, 40, 6.0), "[3/40] fused-post~high_id_tie: Killed by AgreesWithOracle (2.0 s; 37 to go, about 74 s left)");
  EXPECT_EQ(progress_line(r, 2, 40, 60.0), "[2/40] fused-post~high_id_tie: Killed by AgreesWithOracle (2.0 s; 38 to go, about 19.0 min left)");
  EXPECT_EQ(progress_line(r, 40, 40, 80.0), "[40/40] fused-post~high_id_tie: Killed by AgreesWithOracle (2.0 s)");
  r.pairs[0].kind = PairOutcome::Kind::survived;
  EXPECT_EQ(progress_line(r, 40, 40, 80.0), "[40/40] fused-post~high_id_tie: Survived (2.0 s)");
}

}  // namespace
}  // namespace raceoracle::mutants
