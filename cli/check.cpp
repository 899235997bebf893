#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "fixtures/case.h"
#include "kernels/device_memory.h"
#include "mutants/runner.h"
#include "properties/data_dir.h"
#include "properties/suite.h"

namespace raceoracle::cli {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void note(const std::string& s) {
  std::fprintf(stderr, "  .. %s\n", s.c_str());
  std::fflush(stderr);
}

/// The harness settings for the mutant gate: every pair in a child process
/// that execs this binary afresh (a GPU runtime does not survive fork).
mutants::HarnessSettings harness(const properties::RunSettings& rs, double timeout_s) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return mutants::HarnessSettings{rs, timeout_s, true, ec ? std::string() : self.string()};
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << text;
  std::printf("wrote %s\n", path.c_str());
}

}  // namespace

int list() {
  std::printf("data: %s\n", properties::data_dir().c_str());
  std::printf("kernels (%s backend):\n", kernels::backend_name());
  for (const auto& k : kernels::kernels()) {
    const auto c = k.contract();
    std::printf("  %-24s %s-scale, exp %.1f ulp, div %.1f ulp%s\n", k.name.c_str(), oracle::to_string(c.order), c.exp_ulp,
                c.div_ulp, c.two_stage ? ", two-stage" : "");
  }
  std::printf("mutants:\n");
  for (const auto& k : kernels::mutants()) std::printf("  %s\n", k.name.c_str());
  std::printf("properties:\n");
  for (const auto& p : properties::properties()) {
    const std::string needs = properties::needs_note(p.needs);
    std::printf("  %-24s %s%s\n", p.name.c_str(), p.statement.c_str(), needs.empty() ? "" : (" (" + needs + ")").c_str());
  }
  return 0;
}

namespace {

/// The subjects of a check: the named kernels, or the one external sampler
/// (kept alive in `sampler`). Empty when the sampler could not be started.
std::vector<const fixtures::Subject*> subjects_of(const CheckOptions& o,
                                                 std::unique_ptr<protocol::ExternalSampler>& sampler) {
  std::vector<const fixtures::Subject*> out;
  if (o.sampler.given()) {
    try {
      sampler = open_sampler(o.sampler);
    } catch (const protocol::Breakdown& e) {
      std::printf("sampler %s: %s\n", protocol::to_string(e.kind), e.what());
      return out;
    }
    out.push_back(sampler.get());
    return out;
  }
  for (const kernels::Kernel* k : resolve_kernels(o.kernels, false)) out.push_back(&fixtures::subject_of(*k));
  return out;
}

}  // namespace

