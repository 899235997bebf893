#include "analysis/disagreement_rate.h"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/gamma.hpp>
#include <cmath>

namespace raceoracle::analysis {
namespace {

double median_threshold(std::vector<RowGap> gaps) {
  if (gaps.empty()) return 0;
  auto mid = gaps.begin() + std::ptrdiff_t(gaps.size() / 2);
  std::nth_element(gaps.begin(), mid, gaps.end(),
                   [](const RowGap& a, const RowGap& b) { return a.threshold < b.threshold; });
  return mid->threshold;
}

/// Two-sided exact binomial test of k1 successes in k trials at p = 1/2.
double split_p_value(std::int64_t k1, std::int64_t k) {
  if (k == 0) return 1;
  const boost::math::binomial_distribution<double> b(double(k), 0.5);
  const double below = boost::math::cdf(b, double(k1));
  const double above = k1 == 0 ? 1.0 : boost::math::cdf(boost::math::complement(b, double(k1 - 1)));
  return std::min(1.0, 2 * std::min(below, above));
}

}  // namespace

Interval poisson_interval(std::int64_t k, double confidence) {
  const double a = 1 - confidence;
  Interval i;
  if (k > 0) i.lo = boost::math::quantile(boost::math::chi_squared_distribution<double>(2.0 * double(k)), a / 2) / 2;
  i.hi = boost::math::quantile(boost::math::chi_squared_distribution<double>(2.0 * double(k) + 2), 1 - a / 2) / 2;
  return i;
}

Interval weighted_poisson_interval(double sum, double squares, double largest, double confidence) {
  const double a = 1 - confidence;
  Interval i;
  if (!(largest > 0)) return i;  // no weight anywhere: the sum is 0 for certain
  const auto gamma = [](double mean, double variance, double p) {
    return boost::math::quantile(boost::math::gamma_distribution<double>(mean * mean / variance, variance / mean), p);
  };
  if (sum > 0) i.lo = gamma(sum, squares, a / 2);
  i.hi = gamma(sum + largest, squares + largest * largest, 1 - a / 2);
  return i;
}

Interval counted_interval(std::int64_t k, std::int64_t n) {
  if (n <= 0) return {};
  const Interval i = poisson_interval(k);
  return {i.lo / double(n), std::min(1.0, i.hi / double(n))};
}

bool RateEstimate::agrees_with_count(std::int64_t k) const {
  const Interval c = counted_interval(k, rows);
  return c.lo <= hi && c.hi >= lo;
}

RateEstimate estimate_rate(const std::vector<RowGap>& gaps, std::int64_t rows, double window) {
  RateEstimate e;
  e.rows = rows;
  e.window = std::min(0.5, std::max(window, 8 * median_threshold(gaps)));
  const double h = e.window;
  double weight = 0, squares = 0, largest = 0, all_thresholds = 0;
  std::int64_t lower_half = 0;
  for (const RowGap& g : gaps) {
    all_thresholds += g.threshold;
    if (!(g.gap <= h)) continue;
    ++e.in_window;
    lower_half += g.gap <= h / 2;
    const double w = std::min(g.threshold / h, 1.0);  // a row's chance, read off the density over [0, h]
    weight += w;
    squares += w * w;
    largest = std::max(largest, w);
  }
  if (rows == 0) return e;
  e.mean_threshold = e.in_window ? weight * h / double(e.in_window) : gaps.empty() ? 0 : all_thresholds / double(gaps.size());
  e.rate = weight / double(rows);
  if (e.in_window == 0) largest = std::min(e.mean_threshold / h, 1.0);  // the weight the upper bound assumes
  // The rows in the window come as a Poisson count, each weighing c / h: the
  // sum is a weighted Poisson sum, whose interval is weighted_poisson_interval.
  // The gap's density rises over [0, h] by at most 1 / (1 - h)^2 (DIVERGENCE.md),
  // so the window can only overstate the density at 0: lower the lower end.
  const Interval k = weighted_poisson_interval(weight, squares, largest);
  e.lo = k.lo / double(rows) * (1 - h) * (1 - h);
  e.hi = std::min(1.0, k.hi / double(rows));
  e.flatness_p = split_p_value(lower_half, e.in_window);
  return e;
}

}  // namespace raceoracle::analysis
