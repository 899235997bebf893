#include "oracle/verdict_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace raceoracle::oracle::rules {
namespace {

/// Index into `keys` of the largest key, the lowest index among equals, skipping `skip`; -1 if none.
std::ptrdiff_t argmax_lowest(const std::vector<double>& keys, std::ptrdiff_t skip = -1) {
  std::ptrdiff_t best = -1;
  for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(keys.size()); ++k) {
    if (k == skip) continue;
    if (best < 0 || keys[std::size_t(k)] > keys[std::size_t(best)]) best = k;
  }
  return best;
}
}  // namespace

double ranking_key(double x, float noise, const RowScale& s) {
  if (x == -kInf) return 0;
  const double k = exact_key(x, noise, s);
  return std::isnan(k) ? -1.0 : k;
}

RowBounds row_bounds(double min_x, const RowScale& s, const NumericsContract& c) {
  // The log domain's error depends on each id's noise: no row-wide factor (every id is bounded on its own).
  if (c.domain == race::KeyDomain::log) return {kInf, 0, 0};
  // So does a replayed stream's fast log: its absolute error weighs by each id's E.
  if (c.noise_abs > 0) return {kInf, 0, 0};
  const double delta_max = std::max(exponent_error(min_x, s, c), exponent_error(s.row_max, s, c));
  const bool overflow = c.order == ScalingOrder::pre && prescale_overflows(min_x, s);
  const RoundingFactors f = rounding_factors(s, c);
  return {overflow ? kInf : std::exp(delta_max) * f.up, std::exp(-delta_max) * f.down, absolute_error(double(s.eps), s, c)};
}

void greedy(Verdict& v, const RowView& row, std::int64_t token, std::int64_t runner_up) {
  v.row_class = RowClass::greedy;
  v.token = token;
  v.key = row.logit(token);
  v.runner_up = runner_up;
  if (runner_up >= 0) {
    v.runner_up_key = row.logit(runner_up);
    v.gap = v.key - v.runner_up_key;
  }
  v.ambiguous = {token};  // greedy is bit-exact: nothing else may win
}

void sampling(Verdict& v, const RowView& row, const RowScale& s, const NumericsContract& c, const RowBounds& b,
              const std::vector<std::int64_t>& ids, const std::vector<double>& keys) {
  v.row_class = RowClass::sampling;
  const std::ptrdiff_t win_at = argmax_lowest(keys);
  v.token = ids[std::size_t(win_at)];
  v.key = keys[std::size_t(win_at)];
  if (const std::ptrdiff_t r = argmax_lowest(keys, win_at); r >= 0) {
    v.runner_up = ids[std::size_t(r)];
    v.runner_up_key = keys[std::size_t(r)];
    v.gap = (v.key - v.runner_up_key) / v.key;
  }
  const KeyBound win = bound_key(row.logit(v.token), row.noise[v.token], s, c);
  v.rho = win.rho();

  // Whatever fp32 does, the winner's key is at least the largest lower bound
  // of any id: usually the exact winner's, but not where bounds differ id by
  // id (a replayed stream's fast log may leave the exact winner's open below).
  double lo_max = win.lo;
  std::vector<std::pair<std::int64_t, double>> near;  // (id, hi) of ids that may reach win.lo
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const std::int64_t j = ids[k];
    if (j == v.token) continue;
    const double x = row.logit(j);
    if (x == -kInf || keys[k] * b.up_max + b.abs_max < win.lo) continue;  // masked ids never win
    const KeyBound bj = bound_key(x, row.noise[j], s, c);
    lo_max = std::max(lo_max, bj.lo);
    if (may_outrank(bj, win)) near.emplace_back(j, bj.hi);
  }
  for (const auto& [j, hi] : near)
    if (hi >= lo_max) v.ambiguous.push_back(j);
  v.ambiguous.push_back(v.token);
  std::sort(v.ambiguous.begin(), v.ambiguous.end());
  // Exact ties (SPEC §3): ids at the row max with equal noise compute
  // bit-identical keys (exp(0) = 1 in every stage), so only the lowest of
  // them may win; drop the others.
  std::vector<std::int64_t> kept;
  for (std::int64_t j : v.ambiguous) {
    const bool shadowed = row.logit(j) == s.row_max && std::any_of(kept.begin(), kept.end(), [&](std::int64_t k) {
      return row.logit(k) == s.row_max && row.noise[k] == row.noise[j];
    });
    if (!shadowed) kept.push_back(j);
  }
  v.ambiguous = std::move(kept);
}

}  // namespace raceoracle::oracle::rules
