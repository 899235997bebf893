#pragma once
/// How one law is run: seed, case count, replay, corpus, coverage matrix and
/// shrink budget. One struct from the command line to the mutant harness's
/// child process and the shard reports: it crosses each boundary as JSON,
/// written and read field by field from one list (run_settings.cpp), never
/// as positional arguments.
#include <cstdint>
#include <string>

#include "race/definition.h"

namespace raceoracle::properties {

/// The regression corpus of this checkout (properties/corpus).
std::string default_corpus_dir();

struct RunSettings {
  std::uint64_t seed = race::kCiSeed;
  int cases = 100;
  std::string reproduce;  ///< a RapidCheck reproduce string: replay that counterexample only
  /// Saved counterexamples replayed before the random search; empty: none.
  std::string corpus_dir = default_corpus_dir();
  /// The subject's own corpus (an external sampler's failures, `check
  /// --corpus`), replayed after the shared one; empty: none.
  std::string subject_corpus_dir;
  /// Run the coverage-matrix cases and require the law's cells (a run split
  /// into chunks does so in its first chunk only).
  bool matrix = true;
  /// Seconds RapidCheck may spend shrinking a failure before the smallest
  /// failing case found so far is reported as it is (not minimal, and said so).
  double shrink_seconds = 60;

  bool operator==(const RunSettings&) const = default;
};

/// Every field, named: a JSON object (the seed as a decimal string, since a
/// JSON reader may keep only 53 bits of a number).
std::string to_json(const RunSettings& s);
/// The inverse of to_json: every field present, of its type, and no other;
/// std::invalid_argument naming the field otherwise.
RunSettings run_settings_from_json(const std::string& text);

}  // namespace raceoracle::properties
