#pragma once
/// The parts of the divergence study that its two ways of running share
/// (rows decided over whole batches the kernels run on, divergence.cpp; rows
/// decided from the ids that can matter, rate_study.cpp): where logit rows
/// come from, the rate's contract, and what is added up per temperature and
/// scaling order, with one way to turn it into a row of the tables.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/baseline_emulation.h"
#include "analysis/disagreement_rate.h"
#include "analysis/divergence.h"
#include "fixtures/llm_like.h"
#include "oracle/oracle.h"
#include "subject/batch.h"

namespace raceoracle::analysis {

/// A user's logits (`--logits FILE`), rows reused in turn.
struct LogitsDump {
  oracle::Dtype dtype = oracle::Dtype::f32;
  std::int64_t rows = 0, vocab = 0;
  std::vector<float> logits;  ///< widened exactly
};
LogitsDump read_logits(const std::string& path);

/// The study's synthetic rows: N(0, sigma^2) when o.normal_sigma > 0, else
/// LLM-like rows centred at 8 with sigma 2.5, so |x| is as large as real
/// logits are (the error of x - m grows with |x|).
fixtures::LlmLike logit_distribution(const DivergenceOptions& o);
/// Synthetic row `row` of that distribution, rounded to the dtype and widened
/// exactly; deterministic in (o.seed, row).
std::vector<float> drawn_logit_row(const DivergenceOptions& o, std::int64_t row);

/// The contract the rate is estimated under: the kernel's, with the ulps asked for.
oracle::NumericsContract rate_contract(const DivergenceOptions& o, oracle::NumericsContract c);

/// Key-error statistics over some keys, mergeable across rows.
struct KeyErrors {
  std::int64_t keys = 0, off_max = 0;
  double squares = 0, off_max_squares = 0, max_actual = 0, max_bound = 0, worst_ratio = 0;
  /// One deciding id's key: its fp32 key emulated in the fused kernel's
  /// order (kernels/key_arithmetic.h) against float64 and its certified bound.
  void add(float x, float e, float eps, float T, float tile_max, const oracle::RowScale& s,
           const oracle::NumericsContract& c);
  void merge(const KeyErrors& o);
};

/// fused-post and fused-pre on one row, emulated (key_emulation.h): each
/// one's token (its largest fp32 key over its ambiguity set: no other id can
/// hold it) and the width of top-two gaps at which they rank the exact winner
/// and runner-up differently, |max(D_post, 0) - max(D_pre, 0)|, where order o
/// picks the runner-up iff the gap is below D_o = 1 - (K_o(w) / k_w) / (K_o(r) / k_r).
struct EmulatedPair {
  std::int64_t post = -1, pre = -1;
  bool has_runner_up = false;
  double below_post = 0;  ///< max(D_post, 0), what another order's width is measured from
  RowGap apart;  ///< the row's top-two gap, and that width
};
/// `tile_max` holds the fused kernel's tile maxima of the row (tiles of `block_v`).
EmulatedPair emulate_pair(const oracle::Verdict& post, const oracle::Verdict& pre, const oracle::RowView& row,
                          const oracle::RowScale& s, const std::vector<float>& tile_max, int block_v);

/// How the baseline's race launch walks a row of `dtype` logits whose
/// logits and noise start `logit_offset` and `noise_offset` elements into
/// their buffers: device buffers start on 256 bytes, so its loads are 16-byte
/// vectors when both offsets are multiples of 16 bytes.
BaselineLaunch baseline_launch(oracle::Dtype dtype, std::int64_t logit_offset, std::int64_t noise_offset);
/// Row r of `b` as uploaded.
BaselineLaunch baseline_launch(const subject::Batch& b, std::int64_t r);

/// The single-pass baseline beside fused-post on one row (`pair` from
/// emulate_pair), emulated (baseline_emulation.h): the width
/// |max(D_post, 0) - max(D_base, 0)| (its tokens are counted on the kernel's,
/// or without kernels on the emulation's).
struct EmulatedBaseline {
  bool has_runner_up = false;
  RowGap apart;
};
EmulatedBaseline emulate_baseline(const EmulatedPair& pair, const oracle::Verdict& post, const oracle::RowView& row,
                                  const BaselineRace& race);

/// Of a row's (exact key, id) pairs, the ids the key-error columns cover:
/// keys at least o.competitive x the largest, or the o.top_k largest.
std::vector<std::int64_t> deciding_ids(std::vector<std::pair<double, std::int64_t>> keys, const DivergenceOptions& o);

/// One temperature and order's rows.
struct OrderTally {
  std::int64_t rows = 0, ambiguous = 0;
  std::vector<double> full_bounds;  ///< each row's winner bound (rho)
  std::vector<RowGap> gaps;         ///< each sampling row's top-two gap and tolerated gap, under the rate's contract
  KeyErrors keys;
  std::vector<RowGap> apart;        ///< fused-pre's tally: each row's gap against EmulatedPair::apart's width
  std::int64_t apart_counted = 0;   ///< fused-pre's tally: rows where it picked another id than fused-post
  /// fused-pre's tally, when the kernels ran: the single-pass baseline beside
  /// fused-post, as `apart` and `apart_counted` are for fused-pre, over `base_rows` rows.
  std::vector<RowGap> base_apart;
  std::int64_t base_rows = 0, base_apart_counted = 0;
  /// A row: `v` under the kernel's contract, `rate_v` under the rate's
  /// (`rc`); `row` and `s` say where its ids' logits and noise are.
  void add(const oracle::Verdict& v, const oracle::Verdict& rate_v, const oracle::RowView& row,
           const oracle::RowScale& s, const oracle::NumericsContract& rc);
  /// fused-pre's tally: a row's pair of orders, and whether their tokens differ.
  void add_apart(const EmulatedPair& e, bool tokens_differ);
  /// fused-pre's tally: a row's baseline beside fused-post, and whether their tokens differ.
  void add_base_apart(const EmulatedBaseline& e, bool tokens_differ);
  void merge(OrderTally&& o);
  /// The row of the tables: counts, the median winner bound, the key errors and the rate estimate.
  void finish(DivergenceRow& d, double window) const;
};

}  // namespace raceoracle::analysis
