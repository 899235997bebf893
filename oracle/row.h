#pragma once
/// The inputs of the exponential race, as the oracle reads them (SPEC §1).
/// Views only: the oracle never owns or copies a batch.
#include <cstdint>
#include <limits>
#include <string>

#include "race/definition.h"

namespace raceoracle::oracle {

/// float64's infinity, the oracle's: named once for the oracle's files.
inline constexpr double kInf = std::numeric_limits<double>::infinity();

using race::Dtype;
using race::RaceConstants;
using race::size_of;
using race::to_string;

/// One row: `vocab` logits of `dtype`, `vocab` fp32 noise draws, one temperature.
struct RowView {
  const void* logits = nullptr;
  Dtype dtype = Dtype::f32;
  const float* noise = nullptr;
  std::int64_t vocab = 0;
  float temperature = 0.0f;
  const race::RowFilter* filter = nullptr;  ///< its filters (SPEC §9); nullptr: none

  double logit(std::int64_t i) const;  ///< widened exactly
};

/// A batch `[rows, vocab]` with 64-bit row strides in elements. `noise_stride`
/// may be 0: one noise row shared by every row (what `verify` accepts as [1, V]).
struct BatchView {
  const void* logits = nullptr;
  Dtype dtype = Dtype::f32;
  std::int64_t rows = 0;
  std::int64_t vocab = 0;
  std::int64_t logit_stride = 0;
  const float* noise = nullptr;
  std::int64_t noise_stride = 0;
  const float* temperatures = nullptr;
  const race::RowFilter* filters = nullptr;  ///< [rows], or nullptr: no row filters

  RowView row(std::int64_t r) const;
};

/// Throws std::invalid_argument naming the offending field when the shape,
/// strides or pointers of `b` cannot describe a batch.
void validate(const BatchView& b);

}  // namespace raceoracle::oracle
