#pragma once
/// The mutant harness (SPEC §6): runs every property against a mutant, each
/// (mutant, property) pair in a child process so that a crash is recorded
/// apart from a kill and a hang becomes a timeout.
#include <functional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "properties/suite.h"

namespace raceoracle::mutants {

struct PairOutcome {
  enum class Kind { killed, survived, crashed, timed_out, not_applicable } kind = Kind::survived;
  std::string law;
  std::string counterexample;  ///< killed: the shrunk counterexample
  std::string replay;          ///< killed: the command that replays it
  std::string case_json;       ///< killed: the shrunk CaseSpec
  std::string detail;          ///< crashed: the signal; timed out: the limit
  double seconds = 0;
  /// The run settings the pair ran under, as its child reported them (JSON,
  /// properties/run_settings.h); a child that ran under others is a crash.
  std::string settings;
};
const char* to_string(PairOutcome::Kind k);

struct MutantReport {
  const subject::Subject* mutant = nullptr;  ///< a registered mutant, or an external sampler built broken
  std::vector<PairOutcome> pairs;  ///< one per property, in suite order
  double seconds = 0;

  std::vector<std::string> killers() const;  ///< properties that failed on it
  const PairOutcome* first_kill() const;     ///< the first property that failed, nullptr if none
  bool killed() const { return !killers().empty(); }
  bool crashed() const;
  bool timed_out() const;
  /// "Killed", "Survived", "RuntimeError" (crashed, never killed) or "Timeout".
  std::string status() const;
};

struct HarnessSettings {
  properties::RunSettings run;
  double timeout_s = 120;  ///< per (mutant, property) pair
  bool isolate = true;     ///< fork per pair; false runs in-process (debugging)
  /// When set, each forked child execs this executable (`self_exe __pair
  /// ...`, answered by pair_child_main) rather than running on in the forked
  /// image: a GPU runtime (CUDA, HIP) the parent has initialised is not
  /// usable in a forked child. Empty: fork only.
  std::string self_exe;
  /// A pair that survives runs again, its exec'd child under
  /// `compute-sanitizer --tool racecheck` (a GPU build): a shared-memory
  /// hazard it reports, where the law held, is a kill by that law (a race
  /// that did not change this run's tokens). A pair its law kills needs no
  /// second run, so only survivors pay the sanitizer's slowdown.
  bool racecheck = false;
};
/// The exit status compute-sanitizer gives a child it found a hazard in.
inline constexpr int kRacecheckExit = 86;

/// The exec'd child of one pair: argv = {exe, "__pair", mutant, property,
/// the run settings as JSON, fd}; it writes its verdict to fd as JSON.
std::vector<std::string> pair_child_args(const std::string& exe, const std::string& mutant,
                                         const std::string& property, const properties::RunSettings& run, int fd);
int pair_child_main(int argc, char** argv);

/// `progress` is told each finished pair. A registered mutant runs each pair
/// in a child (HarnessSettings::isolate); an external sampler already runs in
/// a process of its own, watched by its client, so its pairs run here.
/// `runs(i)`, when given, picks the properties (by index in the suite) this
/// shard runs; the report then holds only their pairs.
MutantReport run_mutant(const subject::Subject& m, const HarnessSettings& s,
                        const std::function<void(const PairOutcome&)>& progress = {},
                        const std::function<bool(std::size_t)>& runs = {});

}  // namespace raceoracle::mutants
