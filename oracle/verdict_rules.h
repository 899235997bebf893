#pragma once
/// The rules that turn a row's keys into a verdict (SPEC §1, §3), shared by
/// the reference path (every id, reference.cpp) and the fast path (the ids
/// the fp32 screen keeps, oracle.cpp): one definition, two ways to feed it.
#include <cstdint>
#include <vector>

#include "oracle/oracle.h"

namespace raceoracle::oracle::rules {

/// The key an id ranks by: the exact key of SPEC §1 in float64; 0 for a
/// masked id; -1 (below every number) for 0/0, which has no value: eps = 0,
/// a zero draw and a numerator that underflows. Kernels rank a NaN key so.
double ranking_key(double x, float noise, const RowScale& s);

/// Row-wide bounds on every id's key factors, from the row's finite logit
/// range [min_x, M]: exponent_error is convex in x, so it peaks at an end;
/// the absolute term peaks at the smallest denominator, eps.
struct RowBounds {
  double up_max = 1;    ///< +inf where pre-scale overflows
  double down_min = 1;
  double abs_max = 0;
};
RowBounds row_bounds(double min_x, const RowScale& s, const NumericsContract& c);

/// A greedy row from its token (the lowest id at the max) and runner-up (the
/// lowest id of the best other value, -1 if none); keys are the ids' own
/// logits, so +0 and -0 at the max read as they are stored.
void greedy(Verdict& v, const RowView& row, std::int64_t token, std::int64_t runner_up);

/// A sampling row from the ids `ids` (ascending) and their ranking keys. The
/// verdict equals the one over every id as long as `ids` holds every id that
/// can win, come second or enter the ambiguity set.
void sampling(Verdict& v, const RowView& row, const RowScale& s, const NumericsContract& c, const RowBounds& b,
              const std::vector<std::int64_t>& ids, const std::vector<double>& keys);

}  // namespace raceoracle::oracle::rules
