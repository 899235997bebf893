#include "cli/command_support.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

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

mutants::HarnessSettings harness(const properties::RunSettings& rs, double timeout_s) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return mutants::HarnessSettings{rs, timeout_s, true, ec ? std::string() : self.string()};
}

std::function<bool(const properties::Property&)> property_selection(const std::vector<std::string>& names) {
  for (const std::string& name : names)
    if (!properties::find_property(name)) throw std::invalid_argument("unknown property '" + name + "'");
  return [names](const properties::Property& p) {
    return names.empty() || std::find(names.begin(), names.end(), p.name) != names.end();
  };
}

GateRun run_gate(const std::vector<const fixtures::Subject*>& mutants, const mutants::HarnessSettings& hs,
                 const properties::Shard& shard, std::size_t first_unit,
                 const std::function<void(const mutants::PairOutcome&)>& progress,
                 const std::vector<std::string>& only) {
  // A mutant's units are its selected properties, numbered in suite order
  // (so N shards of one selection hold exactly the unsharded run's units).
  const auto& suite = properties::properties();
  const auto selected = property_selection(only);
  std::vector<std::size_t> rank(suite.size(), SIZE_MAX);  // suite index -> unit offset within a mutant
  std::size_t per_mutant = 0;
  for (std::size_t i = 0; i < suite.size(); ++i)
    if (selected(suite[i])) rank[i] = per_mutant++;
  auto runs = [&](std::size_t base, std::size_t i) { return rank[i] != SIZE_MAX && shard.owns(base + rank[i]); };
  GateRun g;
  std::vector<std::size_t> bases;
  for (const fixtures::Subject* m : mutants) {
    const std::size_t base = first_unit + g.units;
    g.units += per_mutant;
    bool any = false;
    for (std::size_t i = 0; i < suite.size(); ++i) any |= runs(base, i);
    if (!any) continue;
    note(m->name() + " ...");
    g.reports.push_back(mutants::run_mutant(*m, hs, progress, [&](std::size_t i) { return runs(base, i); }));
    bases.push_back(base);
  }
  g.json = mutants::pairs_json(g.reports);
  // run_mutant keeps the owned pairs in suite order: the k-th is the k-th owned unit.
  for (std::size_t r = 0; r < g.reports.size(); ++r)
    for (std::size_t i = 0, k = 0; i < suite.size(); ++i)
      if (runs(bases[r], i)) g.json[r]["pairs"][k++]["unit"] = bases[r] + rank[i];
  return g;
}

}  // namespace raceoracle::cli
