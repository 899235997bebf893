#include "cli/path_clashes.h"

#include <fmt/format.h>

#include <utility>

#include "io/files.h"

namespace raceoracle::cli {
namespace {

/// How a use names itself in a message: `--json X`, `the input file X`.
std::string named(const PathUse& u, const std::string& path) {
  return u.output ? fmt::format("{} {}", u.option->get_name(), path) : fmt::format("the input file {}", path);
}

}  // namespace

void require_distinct_paths(const PathUses& uses) {
  std::vector<std::pair<const PathUse*, std::string>> given;
  for (const PathUse& u : uses) {
    if (!u.app->parsed() || u.option->count() == 0) continue;
    if (u.one) given.emplace_back(&u, *u.one);
    if (u.many)
      for (const std::string& p : *u.many) given.emplace_back(&u, p);
  }
  for (std::size_t i = 0; i < given.size(); ++i)
    for (std::size_t j = i + 1; j < given.size(); ++j) {
      const auto& [a, pa] = given[i];
      const auto& [b, pb] = given[j];
      if (!(a->output || b->output) || !io::same_file(pa, pb)) continue;
      const bool a_out = a->output;
      const PathUse &out = a_out ? *a : *b, &other = a_out ? *b : *a;
      const std::string &out_path = a_out ? pa : pb, &other_path = a_out ? pb : pa;
      throw CLI::ValidationError(
          other.output ? fmt::format("{} and {} name one file: each form would replace the one written before it; "
                                     "give each its own path", named(other, other_path), named(out, out_path))
                       : fmt::format("{} is {}: the report would overwrite what it reports on; write it elsewhere",
                                     named(out, out_path), named(other, other_path)),
          CLI::ExitCodes::ValidationError);
    }
}

}  // namespace raceoracle::cli
