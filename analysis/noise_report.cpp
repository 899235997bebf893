#include "analysis/noise_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace raceoracle::analysis {
namespace {

constexpr int kBodyBins = 64;       ///< equiprobable bins in the body
constexpr double kMinExpected = 20; ///< bins are merged until each expects this many draws
constexpr int kResolutionBits = 24; ///< fp32's significand: the finest uniform a generator draws

/// P(a <= E < b) for E ~ Exp(1), accurate in both tails.
double probability(double a, double b) {
  if (std::isinf(b)) return std::exp(-a);
  return std::exp(-a) * -std::expm1(-(b - a));
}

}  // namespace

NoiseTally::NoiseTally() {
  // In S = exp(-E) (uniform on (0, 1] for Exp(1)): the lower tail at
  // S = 1 - 2^-k for k = 24 .. 7, 64 equal-probability body bins, the upper
  // tail at S = 2^-k for k = 7 .. 24, and one last bin beyond. Every edge is
  // a multiple of 2^-24, so an Exp(1) generator built on a 24-bit uniform
  // puts exactly the Exp(1) mass in each bin, and nothing finer than fp32
  // resolves is tested (docs/DIVERGENCE.md, "The noise").
  std::vector<double> e;
  for (int k = kResolutionBits; k >= 7; --k) {
    e.push_back(-std::log1p(-std::ldexp(1.0, -k)));
    level_.push_back(-k);
  }
  for (int i = 1; i < kBodyBins; ++i) {
    e.push_back(-std::log1p(-double(i) / kBodyBins));
    level_.push_back(0);
  }
  for (int k = 7; k <= kResolutionBits; ++k) {
    e.push_back(k * std::log(2.0));
    level_.push_back(k);
  }
  // A generator's fp32 draw at an edge may round a few ulps below it:
  // lower each edge by 4 ulps so a draw on the edge stays in its bin.
  edges_.push_back(0);
  level_.insert(level_.begin(), 0);
  for (double x : e) {
    float f = float(x);
    for (int n = 0; n < 4; ++n) f = std::nextafter(f, 0.0f);
    edges_.push_back(double(f));
  }
  counts_.assign(edges_.size(), 0);
  edges_f_.assign(edges_.begin(), edges_.end());  // fp32 values, exactly
  for (std::uint32_t k = 0; k < first_bin_.size(); ++k) {
    const float lowest = std::bit_cast<float>(k << 16);
    first_bin_[k] = std::uint8_t(std::upper_bound(edges_f_.begin(), edges_f_.end(), lowest) - edges_f_.begin() - 1);
  }
  r_.min_positive = std::numeric_limits<double>::infinity();
}

void NoiseTally::add(const float* noise, std::int64_t n) {
  float lo = float(r_.min_positive), hi = float(r_.max_finite);
  const std::size_t last = edges_.size() - 1;
  for (std::int64_t i = 0; i < n; ++i) {
    const float e = noise[i];
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(e), mag = bits & 0x7fffffffu;
    if (mag > 0x7f800000u || (bits >> 31 && mag != 0)) {  // NaN or negative (-0 is a zero)
      ++r_.invalid;
      continue;
    }
    if (mag == 0x7f800000u) {
      ++r_.infinite;
      continue;
    }
    if (mag == 0) ++r_.zeros;
    else lo = std::min(lo, e);
    hi = std::max(hi, e);
    // The bin of the smallest float sharing e's upper 16 bits, then the few
    // edges inside that range: the bin of upper_bound(edges, e) - 1.
    std::size_t b = first_bin_[mag >> 16];
    while (b < last && e >= edges_f_[b + 1]) ++b;
    ++counts_[b];
  }
  r_.draws += n;
  r_.min_positive = lo;
  r_.max_finite = hi;
}

void NoiseTally::merge(const NoiseTally& o) {
  for (std::size_t b = 0; b < counts_.size(); ++b) counts_[b] += o.counts_[b];
  r_.draws += o.r_.draws;
  r_.zeros += o.r_.zeros;
  r_.infinite += o.r_.infinite;
  r_.invalid += o.r_.invalid;
  r_.min_positive = std::min(r_.min_positive, o.r_.min_positive);
  r_.max_finite = std::max(r_.max_finite, o.r_.max_finite);
}

nlohmann::json NoiseTally::state() const {
  // min_positive is +inf until a positive draw is seen: JSON has no inf, so it goes as null.
  return {{"bins", counts_},           {"draws", r_.draws},     {"zeros", r_.zeros},
          {"infinite", r_.infinite},   {"invalid", r_.invalid},
          {"min_positive", std::isfinite(r_.min_positive) ? nlohmann::json(r_.min_positive) : nlohmann::json()},
          {"max_finite", r_.max_finite}};
}

