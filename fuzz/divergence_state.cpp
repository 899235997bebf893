// Fuzz target: a divergence shard's state as `raceoracle merge` reads it
// (analysis/divergence_state.h). Every input must end in a state or a
// SafetensorsError / std::invalid_argument naming the problem; a state it
// accepts must finish into tables without a crash, one row per temperature
// and order, each counting the rows its tally holds.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "analysis/divergence_state.h"
#include "protocol/safetensors.h"

namespace ro = raceoracle;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ro::analysis::DivergenceState s;
  try {
    s = ro::analysis::parse_state(ro::protocol::parse_safetensors(data, size));
  } catch (const ro::protocol::SafetensorsError&) {
    return 0;  // refused, with a message: the reader did its job
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const ro::analysis::DivergenceResult r = ro::analysis::finish(s);
  if (r.rows.size() != 2 * s.temperatures.size()) __builtin_trap();
  for (const auto& row : r.rows)
    if (row.rate.rows != row.rows) __builtin_trap();
  return 0;
}
