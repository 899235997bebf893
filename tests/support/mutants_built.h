#pragma once
/// Skips the rest of a test that runs a named mutant, in a build without them
/// (RACEORACLE_MUTANTS=OFF: the sanitizer build, kernels/defect.h). What ran
/// before it still counts; the plain build runs the whole test.
#include <gtest/gtest.h>

#include "kernels/defect.h"

#define RACEORACLE_SKIP_WITHOUT_MUTANTS()                                                                     \
  if (!::raceoracle::kernels::kMutantsBuilt)                                                                 \
  GTEST_SKIP() << "this build has no named mutants (RACEORACLE_MUTANTS=OFF): the rest of this test runs one; " \
                  "the plain build runs it"