int check(const CheckOptions& o) {
  const auto start = Clock::now();
  nlohmann::json report;
  report["backend"] = kernels::backend_name();
  report["device"] = kernels::device_description();
  report["seed"] = o.seed;
  report["cases"] = o.cases;
  std::printf("raceoracle check: backend %s (%s), seed %llu, %d cases per property\n", kernels::backend_name(),
              kernels::device_description().c_str(), static_cast<unsigned long long>(o.seed), o.cases);
  std::fflush(stdout);
  std::unique_ptr<protocol::ExternalSampler> sampler;
  const auto ks = subjects_of(o, sampler);
  auto finish = [&](int failures) {
    report["failures"] = failures;
    report["seconds"] = since(start);
    report["verdict"] = failures == 0 ? "PASS" : "FAIL";
    if (!o.json.empty()) write_file(o.json, report.dump(2) + "\n");
    std::printf("\nverdict: %s (%d failure%s, %.1f s)\n", failures == 0 ? "PASS" : "FAIL", failures,
                failures == 1 ? "" : "s", since(start));
    return failures == 0 ? 0 : 1;
  };
  if (ks.empty()) {
    report["error"] = "the sampler could not be started";
    return finish(1);
  }
  if (sampler) {
    report["sampler"] = {{"command", o.sampler.command}, {"name", sampler->name()},
                         {"contract", protocol::contract_fields(sampler->contract())}};
    std::printf("sampler %s: %s\n", sampler->name().c_str(), protocol::describe_contract(sampler->contract()).c_str());
  } else if (kernels::device_count() == 0) {
    std::printf("no %s device found: nothing can be checked\nverdict: FAIL\n", kernels::backend_name());
    return 2;
  }
  for (const std::string& name : o.properties)
    if (!properties::find_property(name)) throw std::invalid_argument("unknown property '" + name + "'");
  auto selected = [&](const properties::Property& p) {
    return o.properties.empty() || std::find(o.properties.begin(), o.properties.end(), p.name) != o.properties.end();
  };
  int failures = 0;

  // 1. The property suite on each subject.
  std::printf("\n== properties ==\n%-24s %-14s %-9s %7s %7s\n", "property", "subject", "result", "cases", "time");
  properties::RunSettings rs{o.seed, o.cases, ""};
  for (const auto* k : ks)
    for (const auto& p : properties::properties()) {
      if (!selected(p)) continue;
      if (!p.applies_to(*k)) {
        if (sampler) std::printf("%-24s %-14s %-9s (%s)\n", p.name.c_str(), k->name().c_str(), "n/a", properties::needs_note(p.needs));
        continue;
      }
      const auto r = properties::run_property(p, *k, rs);
      const bool ok = r.ok();
      failures += !ok;
      std::printf("%-24s %-14s %-9s %7d %6.1fs\n", p.name.c_str(), k->name().c_str(),
                  ok ? "pass" : r.uncovered.empty() ? properties::to_string(r.verdict) : "UNCOVERED", r.cases, r.seconds);
      if (!r.counterexample.empty()) std::printf("  %s\n  replay: %s\n", r.counterexample.c_str(), properties::replay_command(p, *k, r).c_str());
      if (o.save_failures && !sampler && !r.case_json.empty() && r.reproduce.size() > 0)
        std::printf("  saved to the regression corpus: %s (commit it to keep it)\n",
                    properties::save_to_corpus(properties::default_corpus_dir(), p.name,
                                               "found by raceoracle check on " + k->name(), r.case_json).c_str());
      if (!r.uncovered.empty()) std::printf("  input classes never met: %s\n", fmt::format("{}", fmt::join(r.uncovered, ", ")).c_str());
      std::fflush(stdout);
      report["properties"].push_back({{"property", p.name}, {"kernel", k->name()}, {"result", ok ? "pass" : "fail"},
                                      {"verdict", properties::to_string(r.verdict)}, {"cases", r.cases},
                                      {"seconds", r.seconds}, {"uncovered", r.uncovered},
                                      {"counterexample", r.counterexample}, {"reproduce", r.reproduce},
                                      {"case", r.case_json}, {"replay", r.ok() ? "" : properties::replay_command(p, *k, r)}});
    }

  // 2. The mutant gate: every mutant must be killed by a property failure.
  if (o.mutants && sampler) {
    std::printf("\n== mutant gate ==\nn/a: the mutants are raceoracle's own kernels; gate a broken sampler with "
                "`raceoracle mutants --sampler CMD`\n");
  } else if (o.mutants) {
    std::printf("\n== mutant gate ==\n");
    std::fflush(stdout);
    const mutants::HarnessSettings hs = harness(rs, o.mutant_timeout_s);
    std::vector<mutants::MutantReport> reports;
    for (const auto& m : kernels::mutants()) {
      reports.push_back(mutants::run_mutant(fixtures::subject_of(m), hs));
      note(fmt::format("{}: {} ({:.1f} s)", m.name, reports.back().status(), reports.back().seconds));
    }
    std::printf("%s", mutants::table(reports).c_str());
    for (const auto& r : reports) {
      failures += !r.killed();
      report["mutants"].push_back({{"mutant", r.mutant->name()}, {"status", r.status()}, {"killed_by", r.killers()}});
    }
    report["mutation_score"] = mutants::mutation_score(reports);
  }

  // 3. Agreement at the production shape, per case.
  if (!o.run_agreement) return finish(failures);
  std::printf("\n== agreement: %lld rows x %lld ids, %s, %d batch(es) ==\n", static_cast<long long>(o.agreement.rows),
              static_cast<long long>(o.agreement.vocab), oracle::to_string(o.agreement.dtype), o.agreement.batches);
  std::fflush(stdout);
  std::vector<AgreementCell> cells;
  try {
    cells = run_agreement(ks, o.agreement, note);
  } catch (const std::exception& e) {
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
    report["agreement"].push_back({{"kernel", c.kernel}, {"mask", c.mask}, {"temperature", c.temperature},
                                   {"rows", c.rows}, {"identical", c.identical}, {"explained", c.explained},
                                   {"unexplained", c.unexplained}, {"out_of_range", c.out_of_range}});
  }
  return finish(failures);
}

