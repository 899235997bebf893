#include "cli/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/report_json.h"
#include "io/html.h"
#include "io/table.h"
#include "race/definition.h"
#include "io/report_keys.h"

namespace raceoracle::cli {
namespace {

using io::HtmlCell;
using nlohmann::json;

using report_json::killers;
using report_json::law_unit;
using report_json::outcome;
using report_json::text;
using report_json::texts;

HtmlCell num(const std::string& s) { return {s, "num", ""}; }

std::string verdict_badge(const std::string& verdict) {
  const std::string css = verdict == "PASS" ? "verdict pass" : verdict == "INTERRUPTED" ? "verdict skip" : "verdict fail";
  return "<p>" + io::html_element("span", verdict, css) + "</p>\n";
}

/// The run's identity: what a reader checks first (which build, which seed, which subjects).
std::string run_table(const std::string& command, const json& r) {
  const json run = r.value("run", json::object());
  std::vector<std::vector<HtmlCell>> rows;
  const auto row = [&rows](const std::string& k, const std::string& v) {
    if (!v.empty()) rows.push_back({{k, "", ""}, {v, "", ""}});
  };
  row("command", "raceoracle " + command);
  row("version", text(run, "version"));
  row("backend", text(r, "backend"));
  row("device", text(r, "device"));
  row("seed", text(r, "seed"));
  row("cases per law", text(r, "cases"));
  const std::vector<std::string> subjects = texts(run, command == "mutants" ? "mutants" : "kernels");
  row(command == "mutants" ? "mutants" : "subjects", !text(run, "sampler").empty() ? text(run, "sampler")
                                                     : subjects.empty()            ? ""
                                                                                   : fmt::format("{}", fmt::join(subjects, ", ")));
  if (r.contains("shard") && r["shard"].value("count", 1) > 1)
    row("shard", fmt::format("{} of {}", r["shard"].value("index", 0) + 1, r["shard"].value("count", 1)));
  if (r.contains("seconds")) row("seconds", fmt::format("{:.1f}", r.value("seconds", 0.0)));
  if (r.value("partial", false)) row("partial", "yes: interrupted before every unit ran");
  return io::html_table({"", ""}, rows);
}

/// The laws' table, then each failure in full; the laws a sampler cannot serve.
std::string laws_section(const json& r) {
  std::string out = "<h2>Laws</h2>\n";
  std::vector<std::vector<HtmlCell>> rows;
  std::string failures;
  for (const json& p : r.value("properties", json::array())) {
    const bool ok = text(p, "result") == "pass";
    const std::vector<std::string> required = texts(p, "required"), uncovered = texts(p, "uncovered");
    const std::string result = ok ? "pass" : uncovered.empty() ? text(p, "verdict") : "UNCOVERED";
    const std::string classes =
        required.empty() ? "-" : fmt::format("{} of {}", required.size() - uncovered.size(), required.size());
    rows.push_back({{law_unit(p), "", ""},
                    {text(p, "kernel"), "", ""},
                    {result, ok ? "pass" : "fail", ""},
                    num(text(p, "cases")),
                    {classes, uncovered.empty() ? "num" : "num fail", fmt::format("{}", fmt::join(required, ", "))},
                    num(fmt::format("{:.1f}", p.value("seconds", 0.0)))});
    if (ok) continue;
    failures += io::html_element("h3", fmt::format("{} on {}: {}", law_unit(p), text(p, "kernel"), result));
    if (!text(p, "counterexample").empty()) failures += io::html_element("pre", text(p, "counterexample"));
    if (!text(p, "replay").empty())
      failures += "<p>replay:</p>\n" + io::html_element("pre", text(p, "replay"), "replay");
    if (!uncovered.empty())
      failures += io::html_element("p", fmt::format("input classes never met: {}", fmt::join(uncovered, ", ")));
  }
  if (rows.empty()) out += io::html_element("p", "no law ran", "note");
  else
    out += io::html_table({"law", "subject", "result", "cases", "input classes met", "seconds"}, rows) +
           io::html_element("p", "hover over a count of input classes for the classes the law had to meet", "note");
  if (!failures.empty()) out += "<h2>Failures</h2>\n" + failures;
  std::vector<std::vector<HtmlCell>> na;
  for (const json& n : r.value("not_applicable", json::array()))
    na.push_back({{io::law_of(n), "", ""}, {text(n, "kernel"), "", ""}, {"n/a: " + text(n, "why"), "skip", ""}});
  if (!na.empty()) out += "<h2>Laws the sampler cannot serve</h2>\n" + io::html_table({"law", "subject", "why"}, na);
  if (r.contains("error")) out += "<h2>Run error</h2>\n" + io::html_element("pre", text(r, "error"), "fail");
  return out;
}

/// The kill matrix: a row per mutant, a column per law; a mutant fails as in the JUnit report.
std::string mutants_section(const json& r, const std::vector<std::string>& expect, int& failed) {
  std::vector<std::string> laws;
  for (const json& m : r["mutants"])
    for (const json& p : m.value("pairs", json::array()))
      if (std::find(laws.begin(), laws.end(), io::law_of(p)) == laws.end()) laws.push_back(io::law_of(p));
  std::vector<std::vector<HtmlCell>> rows;
  std::string survivors;
  for (const json& m : r["mutants"]) {
    std::map<std::string, std::string> outcomes;
    for (const json& p : m.value("pairs", json::array())) outcomes[io::law_of(p)] = outcome(p);
    const std::vector<std::string> killed_by = killers(m), missing = report_json::missing_killers(killed_by, expect);
    std::string verdict = "killed";
    if (killed_by.empty()) verdict = "SURVIVED";
    else if (!missing.empty()) verdict = fmt::format("not killed by {}", fmt::join(missing, ", "));
    const bool bad = verdict != "killed";
    failed += bad;
    std::vector<HtmlCell> row{{text(m, "mutant"), "", ""}, {verdict, bad ? "fail" : "pass", ""}};
    for (const std::string& law : laws) {
      const auto it = outcomes.find(law);
      const std::string o = it == outcomes.end() ? "-" : it->second;
      const bool killed = std::find(killed_by.begin(), killed_by.end(), law) != killed_by.end();
      row.push_back({o, killed ? "pass" : "skip", ""});
    }
    rows.push_back(std::move(row));
    if (!bad) continue;
    survivors += io::html_element("h3", text(m, "mutant") + ": " + verdict);
    for (const json& p : m.value("pairs", json::array())) {
      std::string line = io::law_of(p) + ": " + outcome(p);
      if (!text(p, "detail").empty()) line += " (" + text(p, "detail") + ")";
      survivors += io::html_element("p", line);
    }
  }
  std::vector<std::string> head{"mutant", "verdict"};
  head.insert(head.end(), laws.begin(), laws.end());
  std::string out = "<h2>Mutant gate: the kill matrix</h2>\n";
  if (r.contains("mutation_score"))
    out += io::html_element("p", fmt::format("mutation score: {}", text(r, "mutation_score")));
  out += io::html_table(head, rows) +
         io::html_element("p", "a green cell: the law killed the mutant (a failure on it); every mutant must be killed",
                          "note");
  if (!survivors.empty()) out += "<h2>Mutants not killed as required</h2>\n" + survivors;
  return out;
}

/// The agreement run: a row per (subject, mask, temperature) cell.
std::string agreement_section(const json& r) {
  std::vector<std::vector<HtmlCell>> rows;
  for (const json& a : r.value("agreement", json::array())) {
    const long long bad = a.value("unexplained", 0LL), out_of_range = a.value("out_of_range", 0LL);
    rows.push_back({{text(a, "kernel"), "", ""},
                    {text(a, "mask"), "", ""},
                    num(text(a, "temperature")),
                    num(text(a, "rows")),
                    num(text(a, "identical")),
                    num(text(a, "explained")),
                    {fmt::format("{}", bad), bad ? "num fail" : "num", ""},
                    {fmt::format("{}", out_of_range), out_of_range ? "num fail" : "num", ""}});
  }
  std::string out = "<h2>Agreement at the production shape</h2>\n" +
                    io::html_table({"subject", "mask", "T", "rows", "identical", "explained", "UNEXPLAINED", "out of range"}, rows) +
                    io::html_element("p",
                                     "explained: a legitimate fp32 divergence from the float64 oracle's token (the "
                                     "row's ambiguity set holds it); UNEXPLAINED: none explains it, a defect",
                                     "note");
  if (r.contains("agreement_error"))
    out += io::html_element("pre", "agreement run failed: " + text(r, "agreement_error"), "fail");
  return out;
}

}  // namespace

std::string html_of_report(const std::string& command, const json& r, const std::vector<std::string>& expect) {
  int failed_mutants = 0;
  std::string sections;
  if (r.contains("properties") || r.contains("not_applicable") || r.contains("error")) sections += laws_section(r);
  if (r.contains("mutants") && r["mutants"].is_array()) sections += mutants_section(r, expect, failed_mutants);
  if (r.contains("agreement") || r.contains("agreement_error")) sections += agreement_section(r);
  std::string verdict = text(r, "verdict");
  if (verdict.empty()) verdict = r.value("partial", false) ? "INTERRUPTED" : failed_mutants > 0 ? "FAIL" : "PASS";
  return io::html_page("raceoracle " + command, verdict_badge(verdict) + run_table(command, r) + sections);
}

DivergenceCharts divergence_charts(const io::Table& table, const std::string& keys) {
  const json rows = table.json();
  io::Chart error{"fp32 key error against its certified bound (" + keys + ")", "temperature", "relative key error",
                  true, true, {}};
  io::Chart rate{"rows two samplers under the contract may disagree on (the estimate, its 95% interval)",
                 "temperature", "disagreement rate per row", true, true, {}};
  for (const std::string order : race::kScalingOrderNames) {
    io::ChartSeries measured{order + "-scale: measured", {}, {}, {}, {}, false};
    io::ChartSeries bound{order + "-scale: bound", {}, {}, {}, {}, true};
    io::ChartSeries estimate{order + "-scale: estimate", {}, {}, {}, {}, false};
    io::ChartSeries upper{order + "-scale: 95% upper end", {}, {}, {}, {}, true};  // drawn where the estimate is 0
    for (const json& row : rows) {
      if (row.value("order", "") != order) continue;
      const double t = row.value("temperature", 0.0);
      const auto number = [&row](const char* key) { return row[key].is_number() ? row[key].get<double>() : NAN; };
      measured.x.push_back(t), measured.y.push_back(number("max_actual_rel_error"));
      bound.x.push_back(t), bound.y.push_back(number("max_bound"));
      estimate.x.push_back(t), estimate.y.push_back(number("rate"));
      estimate.lo.push_back(number("rate_lo")), estimate.hi.push_back(number("rate_hi"));
      upper.x.push_back(t), upper.y.push_back(number("rate_hi"));
    }
    if (measured.x.empty()) continue;
    error.series.push_back(measured);
    error.series.push_back(bound);
    rate.series.push_back(estimate);
    rate.series.push_back(upper);
  }
  return {error, rate};
}

std::string html_of_divergence(const std::string& heading, const io::Table& table, const DivergenceCharts& charts,
                               const std::string& notes, bool passed) {
  std::string body = verdict_badge(passed ? "PASS" : "FAIL") + io::html_element("p", heading);
  body += "<h2>fp32 key error</h2>\n" + io::svg_chart(charts.error) +
          table.html({"temperature", "order", "rows", "keys", "max_actual_rel_error", "rms_actual_rel_error", "max_bound",
                      "worst_ratio", "fused_explained", "fused_unexplained", "baseline_explained", "baseline_unexplained"});
  body += "<h2>Disagreement rate</h2>\n" + io::svg_chart(charts.rate) +
          table.html({"temperature", "order", "rate_exp_ulp", "rate_div_ulp", "rate", "rate_lo", "rate_hi",
                      "ambiguous_rows", "count_agrees"});
  if (!notes.empty()) body += "<h2>Noise</h2>\n" + io::html_element("pre", notes);
  return io::html_page("raceoracle divergence", body);
}

std::string html_of_file_verdict(const std::string& command, const std::string& heading, const io::Table& counts,
                                 const std::vector<std::string>& failures, const std::vector<std::string>& notes,
                                 bool passed) {
  std::string body = verdict_badge(passed ? "PASS" : "FAIL") + io::html_element("p", heading) + counts.html();
  if (!failures.empty())
    body += "<h2>Failures</h2>\n" + io::html_element("pre", fmt::format("{}", fmt::join(failures, "\n")), "fail");
  if (!notes.empty()) body += "<h2>Notes</h2>\n" + io::html_element("pre", fmt::format("{}", fmt::join(notes, "\n")));
  return io::html_page("raceoracle " + command, body);
}

std::string html_of_comparison(const std::string& heading, const io::Table& table,
                               const std::vector<std::string>& unexplained, const std::string& notes, bool passed) {
  std::string body = verdict_badge(passed ? "PASS" : "FAIL") + io::html_element("p", heading) + table.html();
  if (!unexplained.empty())
    body += "<h2>Rows no legitimate divergence explains</h2>\n" +
            io::html_element("pre", fmt::format("{}", fmt::join(unexplained, "\n")), "fail");
  if (!notes.empty()) body += "<h2>Noise</h2>\n" + io::html_element("pre", notes);
  return io::html_page("raceoracle divergence", body);
}

}  // namespace raceoracle::cli
