#pragma once
/// `raceoracle verify FILE`: tokens any sampler produced, in the dump format
/// (protocol/dump.h), checked offline against the oracle (analysis/verify.h).
#include <string>

namespace raceoracle::cli {

struct VerifyOptions {
  std::string file, json;
  int show = 10;
};
int verify(const VerifyOptions& o);

}  // namespace raceoracle::cli
