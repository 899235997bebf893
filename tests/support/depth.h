#pragma once
/// The cases a run asks for (RACEORACLE_CASES; the sanitizer pass sets it
/// through the `shallow` test preset, CMakePresets.json), and how many inputs
/// a test that runs one code path over many of them takes at that depth.
#include <algorithm>
#include <cstdlib>
#include <optional>

namespace raceoracle::test_support {

/// RACEORACLE_CASES (at least 1), or nothing when it is not set.
inline std::optional<int> requested_cases() {
  const char* cases = std::getenv("RACEORACLE_CASES");
  if (!cases) return std::nullopt;
  return std::max(1, std::atoi(cases));
}

/// `full` in the plain run; with RACEORACLE_CASES set, `per_case` for each
/// case it names, at most `full`. The paths are the same; the plain run keeps
/// the statistical weight.
inline int depth(int full, int per_case) {
  const std::optional<int> cases = requested_cases();
  return cases ? std::min(full, per_case * *cases) : full;
}

}  // namespace raceoracle::test_support
