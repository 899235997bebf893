#include "analysis/verify_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <stdexcept>

#include "protocol/contract_fields.h"
#include "protocol/dump.h"

namespace raceoracle::analysis::verify_files {

void require_shape(const protocol::TensorView& t, const char* name, const std::vector<std::int64_t>& shape,
                   const std::vector<const char*>& dtypes) {
  if (t.shape != shape)
    throw protocol::SafetensorsError(fmt::format("{} must be {}, got {}", name, protocol::shape_string(shape),
                                                 protocol::shape_string(t.shape)));
  for (const char* d : dtypes)
    if (t.dtype == d) return;
  throw protocol::SafetensorsError(fmt::format("{} dtype must be {}, got {}", name, fmt::join(dtypes, " or "), t.dtype));
}

std::vector<std::int32_t> ids_of(const protocol::TensorView& t) {
  std::vector<std::int32_t> out;
  for (std::int64_t v : t.as_i64()) out.push_back(v >= INT_MIN + 1 && v <= INT_MAX ? std::int32_t(v) : INT_MIN);
  return out;
}

Targets read_targets(const Lookup& require) {
  const protocol::TensorView x = require("target_logits");
  if (x.shape.size() != 3 || x.shape[0] < 1 || x.shape[1] < 1 || x.shape[2] < 1)
    throw protocol::SafetensorsError("target_logits must be [requests, drafts + 1, V] with each >= 1, got " +
                                     protocol::shape_string(x.shape));
  if (x.dtype != "BF16" && x.dtype != "F16" && x.dtype != "F32")
    throw protocol::SafetensorsError("target_logits dtype must be BF16, F16 or F32, got " + x.dtype);
  Targets t{x.shape[0], x.shape[1] - 1, x.shape[2], x.dtype, {}};
  if (t.drafts > race::kMaxDrafts)
    throw protocol::SafetensorsError(fmt::format("at most {} drafts a request, got {}", race::kMaxDrafts, t.drafts));
  t.logits = x.as_f32();
  return t;
}

Metadata read_metadata(const std::map<std::string, std::string>& metadata, bool uniform_compare) {
  Metadata m;
  try {
    std::vector<std::string> allowed{"eps", "greedy_eps"};
    if (uniform_compare) allowed.push_back(protocol::kUniformCompareField);
    protocol::refuse_unknown_fields(metadata, allowed);
    m.constants = protocol::parse_race_constants(metadata);
    m.contract = protocol::parse_contract(metadata);
    protocol::require_tensor_noise_exact(m.contract);
    m.rules = protocol::parse_verify_rules(metadata);
  } catch (const std::invalid_argument& e) {
    throw protocol::SafetensorsError(std::string("metadata ") + e.what());
  }
  return m;
}

}  // namespace raceoracle::analysis::verify_files
