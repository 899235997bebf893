#pragma once
/// bf16, the production logit storage: the upper 16 bits of an fp32. Host
/// code only (device code widens with its own intrinsics, kernels/race.h).
#include <bit>
#include <cstdint>

namespace raceoracle::race {

/// Exact: every bf16 is an fp32.
inline float widen_bf16(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

/// Round to nearest even; a NaN stays a (quiet) NaN.
inline std::uint16_t round_to_bf16(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if (f != f) return std::uint16_t((u >> 16) | 0x40);
  return std::uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

}  // namespace raceoracle::race
