#pragma once
/// The fp32 softmax a sampler computes, bounded: a weight w' = exp of the
/// scaled logit, a sum S' of the kept weights, a probability p' = w' / S'.
/// The building blocks the filters' boundary and the verify step share; the
/// derivation is oracle/ERROR_MODEL.md, "The filters' boundary" (weights,
/// sums) and "The verify step" (probabilities).
#include <cstdint>
#include <vector>

#include "oracle/error_model.h"
#include "oracle/row.h"

namespace raceoracle::oracle {

/// gamma_d = d u / (1 - d u): the relative error of a sum of non-negative
/// terms each on a path of at most d roundings (Higham, Lemma 3.1); +inf past d u = 1/2.
double sum_error(double depth);

/// An absolute error per weight, in units of w: a probability p' = w' / S'
/// may flush below fp32's normal range, 2^-126 S' with S' below 2 n.
inline double flush_per_weight(std::int64_t n) { return double(n) * 0x1p-124; }

/// The computed weight of logit `x` lies in [w lo - tau, w hi + tau], w = exp((x - M) / t):
/// lo = e^-d (1 - r_exp), hi = e^d (1 + r_exp), d = exponent_error(x) under `c`.
struct WeightFactors { double lo = 1, hi = 1; };
WeightFactors weight_factors(double x, const RowScale& s, const NumericsContract& c);

/// A row's probabilities over a set of ids, exact and as fp32 computes them.
struct Probabilities {
  std::vector<double> p;       ///< per id: w / S over the set (0 outside it), float64
  std::vector<double> lo, hi;  ///< per id: the interval the sampler's p' lies in
};

/// `kept` (per id, 1: in the set; empty: every finite id) is the exact set;
/// `boundary` (ascending) the ids fp32 may add to it or drop from it (their
/// p' may be 0 or up to their bound; the sum S' spans both). `sum_depth` as
/// in race::FilterSemantics (0: the set's size, any order).
Probabilities probabilities(const RowView& row, const RowScale& s, const NumericsContract& c,
                            const std::vector<std::uint8_t>& kept, const std::vector<std::int64_t>& boundary,
                            std::int32_t sum_depth);

}  // namespace raceoracle::oracle
