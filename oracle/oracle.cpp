#include "oracle/oracle.h"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace raceoracle::oracle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The row's logits widened exactly to double, the one copy the oracle makes.
Eigen::ArrayXd widen(const RowView& row) {
  Eigen::ArrayXd x(row.vocab);
  if (row.dtype == Dtype::f32) {
    x = Eigen::Map<const Eigen::ArrayXf>(static_cast<const float*>(row.logits), row.vocab).cast<double>();
  } else {
    for (std::int64_t i = 0; i < row.vocab; ++i) x[i] = row.logit(i);
  }
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

/// Out-of-contract checks of SPEC §1, first failing id reported.
bool classify_invalid(const RowView& row, const Eigen::ArrayXd& x, bool greedy, Verdict& out) {
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
  const Eigen::Map<const Eigen::ArrayXf> e(row.noise, row.vocab);
  if ((e >= 0.0f && e < std::numeric_limits<float>::infinity()).all()) return false;
  const std::int64_t i = first_where(row.vocab, [&](std::int64_t j) { return !(e[j] >= 0.0f && std::isfinite(e[j])); });
  const float bad = row.noise[i];
  out = invalid(std::isnan(bad) ? InvalidReason::nan_noise : bad < 0 ? InvalidReason::negative_noise : InvalidReason::inf_noise, i);
  return true;
}

/// Lowest id of the largest value in `v`, skipping `skip`; -1 if v is empty.
std::int64_t argmax_lowest(const Eigen::ArrayXd& v, std::int64_t skip = -1) {
  std::int64_t best = -1;
  for (std::int64_t i = 0; i < v.size(); ++i) {
    if (i == skip) continue;
    if (best < 0 || v[i] > v[best]) best = i;
  }
  return best;
}

void decide_greedy(const Eigen::ArrayXd& x, double m, Verdict& v) {
  v.row_class = RowClass::greedy;
  v.token = first_where(x.size(), [&](std::int64_t i) { return x[i] == m; });
  v.key = m;
  v.runner_up = argmax_lowest(x, v.token);
  if (v.runner_up >= 0) {
    v.runner_up_key = x[v.runner_up];
    v.gap = m - v.runner_up_key;
  }
  v.ambiguous = {v.token};  // greedy is bit-exact: nothing else may win
}

void decide_sampling(const RowView& row, const Eigen::ArrayXd& x, const RowScale& s,
                     const NumericsContract& c, Verdict& v) {
  const Eigen::Map<const Eigen::ArrayXf> e(row.noise, row.vocab);
  const Eigen::ArrayXd den = e.cast<double>() + double(s.eps);
  Eigen::ArrayXd key = (x == -kInf).select(0.0, ((x - s.row_max) / s.t).exp() / den);
  // 0 / 0 (eps = 0, a zero draw, a numerator that underflows) has no value:
  // it ranks below every number, as a NaN key does in the kernels' order
  // (kernels/race.h, beats). Keys are >= 0, so -1 is below all of them.
  key = key.isNaN().select(-1.0, key);

  v.row_class = RowClass::sampling;
  v.token = argmax_lowest(key);
  v.key = key[v.token];
  v.runner_up = argmax_lowest(key, v.token);
  if (v.runner_up >= 0) {
    v.runner_up_key = key[v.runner_up];
    v.gap = (v.key - v.runner_up_key) / v.key;
  }
  const KeyBound win = bound_key(x[v.token], row.noise[v.token], s, c);
  v.rho = win.rho();

  // Prefilter: exponent_error is convex in x (sums of |.| terms), so over the
  // row's finite range [min_x, M] it peaks at an end; the absolute term peaks
  // at the smallest denominator, eps.
  const double min_x = (x == -kInf).select(s.row_max, x).minCoeff();
  const double delta_max = std::max(exponent_error(min_x, s, c), exponent_error(s.row_max, s, c));
  const bool overflow = c.order == ScalingOrder::pre && prescale_overflows(min_x, s);
  const double up_max = overflow ? kInf : std::exp(delta_max) * rounding_factors(c).up;
  const double abs_max = absolute_error(double(s.eps));
  for (std::int64_t j = 0; j < row.vocab; ++j) {
    if (j == v.token || x[j] == -kInf || key[j] * up_max + abs_max < win.lo) continue;  // masked ids never win
    if (may_outrank(bound_key(x[j], row.noise[j], s, c), win)) v.ambiguous.push_back(j);
  }
  v.ambiguous.push_back(v.token);
  std::sort(v.ambiguous.begin(), v.ambiguous.end());
  // Exact ties (SPEC §3): ids at the row max with equal noise compute
  // bit-identical keys (exp(0) = 1 in every stage), so only the lowest of
  // them may win; drop the others.
  std::vector<std::int64_t> kept;
  for (std::int64_t j : v.ambiguous) {
    const bool shadowed = x[j] == s.row_max && std::any_of(kept.begin(), kept.end(), [&](std::int64_t k) {
      return x[k] == s.row_max && row.noise[k] == row.noise[j];
    });
    if (!shadowed) kept.push_back(j);
  }
  v.ambiguous = std::move(kept);
}

}  // namespace

