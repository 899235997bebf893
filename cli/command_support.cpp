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

}  // namespace raceoracle::cli
