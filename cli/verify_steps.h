#pragma once
/// `check` and `mutants` on verify steps (SPEC §11): the verify kernels, or a
/// verify step behind the sampler protocol (a sampler whose hello says
/// `step = verify`), judged by the verify laws and the verify mutant gate in
/// this process (properties/verify_laws.h).
#include <string>
#include <vector>

#include "cli/commands.h"
#include "protocol/external_sampler.h"

namespace raceoracle::cli {

/// Whether any of `names` is a verify kernel or a verify mutant.
bool names_verify_kernels(const std::vector<std::string>& names);
/// The verify laws on the verify kernels `o.kernels` names, or on `sampler`
/// when given (check() printed the run's first line before it started it).
int check_verify(const CheckOptions& o, const protocol::ExternalSampler* sampler = nullptr);
/// The verify mutant gate on the mutants `o.mutants` names, or on `sampler`:
/// a deliberately broken verify step, which the laws must kill.
int mutants_verify(const MutantsOptions& o, const protocol::ExternalSampler* sampler = nullptr);

}  // namespace raceoracle::cli
