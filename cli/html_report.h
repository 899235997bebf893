// The commands' reports as one self-contained HTML page (io/html.h) a CI run
// publishes: built from the same JSON the commands write, so the page, the
// JSON and the JUnit XML (cli/junit_report.h) never disagree.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "io/html.h"
#include "io/table.h"


namespace raceoracle::cli {

/// The page of a check, mutants or merged report: the verdict and the run,
/// each (subject, law) with the input classes it met, every failure's
/// counterexample and replay command, the laws a sampler cannot serve, the
/// kill matrix (mutant x law) and the agreement run. A
/// mutant fails as in the JUnit report: killed by no law, or not by one in
/// `expect_killed_by`.
std::string html_of_report(const std::string& command, const nlohmann::json& report,
                           const std::vector<std::string>& expect_killed_by = {});

/// A divergence study's charts (its table, `analysis::divergence_columns`):
/// the fp32 key error against its certified bound per temperature, both
/// orders; the disagreement rate with its 95% interval.
struct DivergenceCharts {
  io::Chart error, rate;
};
DivergenceCharts divergence_charts(const io::Table& table, const std::string& keys);

/// The page of a divergence study (its table, `analysis::divergence_columns`,
/// a row per temperature and order, and the table's charts): the fp32 key
/// error against its certified bound and the disagreement rate with its
/// interval, as charts and tables. `heading` says what was run; `notes`
/// follow it (the noise report).
std::string html_of_divergence(const std::string& heading, const io::Table& table, const DivergenceCharts& charts,
                               const std::string& notes, bool passed);

/// The page of one file's verdict (`verify`, `verify-step`): what was read
/// (`heading`), the counts table, the failures the command printed, and
/// `notes` (deviations declared, the noise report).
std::string html_of_file_verdict(const std::string& command, const std::string& heading, const io::Table& counts,
                                 const std::vector<std::string>& failures, const std::vector<std::string>& notes,
                                 bool passed);

/// The page of two dumps compared (`divergence A B`): their table per
/// temperature (analysis::sampler_columns) and the rows no legitimate
/// divergence explains.
std::string html_of_comparison(const std::string& heading, const io::Table& table,
                               const std::vector<std::string>& unexplained, const std::string& notes, bool passed);

}  // namespace raceoracle::cli
