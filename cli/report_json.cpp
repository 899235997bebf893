#include "cli/report_json.h"
#include "io/report_keys.h"

#include <fmt/format.h>

#include <algorithm>

namespace raceoracle::cli::report_json {

using nlohmann::json;

std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::vector<std::string> texts(const json& j, const char* key) {
  std::vector<std::string> out;
  for (const json& w : j.value(key, json::array())) out.push_back(w.is_string() ? w.get<std::string>() : w.dump());
  return out;
}

std::string law_unit(const json& p) {
  std::string name = io::law_of(p);
  if (p.value("chunks", 1) > 1) name += fmt::format(" [{}/{}]", p.value("chunk", 0) + 1, p.value("chunks", 1));
  return name;
}

std::vector<std::string> killers(const json& m) { return texts(m, "killed_by"); }

std::string outcome(const json& p) { return text(p, "outcome"); }

std::vector<std::string> missing_killers(const std::vector<std::string>& killers, const std::vector<std::string>& expected) {
  std::vector<std::string> out;
  for (const std::string& want : expected)
    if (std::find(killers.begin(), killers.end(), want) == killers.end()) out.push_back(want);
  return out;
}

}  // namespace raceoracle::cli::report_json
