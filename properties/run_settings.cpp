#include "properties/run_settings.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace raceoracle::properties {
namespace {

/// The one list of RunSettings' fields: both directions walk it.
template <class S, class F>
void fields(S& s, F&& f) {
  f("seed", s.seed);
  f("cases", s.cases);
  f("reproduce", s.reproduce);
  f("corpus_dir", s.corpus_dir);
  f("subject_corpus_dir", s.subject_corpus_dir);
  f("matrix", s.matrix);
  f("shrink_seconds", s.shrink_seconds);
}

}  // namespace

std::string to_json(const RunSettings& s) {
  nlohmann::json j = nlohmann::json::object();
  fields(s, [&](const char* name, const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::uint64_t>) j[name] = std::to_string(v);
    else j[name] = v;
  });
  return j.dump();
}

RunSettings run_settings_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) throw std::invalid_argument("run settings: not a JSON object: " + text.substr(0, 80));
  RunSettings s;
  std::size_t n = 0;
  fields(s, [&](const char* name, auto& v) {
    using T = std::decay_t<decltype(v)>;
    ++n;
    if (!j.contains(name)) throw std::invalid_argument(std::string("run settings: '") + name + "' is missing");
    const nlohmann::json& x = j.at(name);
    if constexpr (std::is_same_v<T, std::uint64_t>) {
      const std::string d = x.is_string() ? x.get<std::string>() : "";
      std::size_t used = 0;
      unsigned long long u = 0;
      try {
        u = std::stoull(d, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (d.empty() || used != d.size() || d[0] == '-' || d[0] == '+' || d[0] == ' ')
        throw std::invalid_argument(std::string("run settings: '") + name + "' must be a decimal string, got " + x.dump());
      v = u;
    } else {
      const bool ok = std::is_same_v<T, bool>          ? x.is_boolean()
                      : std::is_same_v<T, std::string> ? x.is_string()
                      : std::is_same_v<T, int>         ? x.is_number_integer()
                                                       : x.is_number();
      if (!ok) throw std::invalid_argument(std::string("run settings: '") + name + "' has the wrong type: " + x.dump());
      try {
        v = x.get<T>();
      } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("run settings: '") + name + "': " + e.what());
      }
    }
  });
  if (j.size() != n) throw std::invalid_argument("run settings: unknown fields in " + text.substr(0, 200));
  return s;
}

}  // namespace raceoracle::properties
