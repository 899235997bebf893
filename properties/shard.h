#pragma once
/// The units of `check` and `mutants`, sharded as io/shard.h says: (subject,
/// property, case chunk) for the properties, (mutant, property) for the
/// mutant gate, one per subject for the agreement run. docs/SCALE.md.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/shard.h"
#include "properties/run_settings.h"

namespace raceoracle::properties {

using io::Shard;        // io/shard.h
using io::parse_shard;

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
