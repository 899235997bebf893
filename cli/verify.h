#pragma once
/// `raceoracle verify FILE`: tokens any sampler produced, in the dump format
/// (protocol/dump.h), checked offline against the oracle (analysis/verify.h).
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "analysis/noise_report.h"
#include "protocol/dump.h"

namespace raceoracle::cli {

/// The noise report as JSON, for every command that reads noise.
nlohmann::json noise_json(const analysis::NoiseReport& n);

struct VerifyOptions {
  std::string file, json;
  int show = 10;
};
int verify(const VerifyOptions& o);

}  // namespace raceoracle::cli
