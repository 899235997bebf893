#pragma once
/// What the commands share: progress notes and report files.
#include <chrono>
#include <memory>
#include <string>

#include "protocol/external_sampler.h"

namespace raceoracle::cli {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// A progress line on stderr ("  .. text").
void note(const std::string& s);
/// Writes `text` to `path` and says so; throws std::runtime_error when it cannot.
void write_file(const std::string& path, const std::string& text);

/// Starts the sampler of `spec` for a command that judges its tokens draw by
/// draw on noise it is given (check, mutants, replay, divergence); refuses
/// (std::invalid_argument) one that draws its own randomness, naming the
/// command that judges it (`raceoracle frequency`).
std::unique_ptr<protocol::ExternalSampler> start_replayable(const protocol::SamplerSpec& spec);

}  // namespace raceoracle::cli
