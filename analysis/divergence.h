#pragma once
/// The divergence study (docs/DIVERGENCE.md): how far fp32 legitimately
/// diverges from exact math, per temperature and per scaling order, and how
/// often two samplers under one contract may therefore disagree. It runs the
/// kernels (and a sampler, when given) on batches it draws, so it sits over
/// the fixtures; `raceoracle divergence` prints its result.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/disagreement_rate.h"
#include "analysis/noise_report.h"
#include "subject/subject.h"
#include "io/shard.h"
#include "io/table.h"
#include "oracle/row.h"

namespace raceoracle::analysis {

struct DivergenceOptions {
  std::vector<float> temperatures{0.01f, 0.1f, 0.3f, 0.7f, 1.0f, 2.0f};
  std::int64_t rows = 64;
  std::int64_t vocab = 163840;
  int batches = 1;
  oracle::Dtype dtype = oracle::Dtype::bf16;
  std::uint64_t seed = race::kCiSeed;
  /// Where rows come from: a safetensors file with `logits` [R, V] (rows
  /// reused with fresh noise), else N(0, normal_sigma^2) when > 0, else the
  /// LLM-like rows.
  std::string logits_file;
  float normal_sigma = 0;
  float normal_centre = 0;  ///< N(normal_centre, normal_sigma^2): far from 0, pre-scale's x / t loses bits
  /// The key-error columns: ids whose exact key is at least this fraction of
  /// the winner's (the ids that can still win), or the top_k ids when top_k > 0.
  double competitive = 0.5;
  int top_k = 0;
  /// The disagreement rate is estimated under each order's fused contract, or
  /// under these ulps when given (a coarse exp validates the estimator).
  std::optional<double> exp_ulp, div_ulp;
  double window = kDefaultWindow;
  /// false: the oracle and the emulated keys only, no kernel runs (the rate
  /// over many rows on the cpu backend, where the emulated kernels are slow):
  /// rate_study.h, each row's noise drawn only where it can matter.
  bool kernels = true;
  /// Without kernels: how many logit rows are drawn (or read from the file)
  /// once, each reused in turn with fresh noise; never more than the rows.
  std::int64_t logit_rows = 256;
  /// This process's part of the run (divergence_state.h): with kernels the
  /// (temperature, batch) units, without them each temperature's rows.
  io::Shard shard;
};

/// An external sampler (or a second dump) beside fused-post (or the first
/// dump) on the same inputs and noise, per temperature.
struct SamplerDivergence {
  float temperature = 0;
  std::int64_t rows = 0;
  std::int64_t differ = 0;      ///< rows with different tokens
  std::int64_t explained = 0;   ///< of those, both tokens inside their rows' ambiguity sets
  std::int64_t unexplained = 0; ///< rows where either token lies outside its row's set (each under its own contract) or out of range
  double ambiguous_fraction = 0;  ///< rows with more than one legitimate id under the sampler's contract
  /// The first unexplained rows, in words: the row, each token, which is outside its row's set.
  std::vector<std::string> unexplained_rows;
};

struct DivergenceRow {
  float temperature = 0;
  race::ScalingOrder order = race::ScalingOrder::post;
  oracle::NumericsContract rate_contract;  ///< the contract the rate is estimated under
  std::int64_t rows = 0;
  /// The keys that can decide the argmax (DivergenceOptions::competitive),
  /// their fp32 keys computed in the fused kernel's operation order (the
  /// row's real tile maxima, glibc expf) against float64.
  std::int64_t keys = 0;
  double max_actual = 0;
  double rms_actual = 0;
  std::int64_t off_max_keys = 0;  ///< of those, ids whose logit is not their tile's max (x - m_t != 0)
  double rms_off_max = 0;         ///< the rms error over those: where the scaling order shows
  double max_bound = 0;        ///< the largest certified bound among those keys
  double worst_ratio = 0;      ///< max actual / bound among those keys
  /// The real kernel's stage-1 partials (tile winners) against their bound.
  double kernel_stage1_ratio = 0;
  double median_full_bound = 0;  ///< the winner's full-key bound (two stages), median over rows
  double ambiguous_fraction = 0; ///< rows with more than one legitimate id: counted under the rate's contract
  RateEstimate rate;             ///< the expected fraction of such rows, with its interval
  /// fused-pre's row: how often it picks another id than fused-post on the
  /// same inputs, predicted from their emulated keys (each row's top-two gap
  /// against the gap below which the two orders' fp32 keys rank the pair
  /// differently), and counted: the emulated tokens, or the kernels' when they ran.
  bool apart_measured = false;
  RateEstimate apart;
  std::int64_t apart_counted = 0;
  /// fused-pre's row, when the kernels ran: the single-pass baseline beside
  /// fused-post, predicted from its emulated keys (baseline_emulation.h) and
  /// counted on the kernels' tokens, as `apart` is for fused-pre.
  bool base_apart_measured = false;
  RateEstimate base_apart;
  std::int64_t base_apart_counted = 0;
  bool kernels_ran = false;
  std::int64_t explained = 0, unexplained = 0;      ///< this order's fused kernel
  std::int64_t base_explained = 0, base_unexplained = 0;  ///< the baseline, judged under its contract
  /// Rows no legitimate fp32 divergence explains, or a key outside its bound.
  std::int64_t failures() const {
    return unexplained + base_unexplained + (worst_ratio > 1.0) + (kernel_stage1_ratio > 1.0);
  }
};

struct DivergenceResult {
  std::vector<DivergenceRow> rows;  ///< per temperature, post then pre
  std::vector<SamplerDivergence> beside;  ///< the sampler's table, when one ran
  NoiseReport noise;
  std::string method;  ///< how rows and noise were drawn, when not simply batch by batch: one readable line
  std::int64_t failures() const;  ///< the rows' failures and the sampler's unexplained rows
};

/// What the key-error columns cover: "keys >= 0.5 x the winner key", "top-8 keys of each row".
std::string keys_label(const DivergenceOptions& o);
/// `sampler`, when given, is also run on every batch, beside fused-post.
DivergenceResult run_divergence(const DivergenceOptions& o, const subject::Subject* sampler = nullptr);
/// Two dumps of the same logits, noise and temperatures: their tokens per temperature.
DivergenceResult compare_dumps(const std::string& a, const std::string& b);

/// Every column of divergence.csv and divergence.json, and of sampler.csv and
/// sampler.json, once: the text tables, CSV and JSON render from these.
const std::vector<io::Column<DivergenceRow>>& divergence_columns();
const std::vector<io::Column<SamplerDivergence>>& sampler_columns();

}  // namespace raceoracle::analysis
