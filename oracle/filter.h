#pragma once
/// The filters of SPEC §9 in float64: a row's kept set under the declared
/// semantics, and the ids whose membership fp32 arithmetic may legitimately
/// flip (the boundary). The derivation is oracle/ERROR_MODEL.md, "The
/// filters' boundary".
#include <cstdint>
#include <vector>

#include "oracle/error_model.h"
#include "race/filters.h"

namespace raceoracle::oracle {

using race::FilterSemantics;
using race::RowFilter;

struct KeptSet {
  std::vector<std::uint8_t> kept;      ///< per id: in the definition's kept set
  std::vector<std::int64_t> boundary;  ///< ids whose membership fp32 may flip, ascending
  std::int64_t kept_count = 0;
  /// Top-p only, per id: the exact mass before it (normalised as the semantics
  /// say) and the interval the sampler's computed mass before it must lie in;
  /// empty when top-p is off. What the soundness tests measure against.
  std::vector<double> ahead, ahead_lo, ahead_hi;
};

/// The kept set of a sampling row (finite or -inf logits, `s` its scale):
/// top-k, top-p and min-p of `f` intersected, each under `c.filters`; -inf ids
/// are never kept. `f` must be filter_valid.
KeptSet kept_set(const RowView& row, const RowFilter& f, const RowScale& s, const NumericsContract& c);

}  // namespace raceoracle::oracle
