#pragma once
/// The mutant gate of `check` and `mutants`: every selected law against every
/// mutant through the harness, numbered as units so that N shards run exactly
/// the unsharded gate (properties/shard.h).
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mutants/harness.h"
#include "properties/shard.h"

namespace raceoracle::mutants {

/// The harness settings for a gate: every pair in a child process that execs
/// this binary afresh (a GPU runtime does not survive fork).
HarnessSettings exec_harness(const properties::RunSettings& rs, double timeout_s, bool racecheck = false);

/// The gate's share of a sharded run: unit base + k is (mutant, the k-th law
/// of `only`, in suite order; every law when `only` is empty); `first_unit`
/// counts the units before the gate. Mutants with no unit in `shard` are not
/// run; the JSON (pairs_json) numbers every pair it ran. (Laws outside `only`
/// have no unit: the shards of a selection hold exactly its units, which
/// `merge` requires.)
struct GateRun {
  std::vector<MutantReport> reports;
  nlohmann::json json;
  std::size_t units = 0;  ///< every mutant's, run here or not
  /// Cut short by an interrupt (io/interrupt.h): the mutants after the last
  /// report were not run (and the one running then is left out).
  bool partial = false;
};
struct GateProgress {
  std::function<void(const std::string&)> mutant;  ///< told a mutant's name before it runs
  std::function<void(const PairOutcome&)> pair;    ///< told each finished pair
  /// Told each mutant's report as it ends: the mutants done and to run (this shard's).
  std::function<void(const MutantReport&, std::size_t done, std::size_t total)> ended;
};
/// The line the commands print as a mutant ends: "[3/40] fused-post~high_id_tie: Killed by
/// AgreesWithOracle (2.1 s; 37 to go, about 1.3 min left)", the time left from the mean so far.
std::string progress_line(const MutantReport& r, std::size_t done, std::size_t total, double elapsed_s);
GateRun run_gate(const std::vector<const subject::Subject*>& mutants, const HarnessSettings& hs,
                 const properties::Shard& shard, std::size_t first_unit, const std::vector<std::string>& only = {},
                 const GateProgress& progress = {});

}  // namespace raceoracle::mutants
