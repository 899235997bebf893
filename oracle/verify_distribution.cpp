#include "oracle/verify_distribution.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "oracle/error_model.h"
#include "race/definition.h"

namespace raceoracle::oracle {
namespace {

/// Draft probabilities of position j renormalised (the law d_j is drawn
/// from), or empty when they are out of contract or all zero.
std::vector<double> draft_law(const VerifyView& r, std::int64_t j) {
  std::vector<double> q(std::size_t(r.vocab));
  double sum = 0;
  for (std::int64_t i = 0; i < r.vocab; ++i) {
    const double x = r.draft_prob(j, i);
    if (!(x >= 0) || std::isinf(x)) return {};
    sum += q[std::size_t(i)] = x;
  }
  if (!(sum > 0)) return {};
  for (double& x : q) x /= sum;
  return q;
}

Distribution out_of_contract() {
  Distribution d;
  d.row_class = RowClass::invalid;
  return d;
}

}  // namespace

Distribution emitted_distribution(const VerifyView& r, std::int64_t j, const NumericsContract& c,
                                  const RaceConstants& request) {
  const RaceConstants k{race::race_eps(request.eps, c.conventions), request.greedy_eps};
  const RowView row = r.target_row(j, nullptr);
  // The bonus, a greedy request's token, a row out of contract: the row's own law.
  Distribution own = distribution(row, c, request);
  if (j == r.drafts || own.row_class != RowClass::sampling) return own;
  const std::vector<double> law = draft_law(r, j);
  if (law.empty()) return out_of_contract();

  const Probabilities P = target_probabilities(r, j, c, k.eps);
  const std::size_t V = std::size_t(r.vocab);
  const double u = kUnitRoundoff, r_div = relative_error(c.div_ulp), r_key = c.key_reciprocal ? u : 0.0;
  const double slack = r.draft_probs ? kDraftLawSlack : 0.0;
  // Acceptance of each id as the draft: its mass Q(i) P(u <= P'/Q) in [acc_lo, acc_hi].
  // The residual max(P' - Q, 0) as fp32 forms it in [res_lo, res_hi].
  std::vector<double> acc_lo(V, 0.0), acc_hi(V, 0.0), res_lo(V, 0.0), res_hi(V, 0.0);
  double accepted_lo = 0, accepted_hi = 0, res_lo_sum = 0, res_hi_sum = 0;
  std::int64_t racing = 0;
  for (std::size_t i = 0; i < V; ++i) {
    const double q = r.draft_prob(j, std::int64_t(i));
    if (q > 0) {
      const auto [ratio_lo, ratio_hi] = acceptance_ratio(P, std::int64_t(i), q, c);
      acc_lo[i] = law[i] * (1 - slack) * std::min(1.0, ratio_lo);
      acc_hi[i] = std::min(law[i] * (1 + slack), 1.0) * std::min(1.0, ratio_hi + kUniformGrid);
    }
    res_lo[i] = std::max(P.lo[i] - q, 0.0) * (1 - u);
    res_hi[i] = std::max(P.hi[i] - q, 0.0) * (1 + u);
    accepted_lo += acc_lo[i], accepted_hi += acc_hi[i];
    res_lo_sum += res_lo[i], res_hi_sum += res_hi[i];
    racing += res_hi[i] > 0;
  }
  const double rejected_lo = std::max(0.0, 1 - accepted_hi) / kBoundSafety;
  const double rejected_hi = std::min(1.0, (1 - accepted_lo) * kBoundSafety);
  // The residual race's keys res / (R + eps): the division, eps's rounding and
  // the reciprocal move each by a factor; u/d on P(i wins) (ERROR_MODEL.md).
  const double den_u = k.eps == 0 ? 0.0 : u;
  const double key_ratio = (1 + r_div) * (1 + den_u) * (1 + r_key) / ((1 - r_div) * (1 - den_u) * (1 - r_key));
  const double eps = double(k.eps);

  Distribution d;
  d.row_class = RowClass::sampling;
  d.p = P.p;
  d.band_lo.assign(V, 0.0);
  d.band_hi.assign(V, 0.0);
  d.lo = std::numeric_limits<double>::infinity(), d.hi = 0;
  for (std::size_t i = 0; i < V; ++i) {
    // P(i wins the residual race) for weights anywhere in their intervals;
    // every id may win when every residual may compute as 0 (id 0 wins then).
    double win_lo = 0, win_hi = 1;
    if (res_lo_sum > 0) {
      win_lo = res_lo[i] > 0 ? res_lo[i] / (res_lo[i] + (res_hi_sum - res_hi[i])) : 0.0;
      win_hi = res_hi[i] > 0 ? std::min(1.0, res_hi[i] / (res_hi[i] + (res_lo_sum - res_lo[i]))) : 0.0;
      win_lo = res_lo[i] > 0 ? win_lo / key_ratio * std::exp(-eps * res_hi_sum / res_lo[i]) : 0.0;
      win_hi = std::min(1.0, win_hi * key_ratio * std::exp(double(racing) * eps));
    }
    d.band_lo[i] = std::max(0.0, (acc_lo[i] + rejected_lo * win_lo) / kBoundSafety);
    d.band_hi[i] = std::min(1.0, (acc_hi[i] + rejected_hi * win_hi) * kBoundSafety);
    if (d.p[i] > 0) d.lo = std::min(d.lo, d.band_lo[i] / d.p[i]), d.hi = std::max(d.hi, d.band_hi[i] / d.p[i]);
  }
  if (!(d.hi > 0)) d.lo = d.hi = 1;
  return d;
}

std::int64_t likeliest_acceptance(const VerifyView& r, std::int64_t j, const NumericsContract& c,
                                  const RaceConstants& request) {
  if (!r.draft_probs) return r.draft_ids[j];
  const std::vector<double> law = draft_law(r, j);
  if (law.empty()) return 0;
  const Probabilities P = target_probabilities(r, j, c, race::race_eps(request.eps, c.conventions));
  std::int64_t best = 0;
  for (std::int64_t i = 0; i < r.vocab; ++i)
    if (std::min(law[std::size_t(i)], P.p[std::size_t(i)]) > std::min(law[std::size_t(best)], P.p[std::size_t(best)]))
      best = i;
  return best;
}

}  // namespace raceoracle::oracle
