// Fuzz target: a safetensors file as `raceoracle verify` reads it. Every input
// must end in a document or a SafetensorsError / std::invalid_argument naming
// the problem; then verify's checks of the document's tensors and metadata,
// and the oracle on whatever rows survive them, must not crash either.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "analysis/verify.h"
#include "protocol/safetensors.h"

namespace ro = raceoracle;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ro::protocol::Safetensors doc;
  try {
    doc = ro::protocol::parse_safetensors(data, size);
  } catch (const ro::protocol::SafetensorsError&) {
    return 0;  // refused, with a message: the reader did its job
  }
  for (const auto& [name, t] : doc.tensors) {  // every accessor on every tensor the reader accepted
    try {
      (void)t.as_f32();
    } catch (const ro::protocol::SafetensorsError&) {
    }
    try {
      (void)t.as_i64();
    } catch (const ro::protocol::SafetensorsError&) {
    }
  }
  try {
    const ro::analysis::VerifyReport r = ro::analysis::verify_document(doc, 3);
    if (r.identical + r.explained + r.out_of_contract + r.unexplained + r.out_of_range != r.rows) __builtin_trap();
  } catch (const ro::protocol::SafetensorsError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
