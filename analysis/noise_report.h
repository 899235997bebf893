#pragma once
/// What the noise feeding a race looks like against Exp(1) and against fp32's
/// resolution: extremes, zeros, infinities, and a chi-squared goodness-of-fit
/// test whose bins reach far into both tails, so that a generator which
/// truncates the tail (a uniform clamped away from 0) or piles draws on a
/// floor is visible. Bins and thresholds: docs/DIVERGENCE.md, "The noise".
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace raceoracle::analysis {

/// An Exp(1) draw made as -log(u) from a uniform u with 24 random bits stops
/// here: u >= 2^-24.
inline constexpr double kFp32UniformMaxDraw = 16.635532333438686;  // 24 ln 2

struct NoiseReport {
  std::int64_t draws = 0;     ///< every value read
  std::int64_t zeros = 0;     ///< legal draws; Exp(1) gives fewer than 1e-38 of them
  std::int64_t infinite = 0;  ///< +inf: out of contract for sampling rows
  std::int64_t invalid = 0;   ///< NaN or negative
  double min_positive = 0, max_finite = 0;
  double expected_max = 0;    ///< of `draws` Exp(1) draws: ln n + Euler's gamma
  double chi_squared = 0;
  int dof = 0;                ///< 0: too few finite draws for the test
  double p_value = 1;         ///< of Exp(1) for the finite draws
  std::string worst_bin;      ///< the bin that adds most to chi-squared, readable
  bool tested() const { return dof > 0; }
  std::string describe() const;  ///< two readable lines
};
/// Every field, named: the `noise` object of verify's and divergence's JSON reports.
nlohmann::json to_json(const NoiseReport& n);

/// Accumulates draws over many batches, then tests them.
class NoiseTally {
 public:
  NoiseTally();
  void add(const float* noise, std::int64_t n);
  /// Another tally's draws added to this one's: the tally of both.
  void merge(const NoiseTally& o);
  NoiseReport finish() const;
  /// The counts as named fields, and back (std::invalid_argument on a field
  /// missing or of the wrong size): a divergence shard's noise.
  nlohmann::json state() const;
  static NoiseTally from_state(const nlohmann::json& j);

 private:
  std::vector<double> edges_;  ///< bin i is [edges_[i], edges_[i + 1]); the last is [edges_.back(), inf)
  /// k of a tail edge at 2^-k: +k in the upper tail, -k in the lower, 0 in
  /// the body; edges finer than the sample can judge are merged away.
  std::vector<int> level_;
  std::vector<std::int64_t> counts_;
  std::vector<float> edges_f_;  ///< edges_ as fp32 (each is one)
  /// The bin of the smallest finite draw >= 0 whose upper 16 bits are k.
  std::array<std::uint8_t, 0x7f80> first_bin_{};
  NoiseReport r_;
};

}  // namespace raceoracle::analysis
