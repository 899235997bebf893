#include "cli/junit_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/report_json.h"
#include "io/junit.h"
#include "io/report_keys.h"

namespace raceoracle::cli {
namespace {

using nlohmann::json;

using report_json::killers;
using report_json::outcome;
using report_json::text;

double seconds(const json& j) { return j.value("seconds", 0.0); }

/// The run's identity, on every suite: what a CI page shows beside the cases.
std::vector<std::pair<std::string, std::string>> run_properties(const json& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* key : {"backend", "device", "seed", "cases"})
    if (r.contains(key)) out.emplace_back(key, text(r, key));
  if (r.contains("sampler") && r["sampler"].is_object()) out.emplace_back("sampler", text(r["sampler"], "name"));
  if (r.contains("verdict")) out.emplace_back("verdict", text(r, "verdict"));
  return out;
}

io::JunitSuite laws_suite(const std::string& command, const json& r) {
  io::JunitSuite s{command + ": laws", run_properties(r), {}};
  for (const json& p : r.value("properties", json::array())) {
    io::JunitCase c;
    c.classname = text(p, "kernel");
    c.name = report_json::law_unit(p);
    c.seconds = seconds(p);
    if (text(p, "result") != "pass") {
      std::vector<std::string> lines, classes;
      if (!text(p, "counterexample").empty()) lines.push_back(text(p, "counterexample"));
      if (!text(p, "replay").empty()) lines.push_back("replay: " + text(p, "replay"));
      for (const json& u : p.value("uncovered", json::array())) classes.push_back(u.get<std::string>());
      if (!classes.empty()) lines.push_back(fmt::format("input classes never met: {}", fmt::join(classes, ", ")));
      c.failure = io::JunitOutcome{
          fmt::format("{} on {}: {} after {} cases", c.name, c.classname,
                      classes.empty() ? text(p, "verdict") : "UNCOVERED", p.value("cases", 0)),
          fmt::format("{}", fmt::join(lines, "\n"))};
    }
    s.cases.push_back(std::move(c));
  }
  for (const json& n : r.value("not_applicable", json::array()))
    s.cases.push_back({text(n, "kernel"), io::law_of(n), 0, std::nullopt,
                       io::JunitOutcome{"n/a: " + text(n, "why"), ""}});
  if (r.contains("error"))
    s.cases.push_back({"run", "start", 0, io::JunitOutcome{text(r, "error"), ""}, std::nullopt});
  return s;
}

io::JunitSuite mutants_suite(const std::string& command, const json& r, const std::vector<std::string>& expect) {
  io::JunitSuite s{command + ": mutant gate", run_properties(r), {}};
  for (const json& m : r["mutants"]) {
    io::JunitCase c{"mutant gate", text(m, "mutant"), seconds(m), std::nullopt, std::nullopt};
    const std::vector<std::string> killed_by = killers(m), missing = report_json::missing_killers(killed_by, expect);
    std::vector<std::string> outcomes;
    for (const json& p : m.value("pairs", json::array())) {
      std::string line = fmt::format("{}: {}", io::law_of(p), outcome(p));
      if (!text(p, "detail").empty()) line += " (" + text(p, "detail") + ")";
      outcomes.push_back(line);
      if (!text(p, "counterexample").empty()) outcomes.push_back("  " + text(p, "counterexample"));
      if (!text(p, "replay").empty()) outcomes.push_back("  replay: " + text(p, "replay"));
    }
    const std::string body = fmt::format("{}", fmt::join(outcomes, "\n"));
    if (killed_by.empty())
      c.failure = io::JunitOutcome{fmt::format("{} survived every law ({})", c.name, text(m, "status")), body};
    else if (!missing.empty())
      c.failure = io::JunitOutcome{fmt::format("{} was killed by {}, not by {}", c.name, fmt::join(killed_by, ", "),
                                               fmt::join(missing, ", ")),
                                   body};
    s.cases.push_back(std::move(c));
  }
  return s;
}

io::JunitSuite agreement_suite(const std::string& command, const json& r) {
  io::JunitSuite s{command + ": agreement", run_properties(r), {}};
  for (const json& a : r.value("agreement", json::array())) {
    io::JunitCase c{"agreement." + text(a, "kernel"), fmt::format("{} T={}", text(a, "mask"), text(a, "temperature")), 0,
                    std::nullopt, std::nullopt};
    const long long bad = a.value("unexplained", 0LL), out = a.value("out_of_range", 0LL);
    if (bad + out > 0)
      c.failure = io::JunitOutcome{fmt::format("{} UNEXPLAINED and {} OUT-OF-RANGE of {} rows", bad, out,
                                               a.value("rows", 0LL)),
                                   ""};
    s.cases.push_back(std::move(c));
  }
  if (r.contains("agreement_error"))
    s.cases.push_back({"agreement", "run", 0, io::JunitOutcome{text(r, "agreement_error"), ""}, std::nullopt});
  return s;
}

}  // namespace

std::string junit_of_report(const std::string& command, const json& report, const std::vector<std::string>& expect) {
  const std::string name = "raceoracle " + command;
  std::vector<io::JunitSuite> suites;
  if (report.contains("properties") || report.contains("not_applicable") || report.contains("error"))
    suites.push_back(laws_suite(name, report));
  if (report.contains("mutants") && report["mutants"].is_array()) suites.push_back(mutants_suite(name, report, expect));
  if (report.contains("agreement") || report.contains("agreement_error")) suites.push_back(agreement_suite(name, report));
  // An interrupted run is no green page: one case in error says what never ran.
  if (report.value("partial", false)) {
    io::JunitCase c{"run", "interrupted", 0, std::nullopt, std::nullopt};
    c.error = io::JunitOutcome{"the run was interrupted before every unit ran: these cases are the units that ended "
                               "before it; the rest never ran",
                               ""};
    suites.push_back(io::JunitSuite{name + ": run", run_properties(report), {std::move(c)}});
  }
  return io::junit_xml(name, suites);
}

std::string junit_of_file_verdict(const std::string& command, const std::string& file, bool ok,
                                  const std::string& summary, const std::vector<std::string>& failures, double secs) {
  io::JunitCase c{command, file, secs, std::nullopt, std::nullopt};
  if (!ok) c.failure = io::JunitOutcome{summary, fmt::format("{}", fmt::join(failures, "\n"))};
  return io::junit_xml("raceoracle " + command, {io::JunitSuite{"raceoracle " + command, {}, {std::move(c)}}});
}

}  // namespace raceoracle::cli
