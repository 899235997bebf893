#pragma once
/// The speculative-decoding verify step's vocabulary (docs/SPEC.md §11).
/// Header-only, free of dependencies: device code includes it.
#include <cstdint>

namespace raceoracle::race {

/// What a verify request writes after its emitted token: k + 1 ids, a + 1 emitted, then this.
inline constexpr std::int32_t kVerifyPlaceholder = -1;
/// The most drafts one request may carry (vLLM's MAX_SPEC_LEN is 128; a kernel's loop bound).
inline constexpr std::int32_t kMaxDrafts = 128;

/// How a verifying sampler computes what SPEC §11 leaves to arithmetic,
/// declared so that it is judged by what it does. The defaults are vLLM's.
struct VerifyRules {
  /// The acceptance compares the ratio with u rounded to fp32 (false: with the float64 u, as vLLM does).
  bool uniform_f32 = false;
  constexpr bool operator==(const VerifyRules& o) const { return uniform_f32 == o.uniform_f32; }
  constexpr bool operator!=(const VerifyRules& o) const { return !(*this == o); }
};

}  // namespace raceoracle::race
