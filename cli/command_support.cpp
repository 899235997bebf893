#include "cli/command_support.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace raceoracle::cli {

void note(const std::string& s) {
  std::fprintf(stderr, "  .. %s\n", s.c_str());
  std::fflush(stderr);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << text;
  std::printf("wrote %s\n", path.c_str());
}

mutants::HarnessSettings harness(const properties::RunSettings& rs, double timeout_s) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return mutants::HarnessSettings{rs, timeout_s, true, ec ? std::string() : self.string()};
}

}  // namespace raceoracle::cli
