// `raceoracle check --kernels verify-...` (or `--sampler CMD` on a verify
// step) and `raceoracle mutants --mutants verify-...~...` (or `--sampler
// CMD`): the verify step's laws and mutant gate (SPEC §11; properties/verify_laws.h).
#include "cli/verify_steps.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command_support.h"
#include "kernels/device_memory.h"
#include "properties/verify_laws.h"
#include "io/report_keys.h"

namespace raceoracle::cli {
namespace {

using properties::LawResult;
using properties::VerifySubject;

std::string replay_line(const std::string& command, const properties::VerifyLaw& law, const VerifySubject& s,
                        const properties::RunSettings& run) {
  return fmt::format("raceoracle {} {} --properties {} --seed {} --cases {}", command,
                     s.replay_args(command == "mutants"), law.name, run.seed, run.cases);
}

nlohmann::json law_json(const properties::VerifyLaw& law, const VerifySubject& s, const LawResult& r,
                        const std::string& replay) {
  return {{io::kLawKey, law.name},     {"kernel", s.name()},         {"result", r.ok() ? "pass" : "fail"},
          {"verdict", properties::to_string(r.verdict)}, {"cases", r.cases}, {"seconds", r.seconds},
          {"counterexample", r.counterexample}, {"case", r.case_json}, {"replay", r.ok() ? "" : replay},
          {"uncovered", nlohmann::json::array()}};
}

/// What a verify run does not do (yet): said, never silently ignored.
/// `both`: verify kernels named beside a sampler.
void refuse_unsupported(bool sharded, bool both, const char* command) {
  if (both) throw std::invalid_argument("a verify kernel is raceoracle's own: give --kernels or --sampler, not both");
  if (sharded)
    throw std::invalid_argument(fmt::format("`{}` on a verify step runs in one process: --shard and --devices are "
                                            "for the sampling kernels' laws", command));
}

/// The width of a table's subject column: `least`, or the longest name.
int name_width(const std::vector<VerifySubject>& subjects, int least) {
  for (const VerifySubject& s : subjects) least = std::max(least, int(s.name().size()));
  return least;
}

void print_mutant_row(const properties::VerifyMutantRun& m, int width) {
  const auto killers = m.killers();
  std::printf("%-*s %-9s %s\n", width, m.mutant.name().c_str(), killers.empty() ? "SURVIVED" : "killed",
              killers.empty() ? "" : fmt::format("by {}", fmt::join(killers, ", ")).c_str());
  std::fflush(stdout);
}

/// The gate's JSON as check's and mutants' write it (mutants/report.h pairs_json): one schema for every reader.
nlohmann::json mutant_json(const properties::VerifyMutantRun& m) {
  nlohmann::json pairs = nlohmann::json::array();
  double seconds = 0;
  for (const auto& [law, r] : m.results) {
    pairs.push_back({{io::kLawKey, law->name}, {"outcome", r.ok() ? "survived" : "killed"}, {"cases", r.cases},
                     {"seconds", r.seconds}, {"counterexample", r.counterexample}});
    seconds += r.seconds;
  }
  return {{"mutant", m.mutant.name()}, {"status", m.killed() ? "Killed" : "Survived"}, {"killed_by", m.killers()},
          {"seconds", seconds}, {"pairs", pairs}};
}

/// The verify step a sampler serves, as the laws' subject; it states its
/// contract (and its conventions' deviations, which it is judged by unless
/// --definition) on one line and in the report.
properties::VerifySubject sampler_subject(const protocol::ExternalSampler& sampler, nlohmann::json& report,
                                          const std::string& command) {
  const std::vector<std::string> deviations = protocol::describe_deviations(sampler.declared_conventions());
  std::printf("sampler %s (a verify step): %s%s\n", sampler.name().c_str(),
              protocol::describe_contract(sampler.contract()).c_str(),
              sampler.verify_rules().uniform_f32 ? ", u compared in fp32" : "");
  for (const std::string& d : deviations) std::printf("  declares %s\n", d.c_str());
  report["sampler"] = {{"command", command}, {"name", sampler.name()},
                       {"contract", protocol::contract_fields(sampler.contract())},
                       {"uniform_compare", sampler.verify_rules().uniform_f32 ? "f32" : "f64"},
                       {"deviations", deviations},
                       {"judged_by", sampler.spec().definition ? "definition" : "declared conventions"}};
  return {nullptr, kernels::Defect::none, &sampler};
}

}  // namespace

bool names_verify_kernels(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), properties::is_verify_name);
}

