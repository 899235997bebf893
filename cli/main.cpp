// raceoracle: the command-line front end (cli/command_line.h).
#include <string>

#include "cli/command_line.h"
#include "io/fatal_signals.h"
#include "mutants/harness.h"

int main(int argc, char** argv) {
  // The mutant harness's children (mutants/harness.h), not a user command.
  if (argc > 1 && std::string(argv[1]) == "__pair") return raceoracle::mutants::pair_child_main(argc, argv);
  raceoracle::io::say_fatal_signals_in_words();
  raceoracle::cli::CommandLine command_line;
  try {
    command_line.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // The message names the flag, the value and what is allowed; a bad
    // command line exits 2, as usage errors do (CLI11's own codes are 100+).
    return command_line.exit(e) == 0 ? 0 : 2;
  }
  return command_line.run();
}
