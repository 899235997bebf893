#include "oracle/row.h"

#include "race/bf16.h"
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace raceoracle::oracle {


double RowView::logit(std::int64_t i) const {
  if (dtype == Dtype::f32) return static_cast<const float*>(logits)[i];
  return race::widen_bf16(static_cast<const std::uint16_t*>(logits)[i]);
}

RowView BatchView::row(std::int64_t r) const {
  RowView v;
  v.dtype = dtype;
  v.logits = static_cast<const char*>(logits) + r * logit_stride * std::int64_t(size_of(dtype));
  v.noise = noise + r * noise_stride;
  v.vocab = vocab;
  v.temperature = temperatures[r];
  v.filter = filters ? filters + r : nullptr;
  return v;
}

void validate(const BatchView& b) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("bad batch: " + what); };
  if (b.rows <= 0) fail("rows must be positive (got " + std::to_string(b.rows) + ")");
  if (b.vocab <= 0) fail("vocab must be positive (got " + std::to_string(b.vocab) + ")");
  if (b.vocab > std::numeric_limits<std::int32_t>::max())
    fail("vocab " + std::to_string(b.vocab) + " does not fit the int32 tokens");
  if (b.logit_stride < b.vocab)
    fail("logit row stride " + std::to_string(b.logit_stride) + " is smaller than vocab " + std::to_string(b.vocab));
  if (b.noise_stride != 0 && b.noise_stride < b.vocab)
    fail("noise row stride " + std::to_string(b.noise_stride) + " is smaller than vocab " +
         std::to_string(b.vocab) + " (0 shares one noise row)");
  if (!b.logits) fail("logits pointer is null");
  if (!b.noise) fail("noise pointer is null");
  if (!b.temperatures) fail("temperatures pointer is null");
}

}  // namespace raceoracle::oracle