const char* to_string(RowClass c) {
  switch (c) {
    case RowClass::greedy: return "greedy";
    case RowClass::sampling: return "sampling";
    case RowClass::forced: return "forced";
    case RowClass::fully_masked: return "fully-masked";
    case RowClass::invalid: return "invalid";
  }
  return "?";
}

const char* to_string(InvalidReason r) {
  switch (r) {
    case InvalidReason::none: return "none";
    case InvalidReason::nan_logit: return "NaN logit";
    case InvalidReason::pos_inf_logit: return "+inf logit";
    case InvalidReason::nan_temperature: return "NaN temperature";
    case InvalidReason::inf_temperature: return "infinite temperature";
    case InvalidReason::nan_noise: return "NaN noise";
    case InvalidReason::negative_noise: return "negative noise";
    case InvalidReason::inf_noise: return "infinite noise";
  }
  return "?";
}

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::identical: return "identical";
    case Outcome::explained: return "explained";
    case Outcome::unexplained: return "UNEXPLAINED";
    case Outcome::out_of_range: return "OUT-OF-RANGE";
    case Outcome::out_of_contract: return "out-of-contract";
  }
  return "?";
}

RowScale row_scale(const RowView& row, const RaceConstants& k) {
  RowScale s;
  s.eps = k.eps;
  s.t = double(race::clamp_temperature(row.temperature));
  double m = -kInf;
  for (std::int64_t i = 0; i < row.vocab; ++i) m = std::max(m, row.logit(i));
  s.row_max = m;
  return s;
}

Verdict decide(const RowView& row, const NumericsContract& contract, const RaceConstants& k) {
  const Eigen::ArrayXd x = widen(row);
  const bool greedy = race::is_greedy(row.temperature, k.greedy_eps);  // fp32 compare, as the kernels do
  Verdict v;
  if (classify_invalid(row, x, greedy, v)) return v;

  const double m = x.maxCoeff();
  if (m == -kInf) {  // fully masked: id 0 for greedy and sampling rows alike
    v.row_class = RowClass::fully_masked;
    v.token = 0;
    v.ambiguous = {0};
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
    decide_greedy(x, m, v);
    return v;
  }
  RowScale s;
  s.row_max = m;
  s.t = double(race::clamp_temperature(row.temperature));
  s.eps = k.eps;
  decide_sampling(row, x, s, contract, v);
  return v;
}

std::vector<Verdict> decide_batch(const BatchView& b, const NumericsContract& contract, const RaceConstants& k,
                                  int threads) {
  validate(b);
  std::vector<Verdict> out(std::size_t(b.rows));
  const int n = std::max(1, std::min<int>(threads > 0 ? threads : int(std::thread::hardware_concurrency()), int(b.rows)));
  std::vector<std::thread> pool;
  for (int w = 0; w < n; ++w)
    pool.emplace_back([&, w] {
      for (std::int64_t r = w; r < b.rows; r += n) out[std::size_t(r)] = decide(b.row(r), contract, k);
    });
  for (auto& t : pool) t.join();
  return out;
}

Outcome judge(const Verdict& v, std::int64_t token, std::int64_t vocab) {
  if (token < 0 || token >= vocab) return Outcome::out_of_range;
  if (v.row_class == RowClass::invalid) return Outcome::out_of_contract;
  if (token == v.token) return Outcome::identical;
  return std::binary_search(v.ambiguous.begin(), v.ambiguous.end(), token) ? Outcome::explained
                                                                           : Outcome::unexplained;
}

std::string Verdict::describe() const {
  if (row_class == RowClass::invalid)
    return fmt::format("invalid ({}{})", to_string(reason), reason_id >= 0 ? fmt::format(" at id {}", reason_id) : "");
  std::string s = fmt::format("{} token={}", to_string(row_class), token);
  if (row_class == RowClass::sampling)
    s += fmt::format(" key={:.9g} rho={:.3g}", key, rho);
  else if (row_class == RowClass::greedy)
    s += fmt::format(" logit={:.9g}", key);
  if (runner_up >= 0)
    s += fmt::format(" runner-up={} ({:.9g}, gap {:.3g})", runner_up, runner_up_key, gap);
  if (ambiguous.size() > 1) s += fmt::format(" ambiguous={{{}}}", fmt::join(ambiguous, ","));
  return s;
}

}  // namespace raceoracle::oracle
