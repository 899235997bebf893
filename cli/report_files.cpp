#include "cli/report_files.h"

#include <nlohmann/json.hpp>

#include "cli/command_support.h"
#include "cli/html_report.h"
#include "cli/junit_report.h"

namespace raceoracle::cli {

void write_report_files(const ReportFiles& files, const std::string& command, const nlohmann::json& report,
                        const std::vector<std::string>& expect_killed_by) {
  if (!files.json.empty()) write_file(files.json, report.dump(2) + "\n");
  if (!files.junit.empty()) write_file(files.junit, junit_of_report(command, report, expect_killed_by));
  if (!files.html.empty()) write_file(files.html, html_of_report(command, report, expect_killed_by));
}

}  // namespace raceoracle::cli
