#include "oracle/reference.h"

#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "oracle/verdict_rules.h"

namespace raceoracle::oracle {
namespace {


/// The row's logits widened exactly to double.
Eigen::ArrayXd widen(const RowView& row) {
  Eigen::ArrayXd x(row.vocab);
  for (std::int64_t i = 0; i < row.vocab; ++i) x[i] = row.logit(i);
  return x;
}

template <class Pred>
std::int64_t first_where(std::int64_t n, Pred pred) {
  for (std::int64_t i = 0; i < n; ++i)
    if (pred(i)) return i;
  return -1;
}

Verdict invalid(InvalidReason r, std::int64_t id) {
  Verdict v;
  v.row_class = RowClass::invalid;
  v.reason = r;
  v.reason_id = id;
  v.token = -1;
  return v;
}

/// Out-of-contract checks of SPEC §1, first failing id reported; with no eps
/// (race::EpsRule::none, or a launch's eps of 0) zero draws are excluded too.
bool classify_invalid(const RowView& row, const Eigen::ArrayXd& x, bool greedy, bool zero_noise_allowed, Verdict& out) {
  const float T = row.temperature;
  if (std::isnan(T)) return out = invalid(InvalidReason::nan_temperature, -1), true;
  if (T == std::numeric_limits<float>::infinity())
    return out = invalid(InvalidReason::inf_temperature, -1), true;
  if (!(x < kInf).all()) {  // NaN compares false, so NaN and +inf both land here
    const std::int64_t i = first_where(row.vocab, [&](std::int64_t j) { return !(x[j] < kInf); });
    out = invalid(std::isnan(x[i]) ? InvalidReason::nan_logit : InvalidReason::pos_inf_logit, i);
    return true;
  }
  if (greedy) return false;  // greedy rows do not read noise
  const std::int64_t i = first_where(row.vocab, [&](std::int64_t j) { return !(row.noise[j] >= 0.0f && std::isfinite(row.noise[j])); });
  if (i >= 0) {
    const float bad = row.noise[i];
    out = invalid(std::isnan(bad) ? InvalidReason::nan_noise : bad < 0 ? InvalidReason::negative_noise : InvalidReason::inf_noise, i);
    return true;
  }
  if (zero_noise_allowed) return false;
  const std::int64_t z = first_where(row.vocab, [&](std::int64_t j) { return row.noise[j] == 0.0f; });
  if (z < 0) return false;
  out = invalid(InvalidReason::zero_noise_without_eps, z);
  return true;
}

}  // namespace

Verdict decide_reference(const RowView& row, const NumericsContract& contract, const RaceConstants& request) {
  const Eigen::ArrayXd x = widen(row);
  // The sampler's conventions: its greedy rule, fp32 compare as the kernels do; the eps it adds.
  const RaceConstants k{race::race_eps(request.eps, contract.conventions), request.greedy_eps};
  const bool greedy = race::is_greedy(row.temperature, k.greedy_eps, contract.conventions);
  Verdict v;
  if (classify_invalid(row, x, greedy, k.eps != 0.0f, v)) return v;

  const double m = x.maxCoeff();
  if (m == -kInf) {  // fully masked: id 0 for greedy and sampling rows alike
    v.row_class = RowClass::fully_masked;
    v.token = 0;
    v.ambiguous = {0};
    v.any_id = contract.conventions.fully_masked == race::FullyMasked::any;
    return v;
  }
  if ((x > -kInf).count() == 1) {  // forced: the one unmasked id, whatever T
    v.row_class = RowClass::forced;
    v.token = first_where(row.vocab, [&](std::int64_t i) { return x[i] > -kInf; });
    v.key = x[v.token];
    v.ambiguous = {v.token};
    return v;
  }
  if (greedy) {
    const std::int64_t token = first_where(row.vocab, [&](std::int64_t i) { return x[i] == m; });
    std::int64_t second = -1;
    for (std::int64_t i = 0; i < row.vocab; ++i)
      if (i != token && (second < 0 || x[i] > x[second])) second = i;
    rules::greedy(v, row, token, second);
    return v;
  }
  const RowScale s{m, double(race::clamp_temperature(row.temperature)), k.eps, row.vocab};
  std::vector<std::int64_t> ids(std::size_t(row.vocab));
  std::vector<double> keys(std::size_t(row.vocab));
  for (std::int64_t i = 0; i < row.vocab; ++i) {
    ids[std::size_t(i)] = i;
    keys[std::size_t(i)] = rules::ranking_key(x[i], row.noise[i], s);
  }
  const double min_x = (x == -kInf).select(m, x).minCoeff();
  rules::sampling(v, row, s, contract, rules::row_bounds(min_x, s, contract), ids, keys);
  return v;
}

}  // namespace raceoracle::oracle
