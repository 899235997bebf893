#pragma once
/// `raceoracle frequency`: the frequency law (analysis/frequency.h) on a
/// sampler that draws its own randomness, printed and written as JSON.
#include <string>

#include "analysis/frequency_study.h"
#include "protocol/external_sampler.h"

namespace raceoracle::cli {

struct FrequencyOptions {
  protocol::SamplerSpec sampler;
  analysis::FrequencyStudy study;
  std::string json;  ///< write the machine-readable report here
};

/// 0: PASS; 1: FAIL, or the sampler broke down; 2 (thrown): a usage error.
int frequency(const FrequencyOptions& o);

}  // namespace raceoracle::cli
