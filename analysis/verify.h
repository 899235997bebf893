#pragma once
/// A dump judged by the oracle (protocol/dump.h): every row decided, its
/// token judged, its noise tallied; what `raceoracle verify` reports.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/noise_report.h"
#include "protocol/dump.h"

namespace raceoracle::analysis {

struct VerifyReport : protocol::DumpFacts {
  std::int64_t identical = 0, explained = 0, out_of_contract = 0, unexplained = 0, out_of_range = 0;
  std::vector<std::string> failures;  ///< readable, the first few
  NoiseReport noise;
  /// Rows out of contract for their parameters (oracle::is_parameter: a
  /// temperature, the noise): how many, and the first few with their reason.
  /// They fail the run unless `parameters_allowed` (verify --allow-out-of-contract).
  std::int64_t bad_parameters = 0;
  std::vector<std::string> bad_parameter_lines;
  bool parameters_allowed = false;
  std::int64_t invalid_noise() const { return noise.infinite + noise.invalid; }  ///< negative, NaN or infinite draws
  std::int64_t zero_noise() const { return noise.zeros; }                       ///< legal, reported
  bool ok() const {
    return unexplained == 0 && out_of_range == 0 && invalid_noise() == 0 && (parameters_allowed || bad_parameters == 0);
  }
};

/// Throws SafetensorsError with a clear message on a bad file. The file is
/// mapped and decided a block of rows at a time; pages already decided are
/// released, so memory stays that of one block whatever the file's size.
/// `block_rows` 0: rows of about 64 MB a block.
VerifyReport verify_file(const std::string& path, int max_failures = 10, std::int64_t block_rows = 0);
/// The same for a document already in memory.
VerifyReport verify_document(const protocol::Safetensors& s, int max_failures = 10);

}  // namespace raceoracle::analysis
