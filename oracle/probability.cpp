#include "oracle/probability.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace raceoracle::oracle {

double sum_error(double depth) {
  const double du = depth * kUnitRoundoff;
  return du < 0.5 ? du / (1 - du) : kInf;
}

WeightFactors weight_factors(double x, const RowScale& s, const NumericsContract& c) {
  const double d = exponent_error(x, s, c), r_exp = relative_error(c.exp_ulp);
  return {std::exp(-d) * (1 - r_exp) / kBoundSafety, std::exp(d) * (1 + r_exp) * kBoundSafety};
}

Probabilities probabilities(const RowView& row, const RowScale& s, const NumericsContract& c,
                            const std::vector<std::uint8_t>& kept, const std::vector<std::int64_t>& boundary,
                            std::int32_t sum_depth) {
  const std::size_t V = std::size_t(row.vocab);
  // in: 1 exact member, surely kept; 2 exact member on the boundary; 3 outside, on the boundary.
  std::vector<std::uint8_t> in(V, 0);
  for (std::size_t i = 0; i < V; ++i) in[i] = (kept.empty() ? std::isfinite(row.logit(std::int64_t(i))) : kept[i] != 0) ? 1 : 0;
  for (std::int64_t b : boundary) in[std::size_t(b)] = in[std::size_t(b)] ? 2 : 3;
  Probabilities out;
  out.p.assign(V, 0.0), out.lo.assign(V, 0.0), out.hi.assign(V, 0.0);
  std::vector<double> w(V, 0.0), wlo(V, 0.0), whi(V, 0.0);
  double S = 0, sure_lo = 0, may_hi = 0;
  std::int64_t n = 0;
  bool unbounded = false;
  for (std::size_t i = 0; i < V; ++i) {
    if (!in[i]) continue;
    const double x = row.logit(std::int64_t(i));
    w[i] = std::exp((x - s.row_max) / s.t);
    const WeightFactors f = weight_factors(x, s, c);
    unbounded |= !std::isfinite(f.hi);
    wlo[i] = w[i] * f.lo, whi[i] = w[i] > 0 ? w[i] * f.hi : 0.0;
    ++n;
    if (in[i] <= 2) S += w[i];
    if (in[i] == 1) sure_lo += wlo[i];
    may_hi += whi[i];
  }
  if (n == 0) return out;
  // Every member at the row's max, none on the boundary: each weight is
  // expf(0) = 1 exactly, S' = n exactly (n < 2^24), and an IEEE division
  // gives p' = fl(1 / n) exactly (ERROR_MODEL.md, "The verify step").
  if (boundary.empty() && n < (std::int64_t(1) << 24) && c.div_ulp <= 0.5 && std::all_of(w.begin(), w.end(), [&](double v) { return v == 0.0 || v == 1.0; })) {
    std::int64_t ones = 0;
    for (std::size_t i = 0; i < V; ++i) ones += in[i] && w[i] == 1.0;
    if (ones == n) {
      const float p32 = 1.0f / float(n);
      for (std::size_t i = 0; i < V; ++i)
        if (in[i]) out.p[i] = 1.0 / double(n), out.lo[i] = out.hi[i] = double(p32);
      return out;
    }
  }
  const double g = sum_error(sum_depth > 0 ? double(sum_depth) : double(n)) * kBoundSafety;
  const double tau = flush_per_weight(n), r_div = relative_error(c.div_ulp);
  // A sampler that sums on partial maxima rescales each partial sum to the
  // row's (c.rescales times): an expf and a multiply each.
  const double r_res = relative_error(c.rescale_ulp), u = kUnitRoundoff;
  const double res_lo = std::pow((1 - r_res) * (1 - u), c.rescales), res_hi = std::pow((1 + r_res) * (1 + u), c.rescales);
  // S' over the computed set: every surely kept id, perhaps the boundary's.
  const double s_lo = sure_lo * res_lo * (1 - g) - double(n) * tau, s_hi = may_hi * res_hi * (1 + g) + double(n) * tau;
  for (std::size_t i = 0; i < V; ++i) {
    if (!in[i]) continue;
    if (in[i] <= 2) out.p[i] = w[i] / S;
    if (unbounded || !(s_lo > 0)) {
      out.hi[i] = kInf;
      continue;
    }
    // p' = fl(w' / S'), which may flush below 2^-126 or round as a subnormal.
    out.hi[i] = ((whi[i] + tau) / s_lo * (1 + r_div) + 0x1p-149) * kBoundSafety;
    if (in[i] == 1) out.lo[i] = std::max(0.0, (wlo[i] - tau) / s_hi * (1 - r_div) - 0x1p-126) / kBoundSafety;
  }
  return out;
}

}  // namespace raceoracle::oracle
