#include "analysis/tail_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <boost/math/distributions/non_central_chi_squared.hpp>
#include <boost/math/special_functions/beta.hpp>

namespace raceoracle::analysis {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

double xlogy_ratio(double a, double b) {  // a log(a / b), 0 at a = 0
  if (a <= 0) return 0;
  if (b <= 0) return kInf;
  return a * std::log(a / b);
}
}  // namespace

double kl_bernoulli(double a, double p) { return xlogy_ratio(a, p) + xlogy_ratio(1 - a, 1 - p); }

double multinomial_kl_tail(double t, std::int64_t bins) {
  if (bins <= 1) return 0;
  const double k1 = double(bins - 1);
  if (!(t > k1)) return 1;
  return std::min(1.0, std::exp(-t + k1 * (1 + std::log(t / k1))));
}

double multinomial_kl_threshold(std::int64_t bins, double alpha) {
  if (bins <= 1) return kInf;
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("alpha must lie in (0, 1)");
  // The tail bound falls monotonically past t = k - 1: bisect on its log.
  const double k1 = double(bins - 1), target = std::log(alpha);
  auto log_tail = [&](double t) { return -t + k1 * (1 + std::log(t / k1)); };
  double lo = k1, hi = 2 * k1 + 1;
  while (log_tail(hi) > target) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (log_tail(mid) > target ? lo : hi) = mid;
  }
  return hi;
}

std::int64_t binomial_upper_critical(std::int64_t n, double p, double alpha) {
  // The bound e^-n KL(x/n || p) falls as x rises past np: the least x where
  // it reaches alpha, by bisection on integers.
  const double target = -std::log(alpha);
  auto rejects = [&](std::int64_t x) { return double(n) * kl_bernoulli(double(x) / double(n), p) >= target; };
  std::int64_t lo = std::int64_t(std::floor(double(n) * p)), hi = n;  // rejects(lo) is false (KL ~ 0)
  if (!rejects(hi)) return n + 1;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (rejects(mid) ? hi : lo) = mid;
  }
  return hi;
}

std::int64_t binomial_lower_critical(std::int64_t n, double p, double alpha) {
  const double target = -std::log(alpha);
  auto rejects = [&](std::int64_t x) { return double(n) * kl_bernoulli(double(x) / double(n), p) >= target; };
  std::int64_t lo = 0, hi = std::int64_t(std::ceil(double(n) * p));
  if (!rejects(lo)) return -1;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (rejects(mid) ? lo : hi) = mid;
  }
  return lo;
}

double min_kl_in_box(const std::vector<double>& a, const std::vector<double>& lo, const std::vector<double>& hi) {
  // KKT: q_b = clamp(a_b / lambda, lo_b, hi_b), lambda set so that sum q = 1
  // (sum q falls as lambda rises): bisection on lambda.
  const std::size_t k = a.size();
  auto total = [&](double lambda) {
    double s = 0;
    for (std::size_t b = 0; b < k; ++b) s += std::clamp(a[b] / lambda, lo[b], hi[b]);
    return s;
  };
  double l_lo = 1e-300, l_hi = 1;
  while (total(l_hi) > 1 && l_hi < 1e300) l_hi *= 2;
  while (total(l_lo) < 1 && l_lo < l_hi) l_lo *= 2;  // only when sum hi is ~1
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(l_lo * l_hi);
    if (!(mid > l_lo && mid < l_hi)) break;
    (total(mid) > 1 ? l_lo : l_hi) = mid;
  }
  const double lambda = l_hi;
  double kl = 0;
  for (std::size_t b = 0; b < k; ++b) kl += xlogy_ratio(a[b], std::clamp(a[b] / lambda, lo[b], hi[b]));
  // The bisection leaves sum q a hair below 1: KL to q normalised is
  // KL(a || q) + log(sum q), the smaller of the two (errs toward accepting).
  return std::max(0.0, kl + std::log(total(lambda)));
}

double noncentrality_for_power(double df, double x, double power) {
  auto tail = [&](double lambda) {
    if (lambda <= 0) return 1.0 - boost::math::cdf(boost::math::chi_squared_distribution<double>(df), x);
    return boost::math::cdf(boost::math::complement(boost::math::non_central_chi_squared_distribution<double>(df, lambda), x));
  };
  if (tail(0) >= power) return 0;
  double lo = 0, hi = std::max(1.0, x);
  while (tail(hi) < power) hi *= 2;
  for (int i = 0; i < 100 && hi - lo > 1e-6 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (tail(mid) < power ? lo : hi) = mid;
  }
  return hi;
}

double binomial_at_least(std::int64_t n, double q, std::int64_t c) {
  if (c <= 0) return 1;
  if (c > n) return 0;
  if (q <= 0) return 0;
  if (q >= 1) return 1;
  // In double (Boost's default promotes to long double: 3x the time, and the
  // power report needs three digits).
  return boost::math::ibeta(double(c), double(n - c + 1), q, boost::math::policies::make_policy(boost::math::policies::promote_double<false>()));
}

double binomial_at_most(std::int64_t n, double q, std::int64_t c) {
  if (c < 0) return 0;
  return 1 - binomial_at_least(n, q, c + 1);
}

}  // namespace raceoracle::analysis
