#include "mutants/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "io/files.h"

namespace raceoracle::mutants {
namespace {

using nlohmann::json;

/// A shard's report is a few MB at most; the limit stops a wrong path (a
/// device, a huge file) from exhausting memory.
constexpr std::size_t kReportLimit = std::size_t(1) << 30;

json read_report(const std::string& path) {
  const std::string text = io::read_file(path, kReportLimit);
  try {
    json j = json::parse(text);
    if (!j.contains("shard") || !j.contains("units"))
      throw std::invalid_argument("not a shard report (no \"shard\" and \"units\": write it with --json)");
    return j;
  } catch (const json::exception& e) {
    throw std::invalid_argument(path + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
}

/// The entries of section `key` of every shard, ordered by unit (stable: a
/// unit's entries keep their order).
json joined(const std::vector<json>& shards, const std::string& key) {
  json all = json::array();
  for (const json& s : shards)
    if (s.contains(key))
      for (const json& e : s[key]) all.push_back(e);
  std::stable_sort(all.begin(), all.end(), [](const json& a, const json& b) { return a["unit"] < b["unit"]; });
  return all;
}

}  // namespace

MergedRun merge_shards(const std::vector<std::string>& paths) {
  std::vector<json> shards;
  for (const std::string& path : paths) shards.push_back(read_report(path));
  if (shards.empty()) throw std::invalid_argument("no reports to merge");
  const json& first = shards.front();
  const int n = first["shard"]["count"].get<int>();
  std::set<int> seen;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const json& s = shards[i];
    if (s.value("partial", false))
      throw std::invalid_argument(fmt::format("{} is a partial report (its run was interrupted): run that shard again",
                                              paths[i]));
    for (const char* key : {"seed", "cases", "cases_per_unit", "units", "backend"})
      if (s.value(key, json()) != first.value(key, json()))
        throw std::invalid_argument(fmt::format("{} and {} are not shards of one run: their {} differ ({} vs {})",
                                                paths[0], paths[i], key, first.value(key, json()).dump(),
                                                s.value(key, json()).dump()));
    // Everything the user named (kernels, properties, sampler, contract, version, ...).
    const json mine = s.value("run", json::object()), theirs = first.value("run", json::object());
    for (const auto& [key, value] : theirs.items())
      if (mine.value(key, json()) != value)
        throw std::invalid_argument(fmt::format("{} and {} are not shards of one run: their {} differ ({} vs {})",
                                                paths[0], paths[i], key, value.dump(), mine.value(key, json()).dump()));
    for (const auto& [key, value] : mine.items())
      if (!theirs.contains(key))
        throw std::invalid_argument(fmt::format("{} and {} are not shards of one run: only the second has {} ({})",
                                                paths[0], paths[i], key, value.dump()));
    if (s["shard"]["count"].get<int>() != n)
      throw std::invalid_argument(fmt::format("{} is a shard of {}, {} of {}", paths[i], s["shard"]["count"].dump(),
                                              paths[0], n));
    if (!seen.insert(s["shard"]["index"].get<int>()).second)
      throw std::invalid_argument(fmt::format("shard {}/{} is given twice", s["shard"]["index"].dump(), n));
  }
  std::vector<int> missing;
  for (int i = 0; i < n; ++i)
    if (!seen.count(i)) missing.push_back(i);
  if (!missing.empty())
    throw std::invalid_argument(fmt::format("shards {} of {} are missing", fmt::join(missing, ", "), n));

  json out = first;
  out["shard"] = {{"index", 0}, {"count", 1}};
  double seconds = 0;
  for (const json& s : shards) seconds += s.value("seconds", 0.0);
  out["seconds"] = seconds;  // summed over shards
  int failures = 0;
  std::set<std::size_t> units;
  auto any_has = [&](const char* key) {
    return std::any_of(shards.begin(), shards.end(), [&](const json& s) { return s.contains(key); });
  };
  auto count = [&](const json& entry) {
    if (!units.insert(entry["unit"].get<std::size_t>()).second)
      throw std::invalid_argument(fmt::format("unit {} is in two reports", entry["unit"].dump()));
  };
  if (any_has("properties")) {
    out["properties"] = joined(shards, "properties");
    for (const json& p : out["properties"]) count(p), failures += p["result"] != "pass";
  }
  if (any_has("agreement")) {
    out["agreement"] = joined(shards, "agreement");
    std::set<std::size_t> agreement_units;
    for (const json& c : out["agreement"]) {
      agreement_units.insert(c["unit"].get<std::size_t>());
      failures += c["unexplained"].get<long long>() + c["out_of_range"].get<long long>() > 0;
    }
    for (std::size_t u : agreement_units) count(json{{"unit", u}});
  }
  for (const json& s : shards)
    if (s.contains("agreement_error")) out["agreement_error"] = s["agreement_error"], ++failures;
  std::vector<mutants::MutantReport> reports;
  if (any_has("mutants")) {
    std::map<std::string, json> by_name;
    for (const json& s : shards)
      for (const json& m : s.value("mutants", json::array())) {
        json& into = by_name.try_emplace(m["mutant"].get<std::string>(), json{{"mutant", m["mutant"]}, {"seconds", 0.0},
                                                                                {"pairs", json::array()}}).first->second;
        into["seconds"] = into["seconds"].get<double>() + m["seconds"].get<double>();
        for (const json& p : m["pairs"]) count(p), into["pairs"].push_back(p);
      }
    json list = json::array();
    for (auto& [name, m] : by_name) {
      std::stable_sort(m["pairs"].begin(), m["pairs"].end(), [](const json& a, const json& b) { return a["unit"] < b["unit"]; });
      list.push_back(m);
    }
    std::stable_sort(list.begin(), list.end(), [](const json& a, const json& b) { return a["pairs"][0]["unit"] < b["pairs"][0]["unit"]; });
    reports = mutants::reports_from_json(list);
    json merged = mutants::pairs_json(reports);
    for (std::size_t i = 0; i < merged.size(); ++i)
      for (std::size_t k = 0; k < merged[i]["pairs"].size(); ++k) merged[i]["pairs"][k]["unit"] = list[i]["pairs"][k]["unit"];
    out["mutants"] = merged;
    if (any_has("mutation_score")) out["mutation_score"] = mutants::mutation_score(reports);
    for (const auto& r : reports) failures += !r.killed();
  }
  const std::size_t want = first["units"].get<std::size_t>();
  if (units.size() != want)
    throw std::invalid_argument(fmt::format("the reports hold {} of the run's {} units", units.size(), want));
  if (first.contains("failures")) {
    out["failures"] = failures;
    out["verdict"] = failures == 0 ? "PASS" : "FAIL";
  }
  return MergedRun{std::move(out), std::move(reports), n, want, failures};
}

}  // namespace raceoracle::mutants
