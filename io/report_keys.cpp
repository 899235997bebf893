#include "io/report_keys.h"

namespace raceoracle::io {

std::string law_of(const nlohmann::json& entry) {
  for (const char* key : {kLawKey, "property"}) {
    const auto it = entry.find(key);
    if (it != entry.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

}  // namespace raceoracle::io
