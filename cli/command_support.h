#pragma once
/// What the commands share: progress notes and report files.
#include <chrono>
#include <string>

namespace raceoracle::cli {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// A progress line on stderr ("  .. text").
void note(const std::string& s);
/// Writes `text` to `path` and says so; throws std::runtime_error when it cannot.
void write_file(const std::string& path, const std::string& text);

}  // namespace raceoracle::cli
