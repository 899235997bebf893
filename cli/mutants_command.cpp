// `raceoracle mutants`: every law against every mutant (or against a
// deliberately broken external sampler); the kill report and the gate.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "io/interrupt.h"
#include "cli/verify_steps.h"
#include "mutants/gate.h"
#include "mutants/report.h"
#include "properties/suite.h"

namespace raceoracle::cli {

int mutants(const MutantsOptions& o) {
  if (names_verify_kernels(o.mutants)) return mutants_verify(o);
  io::stop_gracefully_on_interrupt();
  std::unique_ptr<protocol::ExternalSampler> sampler;
  std::vector<const subject::Subject*> ms;
  if (o.racecheck) require_racecheck_runs(o.sampler.given());
  if (o.sampler.given()) {
    if (!o.mutants.empty()) throw std::invalid_argument("give --mutants or --sampler, not both");
    sampler = start_replayable(o.sampler);
    if (sampler->serves_verify()) return mutants_verify(o, sampler.get());
    ms.push_back(sampler.get());
  } else {
    for (const kernels::Kernel* k : kernels::resolve_kernels(o.mutants, true)) ms.push_back(&subject::subject_of(*k));
  }
  const mutants::GateRun gate = mutants::run_gate(ms, mutants::exec_harness(o.run, o.timeout_s, o.racecheck), o.shard,
                                                  0, o.laws, gate_progress(true));
  const std::vector<mutants::MutantReport>& reports = gate.reports;
  std::printf("%s", mutants::table(reports).c_str());
  // The first killer's counterexample per mutant; the report JSON has the rest.
  for (const auto& r : reports) {
    const mutants::PairOutcome* p = r.first_kill();
    if (!p) continue;
    std::printf("\n%s killed by %s:\n  %s\n  replay: %s\n", r.mutant->name().c_str(), p->law.c_str(),
                p->counterexample.c_str(), p->replay.c_str());
    if (o.save_corpus && !sampler && !p->case_json.empty())
      std::printf("saved %s\n", properties::save_to_corpus(properties::default_corpus_dir(), p->law,
                                                            "shrunk counterexample that killed " + r.mutant->name(),
                                                            p->case_json).c_str());
  }
  if (!o.report_json.empty()) write_file(o.report_json, mutants::mutation_report_json(reports) + "\n");
  if (!o.matrix_md.empty()) write_file(o.matrix_md, mutants::kill_matrix_markdown(reports));
  const nlohmann::json report{{"seed", o.run.seed}, {"cases", o.run.cases}, {"units", gate.units},
                              {"run", {{"command", "mutants"}, {"version", RACEORACLE_VERSION},
                                       {"mutants", o.mutants}, {"sampler", o.sampler.command},
                                       {"sampler_overrides", protocol::to_fields(o.sampler.overrides)},
                                       {"properties", o.laws}, {"timeout_s", o.timeout_s},
                                       {"settings", nlohmann::json::parse(properties::to_json(o.run))}}},
                              {"shard", {{"index", o.shard.index}, {"count", o.shard.count}}},
                              {"partial", gate.partial},
                              {"mutants", gate.json}};
  write_report_files(o.files, "mutants", report, o.expect_killed_by);
  if (gate.partial) {
    std::printf("verdict: INTERRUPTED (a partial run: the reports hold the %zu mutants that ended before the interrupt)\n",
                reports.size());
    return io::interrupted_exit();
  }
  if (o.shard.count > 1) {
    std::printf("shard %s: some pairs of each mutant; the gate is decided by `raceoracle merge`\n", o.shard.str().c_str());
    return 0;
  }
  int bad = 0;
  for (const auto& r : reports) {
    if (!r.killed()) {
      std::printf("GATE: %s was not killed by any law (%s)\n", r.mutant->name().c_str(), r.status().c_str());
      ++bad;
    }
    const auto killers = r.killers();
    for (const auto& want : o.expect_killed_by)
      if (std::find(killers.begin(), killers.end(), want) == killers.end()) {
        std::printf("GATE: %s was expected to be killed by %s\n", r.mutant->name().c_str(), want.c_str());
        ++bad;
      }
  }
  std::printf("verdict: %s\n", bad == 0 ? "PASS" : "FAIL");
  return bad == 0 ? 0 : 1;
}

}  // namespace raceoracle::cli
