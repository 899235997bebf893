#pragma once
/// What the commands share: progress notes, report files, the mutant harness's settings.
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mutants/harness.h"
#include "mutants/report.h"
#include "properties/shard.h"
#include "properties/suite.h"

namespace raceoracle::cli {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// A progress line on stderr ("  .. text").
void note(const std::string& s);
/// Writes `text` to `path` and says so; throws std::runtime_error when it cannot.
void write_file(const std::string& path, const std::string& text);
/// The harness settings for a mutant gate: every pair in a child process that
/// execs this binary afresh (a GPU runtime does not survive fork).
mutants::HarnessSettings harness(const properties::RunSettings& rs, double timeout_s);

/// The properties a `--properties P..` list selects (empty: every one);
/// throws std::invalid_argument naming an unknown one.
std::function<bool(const properties::Property&)> property_selection(const std::vector<std::string>& names);

/// The mutant gate's share of a sharded run: unit base + k is (mutant, the
/// k-th property of `only`, in suite order; every property when `only` is
/// empty); `first_unit` counts the units before the gate. Mutants with no unit
/// in `shard` are not run; the JSON (mutants::pairs_json) numbers every pair.
/// (Properties outside `only` have no unit: the shards of a selection hold
/// exactly its units, which `merge` requires.)
struct GateRun {
  std::vector<mutants::MutantReport> reports;
  nlohmann::json json;
  std::size_t units = 0;  ///< every mutant's, run here or not
};
GateRun run_gate(const std::vector<const fixtures::Subject*>& mutants, const mutants::HarnessSettings& hs,
                 const properties::Shard& shard, std::size_t first_unit,
                 const std::function<void(const mutants::PairOutcome&)>& progress = {},
                 const std::vector<std::string>& only = {});

}  // namespace raceoracle::cli