int check_verify(const CheckOptions& o, const protocol::ExternalSampler* sampler) {
  refuse_unsupported(o.shard.count > 1 || o.devices != 0, !sampler && o.sampler.given(), "check");
  if (!o.run_laws) throw std::invalid_argument("--no-laws: a verify step has no agreement run; its laws are the check");
  if (o.racecheck)
    throw std::invalid_argument("the verify mutants run in this process: --racecheck is for the sampling kernels' mutants");
  std::vector<VerifySubject> subjects;
  for (const std::string& n : o.kernels) {
    if (!properties::is_verify_name(n))
      throw std::invalid_argument("'" + n + "' is a sampling kernel: check it apart from the verify kernels");
    if (n.find('~') != std::string::npos)
      throw std::invalid_argument("'" + n + "' is a mutant: run it with `raceoracle mutants --mutants " + n + "`");
    subjects.push_back(properties::find_verify_subject(n));
  }
  const auto laws = properties::select_verify_laws(o.laws);
  if (o.mutants && !sampler) kernels::require_mutants_built();  // before the laws' minutes, not after
  const auto start = Clock::now();
  if (!sampler)  // check() printed it before it started the sampler
    std::printf("raceoracle check: backend %s (%s), seed %llu, %d cases per law\n", kernels::backend_name(),
                kernels::device_description().c_str(), static_cast<unsigned long long>(o.run.seed), o.run.cases);
  std::printf("the verify step (SPEC §11): random batches of requests (fixtures/verify_requests.h), failures narrowed "
              "to one request\n");
  if (!sampler && kernels::device_count() == 0) {
    std::printf("no %s device found: nothing can be checked\nverdict: FAIL\n", kernels::backend_name());
    return 2;
  }
  nlohmann::json report = {{"backend", kernels::backend_name()},
                           {"device", kernels::device_description()},
                           {"seed", o.run.seed},
                           {"cases", o.run.cases},
                           {"run", {{"command", "check"}, {"version", RACEORACLE_VERSION}, {"kernels", o.kernels},
                                    {"sampler", o.sampler.command}, {"properties", o.laws}, {"mutants", o.mutants}}},
                           {"properties", nlohmann::json::array()}};
  if (sampler) subjects.push_back(sampler_subject(*sampler, report, o.sampler.command));
  int failures = 0;
  const int width = name_width(subjects, 14);
  std::printf("\n== laws ==\n%-30s %-*s %-9s %7s %7s\n", "law", width, "subject", "result", "cases", "time");
  for (const VerifySubject& s : subjects)
    for (const properties::VerifyLaw* law : laws) {
      if (o.fail_fast && failures > 0) break;
      const LawResult r = properties::run_verify_law(*law, s, o.run);
      failures += !r.ok();
      const std::string replay = replay_line("check", *law, s, o.run);
      std::printf("%-30s %-*s %-9s %7d %6.1fs\n", law->name.c_str(), width, s.name().c_str(),
                  r.ok() ? "pass" : properties::to_string(r.verdict), r.cases, r.seconds);
      if (!r.ok()) std::printf("  %s\n  replay: %s\n", r.counterexample.c_str(), replay.c_str());
      std::fflush(stdout);
      report["properties"].push_back(law_json(*law, s, r, replay));
    }
  if (o.mutants && !sampler && !(o.fail_fast && failures > 0)) {  // a sampler's mutants are its own broken copies
    std::printf("\n== mutant gate ==\n");
    report["mutants"] = nlohmann::json::array();
    const std::vector<VerifySubject> ms = properties::verify_mutants(o.kernels);
    for (const VerifySubject& m : ms) {
      note(m.name() + " ...");
      const properties::VerifyMutantRun run = properties::run_verify_mutant(m, laws, o.run);
      print_mutant_row(run, name_width(ms, 36));
      failures += !run.killed();
      report["mutants"].push_back(mutant_json(run));
    }
  }
  std::printf("\n(no agreement run: it is the sampling kernels'; VerifyAgreesWithOracle judges every request)\n");
  report["failures"] = failures;
  report["seconds"] = since(start);
  report["verdict"] = failures == 0 ? "PASS" : "FAIL";
  std::printf("\nverdict: %s (%d failure%s, %.1f s)\n", failures == 0 ? "PASS" : "FAIL", failures,
              failures == 1 ? "" : "s", since(start));
  std::fflush(stdout);
  write_report_files(o.files, "check", report);
  return failures == 0 ? 0 : 1;
}

