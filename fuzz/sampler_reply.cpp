// Fuzz target: bytes a sampler writes to raceoracle's stdin pipe, read as the
// channel reads them (header length, header, data) and then as a hello and
// as a reply to request 7 on 3 rows. Nothing may crash; a reply read as
// tokens must hold exactly the rows asked for.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "protocol/channel.h"
#include "protocol/external_sampler.h"
#include "protocol/safetensors.h"

namespace ro = raceoracle;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, data, 8);
  if (header_len > ro::protocol::kMaxHeaderBytes || header_len < 2 || header_len > size - 8) return 0;
  ro::protocol::Safetensors msg;
  try {
    ro::protocol::Header h = ro::protocol::parse_header(std::string(reinterpret_cast<const char*>(data) + 8, header_len),
                                                        size - 8 - header_len);
    msg = ro::protocol::assemble(std::move(h), data + 8 + header_len);
  } catch (const ro::protocol::SafetensorsError&) {
    return 0;
  }
  try {
    (void)ro::protocol::read_hello(msg, {});
  } catch (const ro::protocol::Breakdown&) {
  } catch (const std::invalid_argument&) {
  }
  const ro::protocol::Reply r = ro::protocol::read_reply(msg, 7, 3);
  if (r.kind == ro::protocol::Reply::Kind::tokens && r.tokens.size() != 3) __builtin_trap();
  return 0;
}
