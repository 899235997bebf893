#include "oracle/error_model.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

namespace raceoracle::oracle {
namespace {
// Double evaluation of the bound itself is not exact; widening every factor by
// this margin keeps the bound sound against the oracle's own rounding (~1e-16).
constexpr double kSafety = kBoundSafety;
}  // namespace

double relative_error(double ulps) { return std::max(ulps, 0.5) * 0x1p-23; }

double noise_error(const NumericsContract& c) { return c.noise_ulp > 0 ? c.noise_ulp * 0x1p-23 : 0.0; }

double noise_abs_of(double noise, const NumericsContract& c) {
  return c.noise_abs > 0 && noise > c.noise_abs_above && noise <= c.noise_abs_below ? c.noise_abs : 0.0;
}

double den_low(double den, double noise, const NumericsContract& c) {
  return den * (1 - kUnitRoundoff) * (1 - noise_error(c)) - noise_abs_of(noise, c);
}

double KeyBound::rho() const {
  if (key <= 0 || !std::isfinite(hi)) return kInf;
  return std::max(hi / key - 1.0, 1.0 - lo / key);
}

double rescale_steps(const RowScale& s, const NumericsContract& c) {
  const double online = c.online_ids > 0 ? std::ceil(double(std::max<std::int64_t>(s.vocab, 1)) / c.online_ids) : 0.0;
  return double(std::max(c.rescales, 0)) + online;
}

double exponent_error(double x, const RowScale& s, const NumericsContract& c) {
  const double u = kUnitRoundoff;
  const double r_inv = relative_error(c.div_ulp);  // inv_t = fl(1 / t), or the division by t
  // fl(fl(a - b) * inv_t), or fl(fl(a - b) / t) for a sampler that divides (one rounding fewer).
  const double g = c.scale_divides ? (1 + u) * (1 + r_inv) - 1 : (1 + u) * (1 + r_inv) * (1 + u) - 1;
  const double dist = std::abs(x - s.row_max) / s.t;     // |x - M| / t
  if (c.order == ScalingOrder::post) {
    // Stage 1 rounds (x - m_t) * inv_t, each rescale (m_old - m_new) * inv_t;
    // since x <= m_t <= ... <= M the distances add up to |x - M| whatever the
    // tiling and however many rescales.
    return g * dist * kSafety;
  }
  // Pre-scale: xs = fl(x * inv_t) and ms = fl(m_t * inv_t) each carry g2 |.|/t,
  // their difference one more rounding (an online max's differences of scaled
  // maxima telescope into it), then the rescale as above.
  // m_t is somewhere in [x, M], so |m_t| <= max(|x|, |M|).
  const double g2 = c.scale_divides ? r_inv : (1 + r_inv) * (1 + u) - 1;  // fl(x / t) or fl(x * inv_t)
  const double big = std::max(std::abs(x), std::abs(s.row_max));
  const double scaled = g2 * (std::abs(x) + big) / s.t;
  double err = scaled * (1 + u) + u * dist;
  if (rescale_steps(s, c) > 0) err += g * dist;
  return err * kSafety;
}

double log_score_error(double x, float noise, const RowScale& s, const NumericsContract& c) {
  const double u = kUnitRoundoff, ub = c.key_bf16 ? kBf16UnitRoundoff : 0.0;
  const double r_inv = relative_error(c.div_ulp), r_log = relative_error(c.log_ulp);
  // The scaled logit a: post fl(fl(x - M) op t), pre fl(x op t), as in exponent_error.
  const bool post = c.order == ScalingOrder::post;
  const double g = post ? (c.scale_divides ? (1 + u) * (1 + r_inv) - 1 : (1 + u) * (1 + r_inv) * (1 + u) - 1)
                        : (c.scale_divides ? r_inv : (1 + r_inv) * (1 + u) - 1);
  const double a = (post ? std::abs(x - s.row_max) : std::abs(x)) / s.t;
  double a_err = g * a + ub * a * (1 + g);  // a bf16 sum takes a rounded to bf16 first
  const double a_mag = a * (1 + g) * (1 + ub);
  // -logf(fl(E + eps)): fl(E + eps) is within u of den, which moves log by at
  // most -log(1 - u) < 2u; logf is within r_log of its own result.
  const double L = std::abs(std::log(double(noise) + double(s.eps)));
  double n_err = r_log * (L + 2 * u) + 2 * u;
  double n_mag = L + n_err;
  n_err += ub * n_mag;  // bf16: the noise term rounded before the sum
  n_mag *= 1 + ub;
  // The sum, rounded in fp32, then (bf16) to bf16 again.
  const double sum_round = c.key_bf16 ? ub * (1 + u) + u : u;
  return (a_err + n_err + sum_round * (a_mag + n_mag) + 0x1p-126) * kSafety;  // 2^-126: a subnormal x / t
}

RoundingFactors rounding_factors(const RowScale& s, const NumericsContract& c) {
  if (c.domain == race::KeyDomain::log) return {kSafety, 1 / kSafety};  // all in log_score_error
  const double u = kUnitRoundoff;
  const double r_exp = relative_error(c.exp_ulp);
  const double r_div = relative_error(c.div_ulp);
  const double steps = rescale_steps(s, c);
  const double r_res = relative_error(c.rescale_ulp);
  const double r_e = noise_error(c);
  const double r_key = c.key_reciprocal ? u : 0.0;  // w * fl(1 / den): the multiply's rounding beside the reciprocal's
  const double r_cmp = c.key_bf16 ? kBf16UnitRoundoff : 0.0;  // the key rounded to bf16 before it is compared
  const double r_norm = c.normalises ? r_div : 0.0;           // w / S: one more division
  // exp, each rescale's exp and multiply, the division (or reciprocal and
  // multiply); den = fl(E' + eps) carries u, E' (drawn noise) carries r_e of E
  // and so of E + eps, and the key divides by den; then bf16 rounding.
  const double up = (1 + r_exp) * std::pow((1 + r_res) * (1 + u), steps) * (1 + r_div) * (1 + r_key) * (1 + r_cmp) * (1 + r_norm);
  const double down = (1 - r_exp) * std::pow((1 - r_res) * (1 - u), steps) * (1 - r_div) * (1 - r_key) * (1 - r_cmp) * (1 - r_norm);
  return {up / ((1 - u) * (1 - r_e)) * kSafety, down / ((1 + u) * (1 + r_e)) / kSafety};
}

double absolute_error(double den, const RowScale& s, const NumericsContract& c) {
  if (c.domain == race::KeyDomain::log) return 0;  // nothing is exponentiated: nothing underflows
  // Each of exp, '/', each rescale's exp and multiply may land below the
  // normal range and be flushed (GPU FTZ) or rounded as a subnormal; an error
  // in the stage-1 exp reaches the key divided by the computed den; later
  // rescales only shrink an earlier flush. The reciprocal form's multiply, a
  // bf16 rounding and a normalising division may each flush once more.
  const double steps = rescale_steps(s, c);
  const double ops = 2 + std::max(steps - 1, 0.0) + (c.key_reciprocal ? 1 : 0) + (c.key_bf16 ? 1 : 0) + (c.normalises ? 1 : 0);
  const double low = den_low(den, den - double(s.eps), c);
  if (!(low > 0)) return kInf;  // the kernel's E + eps may reach 0
  const double a = ops * kFlushThreshold * (1 + 1 / low) * kSafety;
  if (!c.normalises) return a;
  // The sampler ranks w / S: its flushes are S times larger in the key's units.
  // S is a sum of at most V terms, each at most 1 within the exp's and the
  // rescales' error, rounded V times.
  const double V = double(std::max<std::int64_t>(s.vocab, 1)), u = kUnitRoundoff;
  const double term = (1 + relative_error(c.exp_ulp)) * std::pow((1 + relative_error(c.rescale_ulp)) * (1 + u), steps);
  return a * V * term * std::exp(1.01 * V * u);
}

bool prescale_overflows(double x, const RowScale& s) {
  return std::max(std::abs(x), std::abs(s.row_max)) / s.t * (1 + 4 * kUnitRoundoff) >= double(FLT_MAX);
}

RoundingFactors key_factors(double x, float noise, const RowScale& s, const NumericsContract& c) {
  // Pre-scale overflows when |x| / t leaves fp32: the key is then meaningless.
  if (c.order == ScalingOrder::pre && prescale_overflows(x, s)) return {kInf, 0.0};
  const RoundingFactors f = rounding_factors(s, c);
  const double delta = c.domain == race::KeyDomain::log ? log_score_error(x, noise, s, c) : exponent_error(x, s, c);
  // Beyond e^100 the interval says nothing, and the double key it multiplies may underflow.
  if (!(delta <= 100)) return {kInf, 0.0};
  RoundingFactors out{std::exp(delta) * f.up, std::exp(-delta) * f.down};
  // The log domain's row-wide factors leave the noise out (rounding_factors): its relative part here.
  if (const double r = noise_error(c); c.domain == race::KeyDomain::log && r > 0) out = {out.up / (1 - r), out.down / (1 + r)};
  // A fast log's absolute error a on a small E (oracle/ERROR_MODEL.md, "A replayed
  // stream's transform"): den' >= den (1 - r) - a, den' <= den (1 + r) + a.
  if (const double a = noise_abs_of(double(noise), c); a > 0) {
    const double den = double(noise) + double(s.eps), r = noise_error(c);
    const double low = den * (1 - r) - a;
    if (!(low > 0)) return {kInf, 0.0};  // den' may be 0 or negative: the key anything from -inf to +inf
    out.up = out.up * den * (1 - r) / low * kSafety;
    out.down = out.down * den * (1 + r) / (den * (1 + r) + a) / kSafety;
  }
  return out;
}

double exact_key(double x, float noise, const RowScale& s) {
  return std::exp((x - s.row_max) / s.t) / (double(noise) + double(s.eps));
}

KeyBound bound_key(double x, float noise, const RowScale& s, const NumericsContract& c) {
  KeyBound b;
  if (x == -kInf) return b;  // masked: exp(-inf) = 0 exactly in fp32 as in double
  const double den = double(noise) + double(s.eps);
  b.key = exact_key(x, noise, s);
  const RoundingFactors f = key_factors(x, noise, s, c);
  if (std::isinf(f.up)) {
    b.hi = kInf;
    return b;
  }
  if (c.domain == race::KeyDomain::log) {  // scores: no flush, no reciprocal, no overflow below |x| / t's
    b.hi = b.key * f.up;
    b.lo = b.key * f.down;
    return b;
  }
  const double abs_err = absolute_error(den, s, c);
  // fl(1 / den) overflows to inf below den = 2^-128: the key is then inf or NaN.
  if (c.key_reciprocal && den * (1 - 2 * kUnitRoundoff) <= 1.0 / double(FLT_MAX)) {
    b.hi = kInf;
    return b;
  }
  b.hi = b.key * f.up + abs_err;
  b.lo = std::max(0.0, b.key * f.down - abs_err);
  if (b.hi >= (c.key_bf16 ? kBf16Max : double(FLT_MAX))) b.hi = kInf;  // a key may overflow to inf
  return b;
}

double tolerated_gap(double x_i, float e_i, double x_j, float e_j, const RowScale& s, const NumericsContract& c) {
  const double den_i = double(e_i) + double(s.eps);
  const double k_i = exact_key(x_i, e_i, s);
  if (!(k_i > 0)) return 1;
  // j may outrank i iff k_j up_j + abs_j >= k_i down_i - abs_i; with k_j near
  // k_i the absolute terms weigh as they do at k_i.
  const RoundingFactors fi = key_factors(x_i, e_i, s, c), fj = key_factors(x_j, e_j, s, c);
  const double low_i = fi.down - absolute_error(den_i, s, c) / k_i;
  const double high_j = fj.up + absolute_error(double(e_j) + double(s.eps), s, c) / k_i;
  return std::clamp(1 - low_i / high_j, 0.0, 1.0);
}

}  // namespace raceoracle::oracle

namespace raceoracle::oracle {
KeyBound bound_stage1_key(float x, float noise, float tile_max, float T, float eps, NumericsContract c) {
  c.rescales = 0;
  c.online_ids = 0;
  return bound_key(x, noise, RowScale{double(tile_max), double(race::clamp_temperature(T)), eps, 1}, c);
}

double error_ratio(const KeyBound& kb, double actual) {
  // Keys far below 2^-126 / den are dominated by the absolute (flush) term.
  if (!(kb.key > 1e-30) || !std::isfinite(kb.hi) || !(kb.rho() > 0)) return 0;
  return std::abs(actual / kb.key - 1) / kb.rho();
}

}  // namespace raceoracle::oracle
