#pragma once
/// `check` and `mutants` on the verify kernels (SPEC §11): their own laws
/// and mutant gate, in this process (properties/verify_laws.h).
#include <string>
#include <vector>

#include "cli/commands.h"

namespace raceoracle::cli {

/// Whether any of `names` is a verify kernel or a verify mutant.
bool names_verify_kernels(const std::vector<std::string>& names);
int check_verify_kernels(const CheckOptions& o);
int mutants_verify(const MutantsOptions& o);

}  // namespace raceoracle::cli
