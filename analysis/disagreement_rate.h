#pragma once
/// How often two samplers under one contract may disagree: the expected
/// fraction of rows whose top-two race keys lie within the contract's
/// certified bound, estimated with a 95% interval from each row's top-two
/// gap (far too rare to count at production contracts). The estimator, its
/// assumptions and its validation: docs/DIVERGENCE.md, "The rate".
#include <cstdint>
#include <vector>

namespace raceoracle::analysis {

/// One sampling row: the relative gap of its top two exact keys,
/// g = (k1 - k2) / k1 in [0, 1], and the gap below which the contract lets
/// the runner-up win, c = 1 - lo(k1) / hi(k2) (the row may disagree iff g <= c).
struct RowGap {
  double gap = 1;
  double threshold = 0;
};

struct RateEstimate {
  std::int64_t rows = 0;      ///< every row judged (greedy, forced, masked rows may never disagree)
  std::int64_t in_window = 0; ///< rows with gap <= window
  double window = 0;          ///< h: the gap window the density is read over
  double rate = 0, lo = 0, hi = 0;  ///< estimate and its 95% interval, a fraction of `rows`
  double mean_threshold = 0;  ///< mean c over the rows the estimate weighs
  /// The density's flatness on [0, h]: the two-sided binomial p-value of the
  /// window's split into [0, h/2] and (h/2, h] (small: the window is too wide).
  double flatness_p = 1;
  bool contains(double rate_counted) const { return rate_counted >= lo && rate_counted <= hi; }
  /// A count of `k` such rows among `rows` agrees with the estimate when its
  /// own exact 95% interval (counted_interval) meets [lo, hi]: a handful of
  /// counted rows says little, and only a count far off the estimate disagrees.
  bool agrees_with_count(std::int64_t k) const;
};

inline constexpr double kDefaultWindow = 0.02;

/// `rows` counts every row; `gaps` holds the sampling rows' gaps. The window
/// grows to 8x the median threshold when the contract is that coarse.
RateEstimate estimate_rate(const std::vector<RowGap>& gaps, std::int64_t rows, double window = kDefaultWindow);

/// The exact 95% interval (Garwood) of a Poisson mean after observing k.
struct Interval { double lo = 0, hi = 0; };
Interval poisson_interval(std::int64_t k, double confidence = 0.95);
/// The 95% interval of the mean of a weighted Poisson sum, sum_i w_i X_i
/// with X_i Poisson, from what was observed: `sum` of the weights of the
/// events, `squares` the sum of their squares, `largest` the largest weight
/// (Fay and Feuer's gamma interval, Statistics in Medicine 16, 1997). With
/// equal weights w it is w times Garwood's; with unequal ones it is wider,
/// as the sum's spread is. No event: [0, 3.69 x largest].
Interval weighted_poisson_interval(double sum, double squares, double largest, double confidence = 0.95);
/// The exact 95% interval of a rate counted as k rows among n.
Interval counted_interval(std::int64_t k, std::int64_t n);

}  // namespace raceoracle::analysis
