// `raceoracle check`: the laws, the mutant gate and the
// production-shape agreement run, on kernels or on an external sampler.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/devices.h"
#include "cli/verify_steps.h"
#include "io/children.h"
#include "io/interrupt.h"
#include "io/progress.h"
#include "kernels/device_memory.h"
#include "mutants/gate.h"
#include "mutants/report.h"
#include "oracle/noise_streams.h"
#include "properties/suite.h"
#include "io/report_keys.h"

namespace raceoracle::cli {
namespace {

/// The subjects of a check: the named kernels, or the one external sampler
/// (kept alive in `sampler`). Empty when the sampler could not be started.
std::vector<const subject::Subject*> subjects_of(const CheckOptions& o,
                                                 std::unique_ptr<protocol::ExternalSampler>& sampler) {
  std::vector<const subject::Subject*> out;
  if (o.sampler.given()) {
    try {
      sampler = start_replayable(o.sampler);
    } catch (const protocol::Breakdown& e) {
      std::printf("sampler %s: %s\n", protocol::to_string(e.kind), e.what());
      return out;
    }
    out.push_back(sampler.get());
    return out;
  }
  for (const kernels::Kernel* k : kernels::resolve_kernels(o.kernels, false)) out.push_back(&subject::subject_of(*k));
  return out;
}

/// Where a sampler's failures are kept by default: .raceoracle/corpus/NAME
/// under the directory the user runs from, NAME made safe as a file name.
std::string sampler_corpus_dir(const std::string& name) {
  std::string safe;
  for (const char c : name) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  if (safe.empty() || safe[0] == '.') safe = "sampler" + safe;
  return (std::filesystem::current_path() / ".raceoracle" / "corpus" / safe).string();
}

/// `check --devices`: the same command as N shards in parallel (cli/devices.h), then their merge.
int check_on_devices(const CheckOptions& o) {
  if (o.shard.count > 1) throw std::invalid_argument("give --devices or --shard, not both");
  MergeOptions m;
  m.files = o.files;
  m.reports = run_on_devices("check", o.args, o.devices, {"--devices", "--json", "--junit", "--html"}, "--json", "json").outputs;
  return merge(m);
}

}  // namespace

int check(const CheckOptions& o) {
  if (names_verify_kernels(o.kernels)) return check_verify(o);
  if (o.devices != 0) return check_on_devices(o);
  io::stop_gracefully_on_interrupt();
  const auto start = Clock::now();
  nlohmann::json report;
  report["backend"] = kernels::backend_name();
  report["device"] = kernels::device_description();
  report["seed"] = o.run.seed;
  report["cases"] = o.run.cases;
  report["cases_per_unit"] = o.cases_per_unit;
  report["shard"] = {{"index", o.shard.index}, {"count", o.shard.count}};
  // What the user named: shards merge only when their runs agree on all of it (merge.cpp).
  report["run"] = {{"command", "check"},
                   {"version", RACEORACLE_VERSION},
                   {"kernels", o.kernels},
                   {"sampler", o.sampler.command},
                   {"sampler_overrides", protocol::to_fields(o.sampler.overrides)},
                   {"properties", o.laws},
                   {"agreement", o.run_agreement ? nlohmann::json{{"rows", o.agreement.rows},
                                                                  {"vocab", o.agreement.vocab},
                                                                  {"dtype", race::to_string(o.agreement.dtype)},
                                                                  {"batches", o.agreement.batches}}
                                                 : nlohmann::json()},
                   {"mutants", o.mutants},
                   {"racecheck", o.racecheck},
                   {"laws_run", o.run_laws},
                   {"fail_fast", o.fail_fast},
                   {"settings", nlohmann::json::parse(properties::to_json(o.run))}};
  const bool sharded = o.shard.count > 1;
  std::printf("raceoracle check: backend %s (%s), seed %llu, %d cases per law%s\n", kernels::backend_name(),
              kernels::device_description().c_str(), static_cast<unsigned long long>(o.run.seed), o.run.cases,
              sharded ? (", shard " + o.shard.str()).c_str() : "");
  std::fflush(stdout);
  std::unique_ptr<protocol::ExternalSampler> sampler;
  const auto ks = subjects_of(o, sampler);
  if (sampler && sampler->serves_verify()) return check_verify(o, sampler.get());
  // Before the laws' minutes, not after.
  if (o.racecheck) require_racecheck_runs(o.sampler.given());
  if (o.mutants && !sampler) kernels::require_mutants_built();
  std::size_t unit = 0;  // the units of the run in their fixed order; this shard runs its own
  std::vector<std::string> unsaved;  // corpus entries that could not be written: errors, after the verdict
  auto finish = [&](int failures) {
    const bool partial = io::interrupted();  // Ctrl-C: what ran is kept, marked partial
    const char* verdict = partial ? "INTERRUPTED" : failures == 0 ? "PASS" : "FAIL";
    report["units"] = unit;
    report["failures"] = failures;
    report["seconds"] = since(start);
    report["verdict"] = verdict;
    report["partial"] = partial;
    report["unsaved"] = unsaved;
    // The verdict first: a write that fails afterwards (exit 2) cannot hide it.
    std::printf("\nverdict: %s (%d failure%s, %.1f s%s)\n", verdict, failures, failures == 1 ? "" : "s", since(start),
                partial ? "; a partial run: the report holds the units that ended before the interrupt" : "");
    std::fflush(stdout);
    write_report_files(o.files, "check", report);
    for (const std::string& e : unsaved) std::fprintf(stderr, "raceoracle: error: %s\n", e.c_str());
    if (!unsaved.empty()) return 2;
    if (partial) return io::interrupted_exit();
    return failures == 0 ? 0 : 1;
  };
  if (ks.empty()) {
    report["error"] = "the sampler could not be started";
    return finish(1);
  }
  // Declared conventions that differ from SPEC §1: listed, judged by unless --definition.
  const std::vector<std::string> deviations =
      sampler ? protocol::describe_deviations(sampler->declared_conventions()) : std::vector<std::string>{};
  if (sampler) {
    report["sampler"] = {{"command", o.sampler.command}, {"name", sampler->name()},
                         {"contract", protocol::contract_fields(sampler->contract())},
                         {"deviations", deviations},
                         {"judged_by", o.sampler.definition ? "definition" : "declared conventions"}};
    std::printf("sampler %s: %s\n", sampler->name().c_str(), protocol::describe_contract(sampler->contract()).c_str());
    if (const auto stream = sampler->noise_stream()) {
      report["sampler"]["noise_stream"] = protocol::stream_fields(*stream);
      std::printf("  draws its own noise: %s, judged on raceoracle's replay within the transform's bound "
                  "(docs/NOISE_STREAMS.md)\n",
                  oracle::describe(*stream).c_str());
    }
    for (const std::string& d : deviations)
      std::printf("  deviation from SPEC §1%s: %s\n", o.sampler.definition ? " (NOT honoured: --definition)" : "", d.c_str());
  } else if (kernels::device_count() == 0) {
    std::printf("no %s device found: nothing can be checked\nverdict: FAIL\n", kernels::backend_name());
    return 2;
  }
  const auto selected = properties::law_selection(o.laws);
  int failures = 0;
  // A sampler's own corpus: its failures, replayed after the shared corpus (--no-corpus: neither).
  properties::RunSettings run = o.run;
  if (sampler && !o.run.corpus_dir.empty()) {
    run.subject_corpus_dir = o.sampler_corpus.empty() ? sampler_corpus_dir(sampler->name()) : o.sampler_corpus;
    std::printf("  its corpus: %s (%zu saved cases, replayed first)\n", run.subject_corpus_dir.c_str(),
                properties::load_corpus(run.subject_corpus_dir).size());
  }

  // 1. The laws on each subject: every unit planned first (the count progress shows), this shard's run.
  struct LawUnit {
    const subject::Subject* k;
    const properties::Law* p;
    properties::CaseChunk c;
    std::size_t u;
  };
  std::vector<LawUnit> plan;
  if (o.run_laws) {
    std::printf("\n== laws ==\n%-24s %-14s %-9s %7s %7s\n", "law", "subject", "result", "cases", "time");
    for (const auto* k : ks)
      for (const auto& p : properties::laws()) {
        if (!selected(p)) continue;
        if (!p.applies_to(*k)) {
          if (sampler) {
            std::printf("%-24s %-14s %-9s (%s)\n", p.name.c_str(), k->name().c_str(), "n/a", properties::needs_note(p.needs));
            report["not_applicable"].push_back({{io::kLawKey, p.name}, {"kernel", k->name()}, {"why", properties::needs_note(p.needs)}});
          }
          continue;
        }
        for (const properties::CaseChunk& c : properties::case_chunks(o.run.cases, o.run.seed, o.cases_per_unit))
          if (const std::size_t u = unit++; o.shard.owns(u)) plan.push_back({k, &p, c, u});
      }
  }
  {
    io::Progress progress(plan.size(), io::live_progress());
    for (const LawUnit& lu : plan) {
      if ((o.fail_fast && failures > 0) || io::interrupted()) break;
      const auto& [k, pp, c, u] = lu;
      const properties::Law& p = *pp;
      const std::string name = c.of > 1 ? fmt::format("{} [{}/{}]", p.name, c.index + 1, c.of) : p.name;
      progress.begin(name + " on " + k->name());
      const auto r = properties::run_law(p, *k, c.settings(run));
      progress.end();
      if (io::interrupted()) break;  // its sampler was stopped mid-unit: its result says nothing
      const bool ok = r.ok();
      failures += !ok;
      std::printf("%-24s %-14s %-9s %7d %6.1fs\n", name.c_str(), k->name().c_str(),
                  ok ? "pass" : r.uncovered.empty() ? properties::to_string(r.verdict) : "UNCOVERED", r.cases, r.seconds);
      if (!r.counterexample.empty()) std::printf("  %s\n  replay: %s\n", r.counterexample.c_str(), properties::replay_command(p, *k, r).c_str());
      if (!ok && o.sampler.definition && !deviations.empty())
        std::printf("  judged by SPEC §1 alone (--definition); the sampler declares:\n    %s\n",
                    fmt::format("{}", fmt::join(deviations, "\n    ")).c_str());
      const std::string corpus = sampler ? run.subject_corpus_dir : properties::default_corpus_dir();
      if (o.save_failures && !corpus.empty() && !r.case_json.empty() && r.reproduce.size() > 0) try {
          std::printf("  saved to the regression corpus: %s (replayed first on the next run; commit it to keep it)\n",
                      properties::save_to_corpus(corpus, p.name, "found by raceoracle check on " + k->name(),
                                                 r.case_json).c_str());
        } catch (const std::exception& e) {
          std::printf("  NOT saved to the regression corpus: %s\n", e.what());
          unsaved.push_back(std::string("the counterexample was not saved to the regression corpus: ") + e.what());
        }
      if (!r.uncovered.empty()) std::printf("  input classes never met: %s\n", fmt::format("{}", fmt::join(r.uncovered, ", ")).c_str());
      std::fflush(stdout);
      report["properties"].push_back({{"unit", u}, {io::kLawKey, p.name}, {"kernel", k->name()}, {"chunk", c.index},
                                      {"chunks", c.of}, {"seed", c.seed}, {"result", ok ? "pass" : "fail"},
                                      {"verdict", properties::to_string(r.verdict)}, {"cases", r.cases},
                                      {"seconds", r.seconds}, {"required", r.required}, {"uncovered", r.uncovered},
                                      {"counterexample", r.counterexample}, {"reproduce", r.reproduce},
                                      {"case", r.case_json}, {"replay", r.ok() ? "" : properties::replay_command(p, *k, r)}});
    }
  }

  // 2. The mutant gate: every mutant must be killed by a law's failure.
  if (o.mutants && sampler) {
    std::printf("\n== mutant gate ==\nn/a: the mutants are raceoracle's own kernels; gate a broken sampler with "
                "`raceoracle mutants --sampler CMD`\n");
  } else if (o.mutants && !(o.fail_fast && failures > 0) && !io::interrupted()) {
    std::printf("\n== mutant gate ==\n");
    std::fflush(stdout);
    std::vector<const subject::Subject*> ms;
    for (const auto& m : kernels::mutants())  // --kernels K: K's own mutants
      if (o.kernels.empty() ||
          std::find(o.kernels.begin(), o.kernels.end(), kernels::real_kernel_name(m)) != o.kernels.end())
        ms.push_back(&subject::subject_of(m));
    // --laws: the gate's laws too
    const mutants::GateRun gate =
        mutants::run_gate(ms, mutants::exec_harness(o.run, o.mutant_timeout_s, o.racecheck), o.shard, unit, o.laws,
                          gate_progress(false));
    unit += gate.units;
    std::printf("%s", mutants::table(gate.reports).c_str());
    if (sharded) std::printf("(a shard runs some pairs of each mutant: the gate is decided by `raceoracle merge`)\n");
    else
      for (const auto& r : gate.reports) failures += !r.killed();
    report["mutants"] = gate.json;
    report["mutation_score"] = mutants::mutation_score(gate.reports);
  }

  // 3. Agreement at the production shape, per case.
  if (!o.run_agreement || (o.fail_fast && failures > 0) || io::interrupted()) return finish(failures);
  std::printf("\n== agreement: %lld rows x %lld ids, %s, %d batch(es) ==\n", static_cast<long long>(o.agreement.rows),
              static_cast<long long>(o.agreement.vocab), oracle::to_string(o.agreement.dtype), o.agreement.batches);
  std::fflush(stdout);
  std::vector<analysis::AgreementCell> cells;
  std::map<std::string, std::size_t> unit_of;  // one unit per subject
  std::vector<const subject::Subject*> mine;
  for (const auto* k : ks)
    if (o.shard.owns(unit_of[k->name()] = unit++)) mine.push_back(k);
  try {
    if (!mine.empty()) cells = analysis::run_agreement(mine, o.agreement, note);
  } catch (const std::exception& e) {
    if (io::interrupted()) return finish(failures);  // the sampler was stopped: the error says nothing
    std::printf("agreement run failed: %s\n", e.what());
    report["agreement_error"] = e.what();
    ++failures;
  }
  std::printf("%-14s %-13s %-7s %6s %10s %10s %12s %12s\n", "kernel", "mask", "T", "rows", "identical", "explained",
              "UNEXPLAINED", "OUT-OF-RANGE");
  for (const auto& c : cells) {
    std::printf("%-14s %-13s %-7s %6lld %10lld %10lld %12lld %12lld\n", c.kernel.c_str(), c.mask.c_str(),
                c.temperature.c_str(), static_cast<long long>(c.rows), static_cast<long long>(c.identical),
                static_cast<long long>(c.explained), static_cast<long long>(c.unexplained),
                static_cast<long long>(c.out_of_range));
    for (const auto& e : c.examples) std::printf("    %s\n", e.c_str());
    failures += c.unexplained + c.out_of_range > 0;
    report["agreement"].push_back({{"unit", unit_of.at(c.kernel)}, {"kernel", c.kernel}, {"mask", c.mask}, {"temperature", c.temperature},
                                   {"rows", c.rows}, {"identical", c.identical}, {"explained", c.explained},
                                   {"unexplained", c.unexplained}, {"out_of_range", c.out_of_range}});
  }
  return finish(failures);
}

}  // namespace raceoracle::cli
