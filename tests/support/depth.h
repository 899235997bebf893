#pragma once
/// How many inputs a test that runs one code path over many of them takes:
/// `full` in the plain run; under the sanitizer pass's shallow depth
/// (RACEORACLE_CASES set: the `shallow` test preset, CMakePresets.json)
/// `per_case` for each case that names, at most `full`. The paths are the
/// same; the plain run keeps the statistical weight.
#include <algorithm>
#include <cstdlib>

namespace raceoracle::test_support {

inline int depth(int full, int per_case) {
  const char* cases = std::getenv("RACEORACLE_CASES");
  return cases ? std::min(full, per_case * std::max(1, std::atoi(cases))) : full;
}

}  // namespace raceoracle::test_support