NoiseTally NoiseTally::from_state(const nlohmann::json& j) {
  NoiseTally t;
  try {
    const auto bins = j.at("bins").get<std::vector<std::int64_t>>();
    if (bins.size() != t.counts_.size())
      throw std::invalid_argument("noise: " + std::to_string(bins.size()) + " bins where this version has " +
                                  std::to_string(t.counts_.size()));
    t.counts_ = bins;
    t.r_.draws = j.at("draws").get<std::int64_t>();
    t.r_.zeros = j.at("zeros").get<std::int64_t>();
    t.r_.infinite = j.at("infinite").get<std::int64_t>();
    t.r_.invalid = j.at("invalid").get<std::int64_t>();
    if (!j.at("min_positive").is_null()) t.r_.min_positive = j.at("min_positive").get<double>();
    t.r_.max_finite = j.at("max_finite").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("noise: ") + e.what());
  }
  return t;
}

NoiseReport NoiseTally::finish() const {
  NoiseReport r = r_;
  if (!std::isfinite(r.min_positive)) r.min_positive = 0;
  r.expected_max = r.draws > 0 ? std::log(double(r.draws)) + 0.5772156649015329 : 0;
  const std::int64_t finite = r.draws - r.infinite - r.invalid;
  if (finite < std::int64_t(kMinExpected) * 5) return r;
  // The two extreme bins (S near 0 and near 1) hold at least 16 n 2^-26 cells
  // of the 2^-24 lattice: a generator's uniform may round half a cell either
  // way there, which then adds at most 1/16 to chi-squared at any n.
  const int finest = std::clamp(int(std::floor(46 - std::log2(double(finite)))), 7, kResolutionBits);
  // Merge adjacent bins until each expects kMinExpected draws; a short
  // remainder joins the group before it.
  struct Group { double a, b, expected; std::int64_t observed; };
  std::vector<Group> groups;
  Group g{edges_[0], 0, 0, 0};
  for (std::size_t i = 0; i < edges_.size(); ++i) {
    const double b = i + 1 < edges_.size() ? edges_[i + 1] : std::numeric_limits<double>::infinity();
    g.b = b;
    g.expected += double(finite) * probability(edges_[i], b);
    g.observed += counts_[i];
    const bool next_edge_too_fine = i + 1 < edges_.size() && std::abs(level_[i + 1]) > finest;
    const bool in_upper_tail = i + 1 < edges_.size() && level_[i + 1] > 0;
    if (next_edge_too_fine && in_upper_tail) {  // the rest of the upper tail is one bin
      for (std::size_t j = i + 1; j < edges_.size(); ++j) g.observed += counts_[j];
      g.b = std::numeric_limits<double>::infinity();
      g.expected = double(finite) * probability(g.a, g.b);
      groups.push_back(g);
      g = Group{g.b, g.b, 0, 0};
      break;
    }
    if (g.expected >= kMinExpected && !next_edge_too_fine) {
      groups.push_back(g);
      g = Group{b, b, 0, 0};
    }
  }
  if ((g.expected > 0 || g.observed > 0) && !groups.empty()) {
    groups.back().b = g.b;
    groups.back().expected += g.expected;
    groups.back().observed += g.observed;
  }
  double worst = -1;
  for (const Group& gr : groups) {
    const double d = double(gr.observed) - gr.expected, term = d * d / gr.expected;
    r.chi_squared += term;
    if (term > worst) {
      worst = term;
      r.worst_bin = fmt::format("E in [{:.4g}, {:.4g}): {} observed, {:.1f} expected", gr.a, gr.b, gr.observed, gr.expected);
    }
  }
  r.dof = int(groups.size()) - 1;
  r.p_value = boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(r.dof), r.chi_squared));
  return r;
}

std::string NoiseReport::describe() const {
  std::string s = fmt::format(
      "noise: {} draws, smallest {:.3g}, largest {:.4g} (Exp(1) expects ~{:.3g} for this many; a 24-bit uniform stops at "
      "{:.4g}), {} zero, {} infinite, {} NaN or negative\n",
      draws, min_positive, max_finite, expected_max, kFp32UniformMaxDraw, zeros, infinite, invalid);
  if (!tested()) return s + "noise: too few finite draws for a goodness-of-fit test\n";
  return s + fmt::format("noise: Exp(1) goodness of fit: chi-squared {:.1f} on {} dof, p = {:.3g}{}; largest term: {}\n",
                         chi_squared, dof, p_value, p_value < 1e-3 ? " -- NOT Exp(1)" : "", worst_bin);
}

nlohmann::json to_json(const NoiseReport& n) {
  return {{"draws", n.draws}, {"zeros", n.zeros}, {"infinite", n.infinite}, {"nan_or_negative", n.invalid},
          {"min_positive", n.min_positive}, {"max_finite", n.max_finite}, {"expected_max", n.expected_max},
          {"chi_squared", n.chi_squared}, {"dof", n.dof}, {"p_value", n.p_value}, {"worst_bin", n.worst_bin}};
}

}  // namespace raceoracle::analysis
