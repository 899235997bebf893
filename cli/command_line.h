#pragma once
/// The raceoracle command line: every subcommand with its options and their
/// checks. Parsing is apart from running, so that the parser can be tested
/// and fuzzed alone (fuzz/cli_args.cpp).
#include <CLI/CLI.hpp>

#include <memory>

namespace raceoracle::cli {

class CommandLine {
 public:
  CommandLine();
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  /// Parses argv (argv[0] is the program). Throws CLI::ParseError as
  /// CLI::App::parse does (CLI::Success for --help and --version).
  void parse(int argc, const char* const* argv);
  /// Prints a parse error or the help; the exit status CLI11 gives it.
  int exit(const CLI::Error& e) { return app_.exit(e); }
  /// Runs the parsed subcommand: its exit status; 2, with the message on
  /// stderr, when it throws.
  int run();

 private:
  struct Options;
  std::unique_ptr<Options> o_;
  CLI::App app_;
};

}  // namespace raceoracle::cli
