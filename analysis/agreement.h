#pragma once
/// The agreement run of `raceoracle check`: production-shape batches whose
/// rows are spread over cases (mask pattern x temperature), each kernel's
/// tokens judged against the oracle.
#include <cstdint>
#include <string>
#include <vector>

#include <functional>

#include "subject/subject.h"
#include "oracle/row.h"

namespace raceoracle::analysis {

struct AgreementSettings {
  std::int64_t rows = 256;
  std::int64_t vocab = 163840;
  oracle::Dtype dtype = oracle::Dtype::bf16;
  int batches = 1;
  std::uint64_t seed = race::kCiSeed;
};

struct AgreementCell {
  std::string kernel, mask, temperature;
  std::int64_t rows = 0, identical = 0, explained = 0, unexplained = 0, out_of_range = 0;
  std::vector<std::string> examples;  ///< the first unexplained rows, readable
};

/// Runs every subject on the same batches. `progress` gets one line per batch.
/// Throws std::runtime_error naming the subject when one fails to run.
std::vector<AgreementCell> run_agreement(const std::vector<const subject::Subject*>& ks, const AgreementSettings& s,
                                         const std::function<void(const std::string&)>& progress);

}  // namespace raceoracle::analysis
