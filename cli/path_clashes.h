// The files a command reads and writes, registered by flag as the command
// line is built, and checked once it is parsed: no output may name an input
// or another output (docs/RELIABILITY.md, "Writing and reading files").
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace raceoracle::cli {

/// A file of one flag (or positional) of one subcommand.
struct PathUse {
  const CLI::App* app;
  const CLI::Option* option;
  const std::string* one = nullptr;               ///< a single path, or
  const std::vector<std::string>* many = nullptr;  ///< several
  bool output = false;
};
using PathUses = std::vector<PathUse>;

/// Throws CLI::ValidationError (exit 2, before any work) when, among the
/// uses of the subcommands parsed, an output is the same file as an input
/// (the report would overwrite what it reports on) or as another output
/// (each form would replace the one written before it), by any name
/// (io::same_file: `..`, links).
void require_distinct_paths(const PathUses& uses);

}  // namespace raceoracle::cli
