#pragma once
/// The divergence study's tallies before they become its tables: what one
/// shard of a run (`divergence --shard I/N --state FILE`) writes, what
/// `raceoracle merge` joins, and what an unsharded run finishes at once. The
/// tallies keep every row's winner bound and top-two gaps (the rate's window
/// and the median read them all), so N shards merged give the unsharded
/// tables. The file is safetensors: those lists as F64 tensors, the rest as
/// JSON in the metadata (docs/SCALE.md, "divergence").
#include <string>
#include <vector>

#include "analysis/divergence.h"
#include "analysis/divergence_parts.h"
#include "analysis/noise_report.h"
#include "protocol/safetensors.h"

namespace raceoracle::analysis {

/// One temperature's tallies.
struct TemperatureState {
  float temperature = 0;
  /// post, pre: their counts as rows are judged (the kernels' and the
  /// baseline's outcomes, the stage-1 ratio) and the rate's contract.
  DivergenceRow rows[2];
  OrderTally tally[2];
  SamplerDivergence beside;  ///< when a sampler ran
  std::int64_t sampler_ambiguous = 0;
};

struct DivergenceState {
  DivergenceOptions options;  ///< the run's, its shard included
  std::string backend;        ///< the kernels' backend (shards of a run share it)
  std::string sampler;        ///< the sampler's name when one ran beside fused-post
  std::vector<TemperatureState> temperatures;
  NoiseTally noise;
  /// Without kernels (rate_study.h): the logit rows reused, the rows of each
  /// temperature checked over every id, and the other rows drawn in full.
  std::int64_t pool_rows = 0, checked_rows = 0, fallback_rows = 0;
};

/// The tallies of o.shard's part of the run: run_divergence's work (divergence.h).
/// Its units: (temperature, batch) with kernels, a temperature's rows without.
DivergenceState divergence_state(const DivergenceOptions& o, const subject::Subject* sampler = nullptr);

/// The run's tables from its tallies.
DivergenceResult finish(const DivergenceState& s);

/// `o` as named fields, and back (std::invalid_argument naming a missing or
/// malformed field): what a shard's file says of its run.
nlohmann::json to_json(const DivergenceOptions& o);
DivergenceOptions divergence_options_from_json(const nlohmann::json& j);

/// A shard's file, written whole or not at all; read back with every field checked.
void write_state(const std::string& path, const DivergenceState& s);
DivergenceState read_state(const std::string& path);
/// The same from a document in memory (the fuzzer's way in).
DivergenceState parse_state(const protocol::Safetensors& doc);
/// Whether a file is a shard's state (its metadata says so): how `merge` tells them from check's reports.
bool is_state_file(const std::string& path);

/// The shards of one run joined: every shard of I/N exactly once, the same
/// options but the shard, the same backend and sampler (std::invalid_argument
/// naming the file that differs, or the shard missing or repeated).
DivergenceState merge_states(const std::vector<std::string>& paths);

}  // namespace raceoracle::analysis
