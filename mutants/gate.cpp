#include "mutants/gate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>

#include "io/children.h"
#include "io/interrupt.h"
#include "io/progress.h"
#include "mutants/report.h"

namespace raceoracle::mutants {

HarnessSettings exec_harness(const properties::RunSettings& rs, double timeout_s, bool racecheck) {
  return HarnessSettings{rs, timeout_s, true, io::self_executable(), racecheck};
}

std::string progress_line(const MutantReport& r, std::size_t done, std::size_t total, double elapsed_s) {
  const std::vector<std::string> killers = r.killers();
  std::string s = fmt::format("[{}/{}] {}: {}", done, total, r.mutant->name(), r.status());
  if (!killers.empty()) s += fmt::format(" by {}", fmt::join(killers, ", "));
  s += fmt::format(" ({:.1f} s", r.seconds);
  if (const std::string left = io::time_left(elapsed_s, done, total); !left.empty()) s += "; " + left;
  return s + ")";
}

GateRun run_gate(const std::vector<const subject::Subject*>& mutants, const HarnessSettings& hs,
                 const properties::Shard& shard, std::size_t first_unit, const std::vector<std::string>& only,
                 const GateProgress& progress) {
  // A mutant's units are its selected laws, numbered in suite order
  // (so N shards of one selection hold exactly the unsharded run's units).
  const auto& suite = properties::laws();
  const auto selected = properties::law_selection(only);
  std::vector<std::size_t> rank(suite.size(), SIZE_MAX);  // suite index -> unit offset within a mutant
  std::size_t per_mutant = 0;
  for (std::size_t i = 0; i < suite.size(); ++i)
    if (selected(suite[i])) rank[i] = per_mutant++;
  auto runs = [&](std::size_t base, std::size_t i) { return rank[i] != SIZE_MAX && shard.owns(base + rank[i]); };
  GateRun g;
  std::vector<std::size_t> bases;
  std::size_t total = 0;  // the mutants this shard runs
  for (std::size_t j = 0; j < mutants.size(); ++j) {
    bool any = false;
    for (std::size_t i = 0; i < suite.size(); ++i) any |= runs(first_unit + j * per_mutant, i);
    total += any;
  }
  for (const subject::Subject* m : mutants) {
    const std::size_t base = first_unit + g.units;
    g.units += per_mutant;
    bool any = false;
    for (std::size_t i = 0; i < suite.size(); ++i) any |= runs(base, i);
    if (!any) continue;
    if ((g.partial = io::interrupted())) break;  // Ctrl-C (io/interrupt.h): no mutant starts
    if (progress.mutant) progress.mutant(m->name());
    MutantReport r = run_mutant(*m, hs, progress.pair, [&](std::size_t i) { return runs(base, i); });
    if ((g.partial = io::interrupted())) break;  // its children were killed mid-run: its pairs say nothing
    g.reports.push_back(std::move(r));
    bases.push_back(base);
    if (progress.ended) progress.ended(g.reports.back(), g.reports.size(), total);
  }
  g.json = pairs_json(g.reports);
  // run_mutant keeps the owned pairs in suite order: the k-th is the k-th owned unit.
  for (std::size_t r = 0; r < g.reports.size(); ++r)
    for (std::size_t i = 0, k = 0; i < suite.size(); ++i)
      if (runs(bases[r], i)) g.json[r]["pairs"][k++]["unit"] = bases[r] + rank[i];
  return g;
}

}  // namespace raceoracle::mutants
