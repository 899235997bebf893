#pragma once
/// What the commands share: progress notes, report files, the mutant harness's settings.
#include <chrono>
#include <string>

#include "mutants/harness.h"
#include "mutants/report.h"

namespace raceoracle::cli {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// A progress line on stderr ("  .. text").
void note(const std::string& s);
/// Writes `text` to `path` and says so; throws std::runtime_error when it cannot.
void write_file(const std::string& path, const std::string& text);
/// The harness settings for a mutant gate: every pair in a child process that
/// execs this binary afresh (a GPU runtime does not survive fork).
mutants::HarnessSettings harness(const properties::RunSettings& rs, double timeout_s);

}  // namespace raceoracle::cli