int mutants_verify(const MutantsOptions& o, const protocol::ExternalSampler* sampler) {
  refuse_unsupported(o.shard.count > 1, !sampler && o.sampler.given(), "mutants");
  if (o.racecheck || o.save_corpus || !o.report_json.empty() || !o.matrix_md.empty())
    throw std::invalid_argument("the verify mutants run in this process and report in --json: --racecheck, "
                                "--save-corpus, --report and --matrix are for the sampling kernels' mutants");
  std::vector<VerifySubject> ms;
  nlohmann::json sampler_json;
  if (sampler) ms.push_back(sampler_subject(*sampler, sampler_json, o.sampler.command));
  for (const std::string& n : o.mutants) {
    const VerifySubject m = properties::find_verify_subject(n);
    if (m.defect == kernels::Defect::none)
      throw std::invalid_argument("'" + n + "' is a real kernel, not a mutant: check it with `raceoracle check --kernels " +
                                  n + "`");
    ms.push_back(m);
  }
  const auto laws = properties::select_verify_laws(o.laws);
  nlohmann::json mutants = nlohmann::json::array();
  int bad = 0;
  const int width = name_width(ms, 36);
  std::printf("%-*s %-9s %s\n", width, "mutant", "result", "killers");
  std::vector<properties::VerifyMutantRun> runs;
  for (const VerifySubject& m : ms) {
    note(m.name() + " ...");
    runs.push_back(properties::run_verify_mutant(m, laws, o.run));
    print_mutant_row(runs.back(), width);
    mutants.push_back(mutant_json(runs.back()));
  }
  for (const auto& run : runs) {
    for (const auto& [law, r] : run.results)
      if (r.verdict == LawResult::Verdict::failed) {
        std::printf("\n%s killed by %s:\n  %s\n  replay: %s\n", run.mutant.name().c_str(), law->name.c_str(),
                    r.counterexample.c_str(), replay_line("mutants", *law, run.mutant, o.run).c_str());
        break;
      }
    const auto killers = run.killers();
    if (killers.empty()) {
      std::printf("GATE: %s was not killed by any law\n", run.mutant.name().c_str());
      ++bad;
    }
    for (const auto& want : o.expect_killed_by)
      if (std::find(killers.begin(), killers.end(), want) == killers.end()) {
        std::printf("GATE: %s was expected to be killed by %s\n", run.mutant.name().c_str(), want.c_str());
        ++bad;
      }
  }
  const nlohmann::json report{{"seed", o.run.seed}, {"cases", o.run.cases},
                              {"run", {{"command", "mutants"}, {"version", RACEORACLE_VERSION},
                                       {"mutants", o.mutants}, {"sampler", o.sampler.command}, {"properties", o.laws}}},
                              {"mutants", mutants}};
  write_report_files(o.files, "mutants", report, o.expect_killed_by);
  std::printf("verdict: %s\n", bad == 0 ? "PASS" : "FAIL");
  return bad == 0 ? 0 : 1;
}

}  // namespace raceoracle::cli
