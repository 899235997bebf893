#pragma once
/// The mutant harness's reports: the readable table, the kill matrix and the
/// mutation-testing JSON (the schema Stryker and Mull emit).
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "mutants/harness.h"

namespace raceoracle::mutants {

/// The readable table: one line per mutant (status, killers, time).
std::string table(const std::vector<MutantReport>& r);
/// The kill matrix (mutant x property) as Markdown.
std::string kill_matrix_markdown(const std::vector<MutantReport>& r);
/// The mutation-testing report JSON (the schema Stryker and Mull emit).
std::string mutation_report_json(const std::vector<MutantReport>& r);
double mutation_score(const std::vector<MutantReport>& r);  ///< killed / all, in percent

/// Every pair of every report, as the JSON of `check --json` and `mutants
/// --json`; `unit(m, i)` numbers pair i of report m for sharded runs.
nlohmann::json pairs_json(const std::vector<MutantReport>& r);
/// The reports back from pairs_json (registered mutants only: each is looked
/// up by name); throws std::invalid_argument on an unknown mutant or kind.
std::vector<MutantReport> reports_from_json(const nlohmann::json& j);

}  // namespace raceoracle::mutants
