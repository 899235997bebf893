#pragma once
/// What the verify files' readers share (verify_step.h, verify_lossless.h):
/// a tensor's shape and dtype required, ids read for judging, the metadata's
/// contract and rules. Each throws protocol::SafetensorsError naming the problem.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "oracle/verify.h"
#include "protocol/dump.h"
#include "protocol/safetensors.h"

namespace raceoracle::analysis::verify_files {

using protocol::Has;
using protocol::Lookup;

void require_shape(const protocol::TensorView& t, const char* name, const std::vector<std::int64_t>& shape,
                   const std::vector<const char*>& dtypes);

/// An id as the judge reads it: int32, or INT_MIN (a value no id or placeholder has).
std::vector<std::int32_t> ids_of(const protocol::TensorView& t);

/// `target_logits` [R, k + 1, V] checked; its shape.
struct Targets {
  std::int64_t requests = 0, drafts = 0, vocab = 0;
  std::string dtype;
  std::vector<float> logits;  ///< widened exactly
};
Targets read_targets(const Lookup& require);

/// The metadata's contract, constants and uniform rule (`extra`: further fields allowed).
struct Metadata {
  oracle::NumericsContract contract;
  oracle::RaceConstants constants;
  oracle::VerifyRules rules;
};
Metadata read_metadata(const std::map<std::string, std::string>& metadata, bool uniform_compare);

}  // namespace raceoracle::analysis::verify_files