int mutants(const MutantsOptions& o) {
  std::unique_ptr<protocol::ExternalSampler> sampler;
  std::vector<const fixtures::Subject*> ms;
  if (o.sampler.given()) {
    if (!o.mutants.empty()) throw std::invalid_argument("give --mutants or --sampler, not both");
    sampler = open_sampler(o.sampler);
    ms.push_back(sampler.get());
  } else {
    for (const kernels::Kernel* k : resolve_kernels(o.mutants, true)) ms.push_back(&fixtures::subject_of(*k));
  }
  properties::RunSettings rs{o.seed, o.cases, ""};
  if (!o.corpus) rs.corpus_dir.clear();
  const mutants::HarnessSettings hs = harness(rs, o.timeout_s);
  std::vector<mutants::MutantReport> reports;
  for (const auto* m : ms) {
    note(m->name() + " ...");
    reports.push_back(mutants::run_mutant(*m, hs, [](const mutants::PairOutcome& p) {
      if (p.kind != mutants::PairOutcome::Kind::not_applicable)
        note(fmt::format("  {}: {} ({:.1f} s)", p.property, mutants::to_string(p.kind), p.seconds));
    }));
  }
  std::printf("%s", mutants::table(reports).c_str());
  // The first killer's counterexample per mutant; the report JSON has the rest.
  for (const auto& r : reports) {
    const mutants::PairOutcome* p = r.first_kill();
    if (!p) continue;
    std::printf("\n%s killed by %s:\n  %s\n  replay: %s\n", r.mutant->name().c_str(), p->property.c_str(),
                p->counterexample.c_str(), p->replay.c_str());
    if (o.save_corpus && !sampler && !p->case_json.empty())
      std::printf("saved %s\n", properties::save_to_corpus(properties::default_corpus_dir(), p->property,
                                                            "shrunk counterexample that killed " + r.mutant->name(),
                                                            p->case_json).c_str());
  }
  if (!o.report_json.empty()) write_file(o.report_json, mutants::mutation_report_json(reports) + "\n");
  if (!o.matrix_md.empty()) write_file(o.matrix_md, mutants::kill_matrix_markdown(reports));
  int bad = 0;
  for (const auto& r : reports) {
    if (!r.killed()) {
      std::printf("GATE: %s was not killed by any property (%s)\n", r.mutant->name().c_str(), r.status().c_str());
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

int replay(const ReplayOptions& o) {
  const properties::Property* p = properties::find_property(o.property);
  if (!p) throw std::invalid_argument("unknown property '" + o.property + "'");
  if (o.kernel.empty() == !o.sampler.given()) throw std::invalid_argument("replay needs one of --kernel or --sampler");
  std::unique_ptr<protocol::ExternalSampler> sampler;
  const fixtures::Subject* k = nullptr;
  if (o.sampler.given()) {
    sampler = open_sampler(o.sampler);
    k = sampler.get();
  } else {
    const kernels::Kernel* kk = kernels::find_kernel(o.kernel);
    if (!kk) throw std::invalid_argument("unknown kernel '" + o.kernel + "'; known: " + kernels::kernel_names());
    k = &fixtures::subject_of(*kk);
  }
  if (!p->applies_to(*k))
    throw std::invalid_argument(p->name + " does not apply to " + k->name() + ": " + properties::needs_note(p->needs));
  if (!o.case_json.empty()) {
    std::string text = o.case_json;
    if (std::ifstream f(text); text.front() != '{' && f) {
      std::stringstream ss;
      ss << f.rdbuf();
      text = ss.str();
    }
    const auto spec = fixtures::case_from_json(text);
    const std::string failure = properties::run_case(*p, *k, spec);
    std::printf("%s on %s, case %s: %s\n", p->name.c_str(), k->name().c_str(), fixtures::describe(spec).c_str(),
                failure.empty() ? "holds" : "FAILS");
    if (!failure.empty()) std::printf("  %s\n", failure.c_str());
    return failure.empty() ? 0 : 1;
  }
  if (o.reproduce.empty()) throw std::invalid_argument("replay needs --reproduce or --case");
  const auto r = properties::run_property(*p, *k, {o.seed, o.cases, o.reproduce, ""});
  std::printf("%s on %s: %s\n", p->name.c_str(), k->name().c_str(), r.summary().c_str());
  if (!r.counterexample.empty()) std::printf("%s\n", r.counterexample.c_str());
  return r.verdict == properties::PropertyResult::Verdict::passed ? 0 : 1;
}

}  // namespace raceoracle::cli
