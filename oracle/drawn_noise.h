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

/// The noise tensor a kernel that draws its noise is judged with: E of ids
/// 0 .. vocab - 1 of `row`, each rounded to the nearest fp32, into `out`.
/// The kernel's own fp32 E differs from it by its logf's error plus that
/// rounding (NumericsContract::noise_ulp, oracle/ERROR_MODEL.md).
void drawn_noise_row(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::int64_t vocab, float* out);

}  // namespace raceoracle::oracle
