#pragma once
/// What a command judges: kernels compiled into raceoracle, named on the
/// command line, or one external sampler (`--sampler CMD`, the sampler protocol).
#include <memory>
#include <string>
#include <vector>

#include "fixtures/subject.h"
#include "protocol/external_sampler.h"

namespace raceoracle::cli {

struct SamplerOptions {
  std::string command;  ///< --sampler
  std::string fds;      ///< --sampler-fds IN,OUT: a sampler already serving on inherited descriptors
  double timeout_s = 60;
  protocol::Fields overrides;  ///< --scaling-order, --exp-ulp, --div-ulp, --stages
  bool given() const { return !command.empty() || !fds.empty(); }
};

/// Starts the sampler and shakes hands; throws (protocol::Breakdown,
/// std::invalid_argument) with a message that says what failed.
std::unique_ptr<protocol::ExternalSampler> open_sampler(const SamplerOptions& o);

/// The kernels named (all real ones, or all mutants, when none are);
/// throws std::invalid_argument on an unknown name.
std::vector<const kernels::Kernel*> resolve_kernels(const std::vector<std::string>& names, bool mutants);

}  // namespace raceoracle::cli
