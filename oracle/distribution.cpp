#include "oracle/distribution.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "oracle/error_model.h"
#include "oracle/filter.h"

namespace raceoracle::oracle {

bool Distribution::may_appear(std::int64_t id) const {
  if (id < 0 || id >= std::int64_t(p.size())) return false;
  return p[std::size_t(id)] > 0 || std::binary_search(boundary.begin(), boundary.end(), id);
}

double Distribution::low(std::int64_t id) const {
  if (!band_lo.empty()) return band_lo[std::size_t(id)];
  const double q = p[std::size_t(id)];
  return q > 0 ? q * lo * std::exp(-eps_tail / q) : 0;
}

double Distribution::high(std::int64_t id) const {
  return band_hi.empty() ? p[std::size_t(id)] * hi : band_hi[std::size_t(id)];
}

namespace {
// The draws the band is taken over: E in [2^-64, 64]. A draw outside comes
// with probability below 2^-64 + e^-64 per id (ERROR_MODEL.md).
constexpr float kNoiseGrid[] = {0x1p-64f, 0x1p-32f, 1.0f, 64.0f};
}  // namespace

Distribution distribution(const RowView& row, const NumericsContract& contract, const RaceConstants& k) {
  Distribution d;
  const std::int64_t V = row.vocab;
  // The row's class, as decide() gives it on unit noise (a greedy, forced,
  // fully masked or invalid row reads no noise, or reads it only to be judged).
  std::vector<float> ones(std::size_t(std::max<std::int64_t>(V, 0)), 1.0f);
  RowView unit = row;
  unit.noise = ones.data();
  const Verdict v = decide(unit, contract, k);
  d.row_class = v.row_class;
  if (v.row_class != RowClass::sampling) {
    d.point = v;
    return d;
  }
  RowScale s = row_scale(row, k);
  s.eps = race::race_eps(k.eps, contract.conventions);
  // The certain set D and the boundary B (filters), else every finite id.
  std::vector<std::uint8_t> in_d(std::size_t(V), 0);
  if (row.filter && race::filtered(*row.filter, V)) {
    const KeptSet ks = kept_set(row, *row.filter, s, contract);
    in_d = ks.kept;
    for (std::int64_t b : ks.boundary) in_d[std::size_t(b)] = 0;
    d.boundary = ks.boundary;
  } else {
    for (std::int64_t i = 0; i < V; ++i) in_d[std::size_t(i)] = row.logit(i) > -std::numeric_limits<double>::infinity();
  }
  // Weights w = exp((x - M) / t), w_max = 1; their sums over D and D u B.
  d.p.assign(std::size_t(V), 0.0);
  double s_d = 0, s_all = 0, up = 1, down = 1;
  std::int64_t n_d = 0;
  auto weigh = [&](std::int64_t i) {
    const double x = row.logit(i);
    for (float e : kNoiseGrid) {
      const RoundingFactors f = key_factors(x, e, s, contract);
      up = std::max(up, f.up);
      down = std::min(down, f.down);
    }
    return std::exp((x - s.row_max) / s.t);
  };
  for (std::int64_t i = 0; i < V; ++i)
    if (in_d[std::size_t(i)]) {
      s_all += d.p[std::size_t(i)] = weigh(i);
      ++n_d;
    }
  s_d = s_all;
  for (std::int64_t b : d.boundary) s_all += weigh(b);
  if (!(s_d > 0)) {  // no certain id: only the support is tested
    d.p.assign(std::size_t(V), 0.0);
    return d;
  }
  for (double& q : d.p) q /= s_d;
  // The band (ERROR_MODEL.md): u/d from fp32 keys, eps's shifts.
  const double eps = double(s.eps), kept = double(n_d + std::int64_t(d.boundary.size()));
  const double ratio = up / down;
  const double shrink = 1 - ratio * double(n_d) * eps * s_all / s_d;
  if (!std::isfinite(ratio) || !(shrink > 0)) {
    d.hi = std::numeric_limits<double>::infinity();
    d.lo = 0;
    return d;
  }
  d.hi = ratio * ratio * std::exp(kept * eps) / shrink;
  d.lo = std::exp(-kept * eps) / (ratio * ratio);
  d.eps_tail = eps * ratio * s_all / s_d;
  return d;
}

}  // namespace raceoracle::oracle
