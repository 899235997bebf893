// JUnit XML of the commands' JSON reports (io/junit.h): `check`, `mutants`
// and `merge` share one report schema; `verify` and `verify-step` judge a
// file. A testcase per (subject, law), per mutant, per agreement cell; a
// failure's text holds the counterexample and the replay line.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace raceoracle::cli {

/// The JUnit document of a check, mutants or merged report. A mutant that no
/// law killed fails, and so does one that a law in `expect_killed_by` did
/// not kill (`mutants --expect-killed-by`).
std::string junit_of_report(const std::string& command, const nlohmann::json& report,
                            const std::vector<std::string>& expect_killed_by = {});

/// The JUnit document of one judged file: a testcase named after the file,
/// failed with the report's failure lines when its verdict is FAIL.
std::string junit_of_file_verdict(const std::string& command, const std::string& file, bool ok,
                                  const std::string& summary, const std::vector<std::string>& failures, double seconds);

}  // namespace raceoracle::cli
