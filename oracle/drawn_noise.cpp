#include "oracle/drawn_noise.h"

#include <Random123/philox.h>

#include <cmath>

#include "race/noise.h"

namespace raceoracle::oracle {

namespace {
using Philox = r123::Philox4x32_R<10>;
Philox::ctr_type philox_call(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t q) {
  const race::PhiloxInput in = race::philox_input(seed, offset, row, q);
  const Philox::ctr_type c = {{in.counter[0], in.counter[1], in.counter[2], in.counter[3]}};
  const Philox::key_type k = {{in.key[0], in.key[1]}};
  return Philox{}(c, k);
}
}  // namespace

std::uint32_t drawn_word(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t id) {
  return philox_call(seed, offset, row, id / race::kIdsPerPhiloxCall)[id % race::kIdsPerPhiloxCall];
}

double exponential_of(std::uint32_t word) { return -std::log(double(race::uniform_of(word))); }

double drawn_noise(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t id) {
  return exponential_of(drawn_word(seed, offset, row, id));
}


void drawn_noise_row(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::int64_t vocab, float* out) {
  constexpr int kPer = race::kIdsPerPhiloxCall;
  for (std::int64_t q = 0; q * kPer < vocab; ++q) {
    const Philox::ctr_type w = philox_call(seed, offset, row, std::uint32_t(q));
    for (std::int64_t k = 0; k < kPer && q * kPer + k < vocab; ++k) out[q * kPer + k] = float(exponential_of(w[k]));
  }
}

}  // namespace raceoracle::oracle
