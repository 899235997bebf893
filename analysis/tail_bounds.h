#pragma once
/// Tail bounds that hold at every sample size (no asymptotics), the tests
/// built on them, and the power those tests have. The derivations are
/// analysis/FREQUENCY.md.
#include <cstdint>
#include <vector>

namespace raceoracle::analysis {

/// KL(a || p) of two Bernoulli laws, in nats (+inf where a is outside p's support).
double kl_bernoulli(double a, double p);

/// The multinomial's empirical divergence: for k bins and any n,
/// P(n KL(p_hat || p) >= t) <= e^-t (e t / (k - 1))^(k - 1) for t > k - 1
/// (its moment generating function is at most a Gamma(k - 1, n)'s). The
/// bound, in [0, 1] (1 at t <= k - 1; 0 for k = 1, where KL is 0).
double multinomial_kl_tail(double t, std::int64_t bins);
/// The least t whose multinomial_kl_tail is at most alpha (+inf for k = 1).
double multinomial_kl_threshold(std::int64_t bins, double alpha);

/// Chernoff's bounds on a Binomial(n, p) count c: P(c >= x) <= e^-n KL(x/n || p)
/// for x >= np, and the same below. The least count x > np whose bound is at
/// most alpha (n + 1: none); the greatest x < np (-1: none).
std::int64_t binomial_upper_critical(std::int64_t n, double p, double alpha);
std::int64_t binomial_lower_critical(std::int64_t n, double p, double alpha);

/// min KL(a || q) over q with lo <= q <= hi elementwise and sum q = 1 (the
/// null's band), for an empirical law `a`. Requires sum lo <= 1 <= sum hi.
double min_kl_in_box(const std::vector<double>& a, const std::vector<double>& lo, const std::vector<double>& hi);

/// The noncentrality lambda at which a chi-squared law with `df` degrees of
/// freedom exceeds x with probability `power`: the G statistic's
/// approximate law under an alternative at chi-squared distance lambda / n.
double noncentrality_for_power(double df, double x, double power);

/// P(Binomial(n, q) >= c) and P(Binomial(n, q) <= c), exact.
double binomial_at_least(std::int64_t n, double q, std::int64_t c);
double binomial_at_most(std::int64_t n, double q, std::int64_t c);

}  // namespace raceoracle::analysis
