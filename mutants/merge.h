#pragma once
/// The shards of one run (`check` or `mutants --shard I/N --json`) joined
/// into its unsharded report (properties/shard.h says how units are
/// numbered): every shard once, the same run's settings in each, every unit
/// in exactly one.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mutants/report.h"

namespace raceoracle::mutants {

struct MergedRun {
  nlohmann::json report;               ///< what the unsharded run's --json would hold
  std::vector<MutantReport> mutants;   ///< the mutant gate's, when the run had one
  int shards = 0;
  std::size_t units = 0;
  int failures = 0;  ///< failed laws, an agreement run with unexplained rows, surviving mutants
};

/// Throws std::invalid_argument naming the report and what is wrong with it
/// (not a shard report, another run's, a shard missing or given twice, a unit
/// held twice or by none).
MergedRun merge_shards(const std::vector<std::string>& paths);

}  // namespace raceoracle::mutants
