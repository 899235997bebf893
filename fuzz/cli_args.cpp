// Fuzz target: the raceoracle command line, parsed and checked but never run.
// The input is split at NUL bytes into arguments. Every parse must end in
// success or a CLI11 error (what the binary prints with exit code 2 or 106+);
// nothing may crash, whatever the numbers, flags and subcommands.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/command_line.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"raceoracle"};
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += char(data[i]);
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.size() > 64) return 0;
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  raceoracle::cli::CommandLine command_line;
  try {
    command_line.parse(int(argv.size()), argv.data());
  } catch (const CLI::Error&) {
  }
  return 0;
}
