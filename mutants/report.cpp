#include "mutants/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "properties/data_dir.h"
#include "io/report_keys.h"

namespace raceoracle::mutants {
namespace {

using Kind = PairOutcome::Kind;

std::string kind_cell(Kind k) {
  switch (k) {
    case Kind::killed: return "KILL";
    case Kind::survived: return ".";
    case Kind::crashed: return "crash";
    case Kind::timed_out: return "timeout";
    case Kind::not_applicable: return "n/a";
  }
  return "?";
}

/// Where the defect is switched on in the kernel source, for the report.
struct Location {
  std::string file;
  int line = 1;
};
Location locate(kernels::Defect d) {
  const std::string needle = std::string("Defect::") + kernels::to_string(d);
  for (const char* f : {"kernels/race.h", "kernels/fused.hip", "kernels/baseline.hip"}) {
    std::ifstream in(properties::data_dir() + "/" + f);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (line.find(needle) != std::string::npos) return {f, n};
  }
  return {"kernels/defect.h", 1};
}

Kind kind_from_string(const std::string& s) {
  for (Kind k : {Kind::killed, Kind::survived, Kind::crashed, Kind::timed_out, Kind::not_applicable})
    if (s == to_string(k)) return k;
  throw std::invalid_argument("unknown pair outcome '" + s + "'");
}

}  // namespace

nlohmann::json pairs_json(const std::vector<MutantReport>& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : r) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const PairOutcome& p : m.pairs)
      pairs.push_back({{io::kLawKey, p.law}, {"outcome", to_string(p.kind)}, {"counterexample", p.counterexample},
                       {"replay", p.replay}, {"case", p.case_json}, {"detail", p.detail}, {"seconds", p.seconds},
                       {"settings", p.settings}});
    out.push_back({{"mutant", m.mutant->name()}, {"status", m.status()}, {"killed_by", m.killers()},
                   {"seconds", m.seconds}, {"pairs", pairs}});
  }
  return out;
}

std::vector<MutantReport> reports_from_json(const nlohmann::json& j) {
  std::vector<MutantReport> out;
  for (const auto& m : j) {
    const std::string name = m.at("mutant").get<std::string>();
    const kernels::Kernel* k = kernels::find_kernel(name);
    if (!k || !k->is_mutant()) throw std::invalid_argument("'" + name + "' is not a registered mutant");
    MutantReport r;
    r.mutant = &subject::subject_of(*k);
    r.seconds = m.at("seconds").get<double>();
    for (const auto& p : m.at("pairs"))
      r.pairs.push_back({kind_from_string(p.at("outcome").get<std::string>()), io::law_of(p),
                         p.at("counterexample").get<std::string>(), p.at("replay").get<std::string>(),
                         p.at("case").get<std::string>(), p.at("detail").get<std::string>(), p.at("seconds").get<double>(),
                         p.value("settings", std::string())});
    out.push_back(std::move(r));
  }
  return out;
}

double mutation_score(const std::vector<MutantReport>& r) {
  if (r.empty()) return 0;
  std::size_t killed = 0;
  for (const auto& m : r) killed += m.killed();
  return 100.0 * double(killed) / double(r.size());
}

std::string table(const std::vector<MutantReport>& r) {
  std::string s = fmt::format("{:<30} {:<13} {:>7}  {}\n", "mutant", "status", "time", "killed by");
  for (const auto& m : r) {
    std::string extra;
    for (const auto& p : m.pairs)
      if (p.kind == Kind::crashed || p.kind == Kind::timed_out)
        extra += fmt::format(" [{} {}: {}]", p.law, to_string(p.kind), p.detail);
    s += fmt::format("{:<30} {:<13} {:>6.1f}s  {}{}\n", m.mutant->name(), m.status(), m.seconds,
                     fmt::join(m.killers(), ", "), extra);
  }
  std::size_t killed = 0;
  for (const auto& m : r) killed += m.killed();
  s += fmt::format("mutation score: {:.1f}% ({} of {} mutants killed)\n", mutation_score(r), killed, r.size());
  return s;
}

std::string kill_matrix_markdown(const std::vector<MutantReport>& r) {
  if (r.empty()) return "";
  std::string s = "| mutant |";
  for (const auto& p : r.front().pairs) s += " " + p.law + " |";
  s += "\n|---|";
  for (std::size_t i = 0; i < r.front().pairs.size(); ++i) s += "---|";
  s += "\n";
  for (const auto& m : r) {
    s += "| `" + m.mutant->name() + "` |";
    for (const auto& p : m.pairs) s += " " + kind_cell(p.kind) + " |";
    s += "\n";
  }
  return s;
}

std::string mutation_report_json(const std::vector<MutantReport>& r) {
  nlohmann::json files = nlohmann::json::object();
  int id = 0;
  for (const auto& m : r) {
    const Location loc = m.mutant->kernel() ? locate(m.mutant->kernel()->defect) : Location{"external sampler", 1};
    if (!files.contains(loc.file)) {
      std::ifstream in(properties::data_dir() + "/" + loc.file);
      std::stringstream text;
      text << in.rdbuf();
      files[loc.file] = {{"language", "cpp"}, {"source", text.str()}, {"mutants", nlohmann::json::array()}};
    }
    const PairOutcome* kill = m.first_kill();
    const std::string reason = kill ? kill->counterexample : "";
    nlohmann::json j{{"id", std::to_string(++id)},
                     {"mutatorName", m.mutant->kernel() ? kernels::to_string(m.mutant->kernel()->defect) : "sampler"},
                     {"description", m.mutant->kernel() ? kernels::describe(m.mutant->kernel()->defect) : m.mutant->name()},
                     {"location", {{"start", {{"line", loc.line}, {"column", 1}}}, {"end", {{"line", loc.line}, {"column", 2}}}}},
                     {"status", m.status()},
                     {"killedBy", m.killers()},
                     {"statusReason", reason}};
    files[loc.file]["mutants"].push_back(j);
  }
  nlohmann::json report{{"schemaVersion", "1"}, {"thresholds", {{"high", 100}, {"low", 100}}}, {"files", files}};
  return report.dump(2);
}

}  // namespace raceoracle::mutants
