#pragma once
/// The mutant harness's reports: the readable table, the kill matrix and the
/// mutation-testing JSON (the schema Stryker and Mull emit).
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

}  // namespace raceoracle::mutants
