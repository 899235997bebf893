#include "oracle/drawn_noise.h"

#include <Random123/philox.h>

#include <cmath>

#include "race/noise.h"

namespace raceoracle::oracle {

std::uint32_t drawn_word(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t id) {
  const race::PhiloxInput in = race::philox_input(seed, offset, row, id / race::kIdsPerPhiloxCall);
  const r123::Philox4x32_R<10>::ctr_type c = {{in.counter[0], in.counter[1], in.counter[2], in.counter[3]}};
  const r123::Philox4x32_R<10>::key_type k = {{in.key[0], in.key[1]}};
  return r123::Philox4x32_R<10>{}(c, k)[id % race::kIdsPerPhiloxCall];
}

double exponential_of(std::uint32_t word) { return -std::log(double(race::uniform_of(word))); }

double drawn_noise(std::uint64_t seed, std::uint64_t offset, std::uint32_t row, std::uint32_t id) {
  return exponential_of(drawn_word(seed, offset, row, id));
}

}  // namespace raceoracle::oracle
