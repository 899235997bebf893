#pragma once
/// `raceoracle divergence`: how far fp32 legitimately diverges from exact
/// math, per temperature and per scaling order, on realistic rows.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/subjects.h"
#include "oracle/row.h"

namespace raceoracle::cli {

struct DivergenceOptions {
  std::vector<float> temperatures{0.01f, 0.1f, 0.3f, 0.7f, 1.0f, 2.0f};
  std::int64_t rows = 64;
  std::int64_t vocab = 163840;
  int batches = 1;
  oracle::Dtype dtype = oracle::Dtype::bf16;
  std::uint64_t seed = race::kCiSeed;
  std::string out_dir = "divergence";  ///< CSV, JSON and SVG go here
  SamplerOptions sampler;  ///< given: that sampler's tokens on the same batches, against fused-post and the oracle
};

/// An external sampler beside fused-post on the same inputs and noise, per temperature.
struct SamplerDivergence {
  float temperature = 0;
  std::int64_t rows = 0;
  std::int64_t differ = 0;      ///< rows where the sampler's token is not fused-post's
  std::int64_t explained = 0;   ///< of those, both tokens inside the row's ambiguity set
  std::int64_t unexplained = 0; ///< the sampler's token outside it (under its declared contract), or out of range
  double ambiguous_fraction = 0;  ///< rows with more than one legitimate id under the sampler's contract
};

struct DivergenceRow {
  float temperature = 0;
  std::string order;
  std::int64_t rows = 0;
  /// The keys that decide the argmax: each row's top 8 ids by exact key,
  /// their fp32 keys computed in the fused kernel's operation order (the
  /// row's real tile maxima, glibc expf) against float64.
  double max_actual = 0;
  double max_bound = 0;        ///< the largest certified bound among those keys
  double worst_ratio = 0;      ///< max actual / bound among those keys
  /// The real kernel's stage-1 partials (tile winners) against their bound.
  double kernel_stage1_ratio = 0;
  double median_full_bound = 0;  ///< the winner's full-key bound (two stages), median over rows
  double ambiguous_fraction = 0; ///< rows whose top-two gap lies inside the bound
  std::int64_t explained = 0, unexplained = 0;      ///< this order's fused kernel
  std::int64_t base_explained = 0, base_unexplained = 0;  ///< the baseline, judged under its contract
};

/// `sampler`, when given, is also run on every batch (filling `beside`).
std::vector<DivergenceRow> run_divergence(const DivergenceOptions& o, const fixtures::Subject* sampler = nullptr,
                                          std::vector<SamplerDivergence>* beside = nullptr);
int divergence(const DivergenceOptions& o);

}  // namespace raceoracle::cli
