// Fuzz target: bytes a sampler writes back to raceoracle, parsed as every
// safetensors message is (header length, header, data), then read as a hello
// and as a reply to request 7 on 3 rows of 5 ids. Nothing may crash; a reply
// read as tokens must hold exactly the rows asked for (and an echoed noise, 3 x 5).
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "protocol/external_sampler.h"
#include "protocol/safetensors.h"

namespace ro = raceoracle;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ro::protocol::Safetensors msg;
  try {
    msg = ro::protocol::parse_safetensors(data, size);  // the checks the channel applies to each message
  } catch (const ro::protocol::SafetensorsError&) {
    return 0;
  }
  try {
    (void)ro::protocol::read_hello(msg, {});
  } catch (const ro::protocol::Breakdown&) {
  } catch (const std::invalid_argument&) {
  }
  const ro::protocol::Reply r = ro::protocol::read_reply(msg, 7, 3, 5);
  if (r.kind == ro::protocol::Reply::Kind::tokens && r.tokens.size() != 3) __builtin_trap();
  if (r.kind == ro::protocol::Reply::Kind::tokens && !r.noise.empty() && r.noise.size() != 15) __builtin_trap();
  return 0;
}
