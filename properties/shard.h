#pragma once
/// Deep runs split the standard way: the work of `check` and `mutants` is a
/// list of units in one fixed order, (subject, property, case chunk) for the
/// properties, (mutant, property) for the mutant gate, one per subject for the
/// agreement run; shard I of N runs the units u with u % N == I. So N shards
/// together run exactly the unsharded work, whatever N, and `raceoracle merge`
/// joins their reports into the unsharded ones. docs/SCALE.md.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "properties/run_settings.h"

namespace raceoracle::properties {

struct Shard {
  int index = 0, count = 1;
  bool owns(std::size_t unit) const { return int(unit % std::size_t(count)) == index; }
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }
};
/// "I/N" with 0 <= I < N (0-based, as GTEST_SHARD_INDEX, Slurm array and
/// Kubernetes indexed-job indices are); throws std::invalid_argument naming
/// the text otherwise.
Shard parse_shard(const std::string& text);

/// Cases of one (subject, property) above `per_unit` are split into equal
/// chunks (none smaller than per_unit / 2): chunk 0 keeps the run's seed, so
/// an unsplit run is today's run; chunk k > 0 draws from a seed derived from
/// (seed, k). Only chunk 0 replays the regression corpus.
struct CaseChunk {
  int cases = 0;
  std::uint64_t seed = 0;
  int index = 0, of = 1;
  /// The whole run's settings for this chunk: its seed and cases; the corpus
  /// replayed and the coverage matrix met by chunk 0 alone.
  RunSettings settings(const RunSettings& whole) const;
};
std::vector<CaseChunk> case_chunks(int cases, std::uint64_t seed, int per_unit);
inline constexpr int kCasesPerUnit = 1000;

}  // namespace raceoracle::properties
