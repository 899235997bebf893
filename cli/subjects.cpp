#include "cli/subjects.h"

#include <stdexcept>

namespace raceoracle::cli {

std::unique_ptr<protocol::ExternalSampler> open_sampler(const SamplerOptions& o) {
  protocol::SamplerSpec spec;
  spec.command = o.command;
  spec.timeout_s = o.timeout_s;
  spec.overrides = o.overrides;
  if (!o.command.empty() && !o.fds.empty()) throw std::invalid_argument("give --sampler or --sampler-fds, not both");
  if (!o.fds.empty()) {
    const auto comma = o.fds.find(',');
    try {
      if (comma == std::string::npos) throw std::invalid_argument("no comma");
      std::size_t used = 0;
      spec.read_fd = std::stoi(o.fds.substr(0, comma), &used);
      if (used != comma) throw std::invalid_argument("trailing text");
      spec.write_fd = std::stoi(o.fds.substr(comma + 1), &used);
      if (used != o.fds.size() - comma - 1) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw std::invalid_argument("--sampler-fds '" + o.fds + "': expected IN,OUT (two descriptor numbers)");
    }
    if (spec.read_fd < 3 || spec.write_fd < 3)
      throw std::invalid_argument("--sampler-fds '" + o.fds + "': descriptors 0-2 are raceoracle's own stdio");
  }
  return std::make_unique<protocol::ExternalSampler>(std::move(spec));
}

std::vector<const kernels::Kernel*> resolve_kernels(const std::vector<std::string>& names, bool mutants) {
  std::vector<const kernels::Kernel*> out;
  if (names.empty()) {
    for (const auto& k : mutants ? kernels::mutants() : kernels::kernels()) out.push_back(&k);
    return out;
  }
  for (const auto& n : names) {
    const kernels::Kernel* k = kernels::find_kernel(n);
    if (!k) throw std::invalid_argument("unknown kernel '" + n + "'; known: " + kernels::kernel_names());
    if (k->is_mutant() && !mutants)
      throw std::invalid_argument("'" + n + "' is a mutant: run it with `raceoracle mutants --mutants " + n +
                                  "`, which runs each law in a process of its own (a defective kernel may crash the "
                                  "process it runs in), or replay one failure with `raceoracle replay`");
    if (!k->is_mutant() && mutants)
      throw std::invalid_argument("'" + n + "' is a real kernel, not a mutant: check it with `raceoracle check --kernels " +
                                  n + "`");
    out.push_back(k);
  }
  return out;
}

}  // namespace raceoracle::cli
