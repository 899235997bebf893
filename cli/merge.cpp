// `raceoracle merge REPORT...`: the shards of one run joined into its
// unsharded report (mutants/merge.h; a divergence run's states:
// analysis/divergence_state.h), written and printed.
#include <cstdio>
#include <stdexcept>

#include "analysis/divergence_state.h"
#include "cli/divergence.h"

#include "cli/command_support.h"
#include "cli/commands.h"
#include "mutants/merge.h"
#include "io/report_keys.h"

namespace raceoracle::cli {

int merge(const MergeOptions& o) {
  std::size_t states = 0;
  for (const std::string& r : o.reports) states += analysis::is_state_file(r);
  if (states > 0) {
    if (states != o.reports.size())
      throw std::invalid_argument("merge: give the --json reports of check or mutants, or the --state files of "
                                  "divergence, not both");
    if (!o.files.json.empty() || !o.files.junit.empty() || !o.report_json.empty() || !o.matrix_md.empty())
      throw std::invalid_argument("merge: divergence states write the run's tables to --out and --html; --json, "
                                  "--junit, --report and --matrix are check's and mutants'");
    return merge_divergence(o.reports, o.out_dir, o.files.html);
  }
  if (o.out_given)
    throw std::invalid_argument("merge: --out is where divergence states' tables go; check's and mutants' reports "
                                "are written with --json, --junit, --html, --report and --matrix");
  const mutants::MergedRun m = mutants::merge_shards(o.reports);
  write_report_files(o.files, m.report.value("run", nlohmann::json::object()).value("command", "check"), m.report);
  if (!o.report_json.empty()) write_file(o.report_json, mutants::mutation_report_json(m.mutants) + "\n");
  if (!o.matrix_md.empty()) write_file(o.matrix_md, mutants::kill_matrix_markdown(m.mutants));
  for (const auto& p : m.report.value("properties", nlohmann::json::array()))
    if (p["result"] != "pass")
      std::printf("%s on %s: %s\n  %s\n  replay: %s\n", io::law_of(p).c_str(),
                  p["kernel"].get<std::string>().c_str(), p["verdict"].get<std::string>().c_str(),
                  p["counterexample"].get<std::string>().c_str(), p["replay"].get<std::string>().c_str());
  if (!m.mutants.empty()) std::printf("%s", mutants::table(m.mutants).c_str());
  std::printf("merged %d shards: %zu units, %d failure%s\nverdict: %s\n", m.shards, m.units, m.failures,
              m.failures == 1 ? "" : "s", m.failures == 0 ? "PASS" : "FAIL");
  return m.failures == 0 ? 0 : 1;
}

}  // namespace raceoracle::cli
