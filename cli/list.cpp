// `raceoracle list`: kernels, mutants and laws.
#include <cstdio>

#include "cli/commands.h"
#include "kernels/device_memory.h"
#include "properties/data_dir.h"
#include "properties/suite.h"
#include "properties/verify_laws.h"

namespace raceoracle::cli {

int list() {
  std::printf("data: %s\n", properties::data_dir().c_str());
  std::printf("kernels (%s backend):\n", kernels::backend_name());
  for (const auto& k : kernels::kernels()) {
    const auto c = k.contract();
    std::printf("  %-24s %s-scale, exp %.1f ulp, div %.1f ulp%s\n", k.name.c_str(), oracle::to_string(c.order), c.exp_ulp,
                c.div_ulp, c.rescales > 0 ? ", two-stage" : "");
  }
  std::printf("mutants:\n");
  for (const auto& k : kernels::mutants()) std::printf("  %s\n", k.name.c_str());
  std::printf("laws:\n");
  for (const auto& p : properties::laws()) {
    const std::string needs = properties::needs_note(p.needs);
    std::printf("  %-24s %s%s\n", p.name.c_str(), p.statement.c_str(), needs.empty() ? "" : (" (" + needs + ")").c_str());
  }
  std::printf("verify kernels (SPEC §11):\n");
  for (const auto& k : kernels::verify_kernels()) std::printf("  %s\n", std::string(k.name).c_str());
  std::printf("verify mutants:\n");
  for (const auto& m : properties::verify_mutants({})) std::printf("  %s\n", m.name().c_str());
  std::printf("verify laws:\n");
  for (const auto& p : properties::verify_laws()) std::printf("  %-30s %s\n", p.name.c_str(), p.statement.c_str());
  return 0;
}

}  // namespace raceoracle::cli
