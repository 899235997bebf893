#pragma once
/// The filtered race's vocabulary (docs/SPEC.md §9): a row's top-k, top-p and
/// min-p, and the semantics a sampler declares where the field's engines
/// differ. Header-only, free of dependencies: device code includes it.
#include <cstdint>

namespace raceoracle::race {

/// One row's filters, applied to softmax(x / t) before the race. Each is off
/// at its neutral value: top_k <= 0, top_p >= 1, min_p == 0.
struct RowFilter {
  std::int32_t top_k = 0;  ///< keep the k most probable ids (ties: FilterSemantics::top_k_ties)
  float top_p = 1.0f;      ///< keep the most probable ids while the mass before them is < top_p
  float min_p = 0.0f;      ///< keep ids with p >= min_p * max p
  constexpr bool operator==(const RowFilter& o) const { return top_k == o.top_k && top_p == o.top_p && min_p == o.min_p; }
};

constexpr bool top_k_on(const RowFilter& f, std::int64_t vocab) { return f.top_k > 0 && f.top_k < vocab; }
constexpr bool top_p_on(const RowFilter& f) { return !(f.top_p >= 1.0f); }  // a NaN is "on", and invalid
constexpr bool min_p_on(const RowFilter& f) { return !(f.min_p == 0.0f); }
/// Whether any filter can drop an id of a row of `vocab` ids.
constexpr bool filtered(const RowFilter& f, std::int64_t vocab) { return top_k_on(f, vocab) || top_p_on(f) || min_p_on(f); }
/// In the definition's domain: top_p in (0, 1] (>= 1 is off), min_p in [0, 1]; NaN neither.
constexpr bool filter_valid(const RowFilter& f) { return f.top_p > 0.0f && f.min_p >= 0.0f && f.min_p <= 1.0f; }

/// Which ids top-k keeps at a tie at the k-th value: every tied id (vLLM's
/// PyTorch path), or exactly k, the lowest ids first (its Triton path).
enum class TopKTies : std::uint8_t { keep_all, exactly_k };
/// What top-p measures: the mass of the original distribution ("joint":
/// FlashInfer, aiter), or of the distribution renormalised over the top-k set
/// ("top-k first": vLLM, TensorRT-LLM).
enum class TopPMass : std::uint8_t { top_k_first, joint };
/// How ids of equal probability are ordered at a filter's boundary: the
/// lowest id first (the definition), or in any order (a sampler that sorts
/// without a stable id order: its kept set at a tie may differ from the
/// definition's, declared and reported).
enum class TieOrder : std::uint8_t { lowest_id, any };

inline const char* to_string(TopKTies t) { return t == TopKTies::exactly_k ? "exactly_k" : "keep_all"; }
inline const char* to_string(TopPMass m) { return m == TopPMass::joint ? "joint" : "top_k_first"; }
inline const char* to_string(TieOrder o) { return o == TieOrder::any ? "any" : "lowest_id"; }

/// What a filtering sampler declares: the semantics and the numerics of its
/// filters (oracle/ERROR_MODEL.md, "The filters' boundary").
struct FilterSemantics {
  /// The sampler applies each row's top_k, top_p and min_p (a request then
  /// carries them). false: it filters nothing, and is given no filters.
  bool applied = false;
  TopKTies top_k_ties = TopKTies::keep_all;
  TopPMass top_p_mass = TopPMass::top_k_first;
  TieOrder tie_order = TieOrder::lowest_id;
  /// The most fp32 additions on the path of any sum the filter computes (the
  /// softmax's sum, a cumulative sum, a pivot's mass): V - 1 for a sequential
  /// scan, about log2(V) for a tree. 0: not stated, V (any order).
  std::int32_t sum_depth = 0;
  constexpr bool operator==(const FilterSemantics& o) const {
    return applied == o.applied && top_k_ties == o.top_k_ties && top_p_mass == o.top_p_mass && tie_order == o.tie_order && sum_depth == o.sum_depth;
  }
  constexpr bool operator!=(const FilterSemantics& o) const { return !(*this == o); }
};

}  // namespace raceoracle::race
