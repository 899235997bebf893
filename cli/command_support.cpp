#include "cli/command_support.h"

#include <fmt/format.h>

#include <cstdio>

#include "io/files.h"
#include "kernels/device_memory.h"

namespace raceoracle::cli {

void note(const std::string& s) {
  std::fprintf(stderr, "  .. %s\n", s.c_str());
  std::fflush(stderr);
}

mutants::GateProgress gate_progress(bool pairs) {
  mutants::GateProgress p;
  p.mutant = [](const std::string& m) { note(m + " ..."); };
  if (pairs)
    p.pair = [](const mutants::PairOutcome& o) {
      if (o.kind != mutants::PairOutcome::Kind::not_applicable)
        note(fmt::format("  {}: {} ({:.1f} s)", o.law, mutants::to_string(o.kind), o.seconds));
    };
  p.ended = [start = Clock::now()](const mutants::MutantReport& r, std::size_t done, std::size_t total) {
    note(mutants::progress_line(r, done, total, since(start)));
  };
  return p;
}

void write_file(const std::string& path, const std::string& text) {
  io::write_file(path, text);
  std::printf("wrote %s\n", path.c_str());
}

std::unique_ptr<protocol::ExternalSampler> start_replayable(const protocol::SamplerSpec& spec) {
  auto s = std::make_unique<protocol::ExternalSampler>(spec);
  if (s->own_randomness())
    throw std::invalid_argument("the sampler '" + s->name() + "' draws its own randomness (randomness = own): its tokens "
                                "cannot be judged on given noise; `raceoracle frequency --sampler ...` judges their "
                                "frequencies");
  return s;
}

void require_racecheck_runs(bool sampler_given) {
  if (std::string(kernels::backend_name()) != "nvidia")
    throw std::invalid_argument(std::string("--racecheck needs the nvidia backend (compute-sanitizer); this build's is ") +
                                kernels::backend_name());
  if (sampler_given) throw std::invalid_argument("--racecheck judges raceoracle's own kernels, not a sampler");
}

}  // namespace raceoracle::cli
