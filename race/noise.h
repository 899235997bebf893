#pragma once
/// Noise drawn from a counter-based generator instead of read from a tensor
/// (docs/SPEC.md §1, "Drawn noise"): the definition of E for (row, id) given
/// the row's 64-bit seed and 64-bit offset, as newer engines draw it.
///   key     = (lo32(seed), hi32(seed))
///   counter = (id / 4, row, lo32(offset), hi32(offset))
///   w       = word id % 4 of Philox-4x32-10(counter, key)
///   u       = (2 * (w >> 9) + 1) * 2^-24     odd multiples of 2^-24 in (0, 1), exact in fp32
///   E       = -log(u)                        in [2^-24 (1 + 2^-25), 24 ln 2]: never 0, never inf
/// The kernels compute the rounds themselves (kernels/philox.h); the oracle
/// calls Random123 (oracle/drawn_noise.h). Why these choices: docs/DRAWN_NOISE.md.
#include <cstdint>

namespace raceoracle::race {

/// Where a kernel's E comes from: an fp32 tensor it reads, or Philox draws
/// from each row's seed and offset (this file).
enum class NoiseSource : std::uint8_t { tensor, drawn };
inline const char* to_string(NoiseSource n) { return n == NoiseSource::drawn ? "drawn" : "tensor"; }

/// The error of a kernel's fp32 E = -logf(u) against the oracle's, -log(u)
/// rounded to fp32, in ulps: logf's 1 ulp (CUDA, OCML; glibc measured 0.787,
/// DrawnNoise.Fp32ConversionIsWithinOneUlp) + 0.5 for that rounding
/// (NumericsContract::noise_ulp, oracle/ERROR_MODEL.md).
inline constexpr double kDrawnNoiseUlp = 1.5;

/// Ids per Philox call: one 32-bit word each.
inline constexpr int kIdsPerPhiloxCall = 4;

/// One Philox-4x32 input: the call whose words are the noise of ids 4q .. 4q + 3.
struct PhiloxInput {
  std::uint32_t counter[4];
  std::uint32_t key[2];
};

constexpr PhiloxInput philox_input(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t q) {
  return PhiloxInput{{q, row, std::uint32_t(offset), std::uint32_t(offset >> 32)},
                     {std::uint32_t(seed), std::uint32_t(seed >> 32)}};
}

/// A Philox word as a uniform in (0, 1): an odd multiple of 2^-24, 2^23 values, exact in fp32.
constexpr float uniform_of(std::uint32_t w) { return float(2u * (w >> 9) + 1u) * 0x1p-24f; }

}  // namespace raceoracle::race
