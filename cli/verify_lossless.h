#pragma once
/// `raceoracle verify-lossless`: the verify step's losslessness law
/// (analysis/verify_lossless.h) on a file of runs any sampler made, or on a
/// compiled-in verify kernel or mutant, or a verify step behind the sampler
/// protocol, with a pipeline drawing its randomness (analysis/verify_lossless_study.h).
#include <string>

#include "analysis/verify_lossless_study.h"
#include "protocol/external_sampler.h"

namespace raceoracle::cli {

struct LosslessOptions {
  std::string file;    ///< judge this file's runs; or
  std::string kernel;  ///< run this verify kernel or mutant ("verify-fused", "verify-fused~recover_from_target"); or
  protocol::SamplerSpec sampler;  ///< run this verify step behind the protocol (its hello says step = verify)
  std::string noise = analysis::to_string(analysis::VerifyNoise::independent);
  std::string dtype = "f32";
  analysis::LosslessStudy study;
  std::string json;
};
int verify_lossless(const LosslessOptions& o);

}  // namespace raceoracle::cli
