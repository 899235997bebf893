#pragma once
/// The key a report entry or a corpus entry names its law by. Everything
/// raceoracle writes says "law"; files written before 2026-12-07 said
/// "property", which is read here and nowhere else, so old shard reports
/// still merge and old corpora still replay.
#include <nlohmann/json.hpp>

#include <string>

namespace raceoracle::io {

inline constexpr const char* kLawKey = "law";

/// The law `entry` names: its "law", else its "property" (the key before
/// 2026-12-07), else "".
std::string law_of(const nlohmann::json& entry);

}  // namespace raceoracle::io
