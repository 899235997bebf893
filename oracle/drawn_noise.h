#pragma once
/// The oracle's copy of drawn noise (race/noise.h): the Philox words from
/// Random123, E = -log(u) in float64. Independent of kernels/philox.h, which
/// computes the same words on the device: the two meet only in the tests.
#include <cstdint>

namespace raceoracle::oracle {

/// Word id % 4 of the Philox call that race::philox_input names for (row, id).
std::uint32_t drawn_word(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t id);

/// E of a Philox word: -log(u) of its uniform, in float64 (u is exact; the
/// log's rounding, 2^-53 relative, is the only error).
double exponential_of(std::uint32_t word);

/// E of (row, id): exponential_of(drawn_word(seed, offset, row, id)).
double drawn_noise(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t id);

}  // namespace raceoracle::oracle
