#pragma once
/// `raceoracle verify FILE`: tokens any sampler produced, in the dump format
/// (protocol/dump.h), checked offline against the oracle (analysis/verify.h);
/// and a verify step's dump (analysis/verify_step.h).
#include <string>

namespace raceoracle::cli {

struct VerifyOptions {
  std::string file, json;
  std::string junit;  ///< the file's verdict as JUnit XML
  std::string html;   ///< the file's verdict as one HTML page
  int show = 10;
  /// Rows (requests) with parameters outside SPEC's domain are named but do not fail the run.
  bool allow_out_of_contract = false;
};
int verify(const VerifyOptions& o);
/// `raceoracle verify-step FILE`: a speculative-decoding verify step's ids, in
/// its dump format (analysis/verify_step.h), judged request by request (SPEC §11).
int verify_step(const VerifyOptions& o);

}  // namespace raceoracle::cli
