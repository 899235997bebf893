// Reading the commands' JSON reports (check, mutants, merge, the verify
// kernels' check and gate) for the forms made from them (JUnit, HTML): the
// fields both read, read one way.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace raceoracle::cli::report_json {

/// The field as text: "" when absent or null, a string as it is, any other value as JSON writes it.
std::string text(const nlohmann::json& j, const char* key);
/// An array field as texts (absent: none).
std::vector<std::string> texts(const nlohmann::json& j, const char* key);
/// A law's unit as reports name it: "AgreesWithOracle", or "AgreesWithOracle [2/3]" when split into chunks.
std::string law_unit(const nlohmann::json& property);
/// A mutant's killers (`killed_by`).
std::vector<std::string> killers(const nlohmann::json& mutant);
/// A (mutant, law) pair's outcome (`outcome`: killed, survived, crashed, timed out, n/a).
std::string outcome(const nlohmann::json& pair);
/// The laws of `expected` that are not among `killers` (`mutants --expect-killed-by`).
std::vector<std::string> missing_killers(const std::vector<std::string>& killers, const std::vector<std::string>& expected);

}  // namespace raceoracle::cli::report_json
