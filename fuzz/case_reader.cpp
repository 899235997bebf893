// Fuzz target: a regression-corpus case (JSON), as `replay --case` and the
// property runner read it. Malformed text must be a std::runtime_error; a
// case that parses must materialize (within a size the fuzzer can afford) and
// write back to the same JSON.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>

#include "fixtures/case.h"

namespace fx = raceoracle::fixtures;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fx::CaseSpec c;
  try {
    c = fx::case_from_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const std::runtime_error&) {
    return 0;
  }
  const std::string json = fx::to_json(c);
  if (fx::to_json(fx::case_from_json(json)) != json) __builtin_trap();
  std::int64_t elements = 0;
  for (std::size_t r = 0; r < c.rows.size(); ++r) elements += std::int64_t(c.vocab) + c.logit_pad + c.noise_pad;
  if (elements > (1 << 16) || c.rows.size() > 64) return 0;  // cost, not validity
  try {
    const raceoracle::subject::Batch b = fx::materialize(c);
    if (b.rows != std::int64_t(std::max<std::size_t>(1, c.rows.size())) || b.vocab != c.vocab) __builtin_trap();
  } catch (const std::exception&) {  // refused with a message
  }
  return 0;
}
