#include "cli/command_support.h"

#include <cstdio>

#include "io/files.h"

namespace raceoracle::cli {

void note(const std::string& s) {
  std::fprintf(stderr, "  .. %s\n", s.c_str());
  std::fflush(stderr);
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

}  // namespace raceoracle::cli
