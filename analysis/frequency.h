#pragma once
/// The frequency law: a sampler that draws its own randomness is judged by
/// the counts of its tokens against each row's exact distribution
/// (oracle/distribution.h), sequentially, at a family-wise false-alarm rate
/// that holds at every sample size; and it says what it could have seen.
/// The method and its derivations: analysis/FREQUENCY.md.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/distribution.h"

namespace raceoracle::analysis {

struct FrequencySettings {
  double alpha = 1e-6;                  ///< family-wise false-alarm rate of the whole run
  std::int64_t draws = 1 << 20;         ///< the most draws per row (the last look)
  std::int64_t first_look = 1 << 12;    ///< draws at the first look; each next one has 4x
  double min_expected = 16;             ///< a bin's least expected count (ids below are merged)
  double power = 0.99;                  ///< the detection probability the power report is at
  /// Stop at the first look where every sampling row would see a binned
  /// total-variation distance of `resolution` (0: run to `draws`).
  double resolution = 0;
  bool operator==(const FrequencySettings&) const = default;
};
/// The settings as JSON and back (every field named; a missing one keeps its
/// default; std::invalid_argument for a malformed or out-of-range one).
nlohmann::json to_json(const FrequencySettings& s);
FrequencySettings settings_from_json(const nlohmann::json& j);
/// Throws std::invalid_argument naming the first field out of its range.
void check(const FrequencySettings& s);


/// What one look could see on one row: with probability `power`, a binned
/// total-variation distance of `tv` from the null's band, and a single id
/// whose probability is off by a relative `up` (more likely) or `down`
/// (less; +inf: no count could show it), the worst id of each decade.
struct Decade {
  int exponent = 0;            ///< ids with p in [10^exponent, 10^(exponent+1))
  std::int64_t ids = 0;
  double up = 0, down = 0;
};
struct RowPower {
  double tv = 0;
  std::vector<Decade> decades;  ///< largest probabilities first
};

struct RowResult {
  std::int64_t row = 0;
  oracle::RowClass row_class = oracle::RowClass::sampling;
  std::int64_t n = 0;           ///< draws counted
  std::int64_t bins = 0;        ///< at the last look
  double statistic = 0;         ///< n KL(p_hat || band) at the last look
  double threshold = 0;         ///< the G test's rejection threshold there
  bool failed = false;
  std::string failure;          ///< what was seen, with the evidence
  RowPower power;               ///< at the last look (sampling rows)
};

struct FrequencyReport {
  bool passed = true;
  std::int64_t draws = 0;       ///< per row, at the last look
  int looks = 0, planned_looks = 0;
  double alpha = 0;
  std::vector<RowResult> rows;
  /// Pairs of rows whose tokens agree more often than independent draws
  /// could (noise shared between rows), one line each.
  std::vector<std::string> shared_noise;
};

/// Draws `m` more tokens for every row: row-major, rows x m.
using DrawFn = std::function<std::vector<std::int64_t>(std::int64_t m)>;

/// Runs the law on `rows` (each row's distribution) with tokens from `draw`.
FrequencyReport frequency_test(const std::vector<oracle::Distribution>& rows, std::int64_t vocab, const DrawFn& draw,
                               const FrequencySettings& s = {});

/// The report as JSON: verdict, each row's result and power (+inf as null).
nlohmann::json to_json(const FrequencyReport& r);
/// A readable account: verdict, the draws, each failure, the power table.
std::string describe(const FrequencyReport& r);

}  // namespace raceoracle::analysis
