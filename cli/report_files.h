// Where a check, mutants or merged report is written: its JSON (the one
// schema), the JUnit XML CI systems read (cli/junit_report.h) and the HTML
// page a CI run publishes (cli/html_report.h), all from the one JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace raceoracle::cli {

/// An empty path: that form is not written.
struct ReportFiles {
  std::string json, junit, html;
};

/// Writes `report` in each form `files` names, saying so; a mutant fails
/// the JUnit and HTML forms when a law in `expect_killed_by` did not kill it.
void write_report_files(const ReportFiles& files, const std::string& command, const nlohmann::json& report,
                        const std::vector<std::string>& expect_killed_by = {});

}  // namespace raceoracle::cli
