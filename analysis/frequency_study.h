#pragma once
/// The frequency law run on a sampler that draws its own randomness
/// (docs/SAMPLER_PROTOCOL.md, `randomness = own`): the batch it is judged on
/// and the run, with its exact laws (same seed, same tokens). The law
/// itself is analysis/frequency.h; analysis/FREQUENCY.md says why.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/frequency.h"
#include "kernels/host_api.h"
#include "subject/batch.h"

namespace raceoracle::analysis {

struct FrequencyStudy {
  std::int64_t rows = 8;
  std::int64_t vocab = 163840;
  oracle::Dtype dtype = oracle::Dtype::bf16;
  std::uint64_t seed = race::kCiSeed;
  bool filters = false;  ///< rows carry top-k / top-p / min-p (a sampler that applies them)
  FrequencySettings law;
};

/// The rows (deterministic in the seed), by position modulo 8: LLM-like at
/// T = 1, 0.7; greedy (T = 0); a planted far tail (8 head ids, every odd id
/// 14, 16, 18 or 20 units below the max: 0.8% of the mass at V = 163840,
/// what a noise floor starves); 10% of ids masked at T = 1.5; T = 0.3; row 0
/// again (its own seed: rows sharing noise show); T = 1 with plateaus of
/// four tied ids.
subject::Batch frequency_batch(const FrequencyStudy& s);

/// n more tokens for every row of the batch, each row's RNG seeded by seeds[row].
using Drawer = std::function<kernels::Status(const subject::Batch&, const std::vector<std::uint64_t>& seeds, std::int64_t n,
                                             std::vector<std::int64_t>& tokens)>;

struct FrequencyRun {
  FrequencyReport report;
  std::string error;        ///< the sampler broke down or raised: no verdict
  std::string determinism;  ///< a same-seed request that gave other tokens, described ("" when none did)
  double seconds = 0;       ///< the whole run
  double sampler_seconds = 0;  ///< of which in the sampler
  bool passed() const { return error.empty() && determinism.empty() && report.passed; }
};

/// Runs the law on `s`'s batch, judged under `contract`; each request's
/// seeds are fresh (derived from the study's seed, the row and the
/// request), and the first request is sent twice: its tokens must repeat.
FrequencyRun run_frequency(const FrequencyStudy& s, const oracle::NumericsContract& contract, const Drawer& draw);

}  // namespace raceoracle::analysis
