#pragma once
/// What the commands share: progress notes and report files.
#include <chrono>
#include <memory>
#include <string>

#include "mutants/gate.h"
#include "protocol/external_sampler.h"

namespace raceoracle::cli {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// A progress line on stderr ("  .. text").
void note(const std::string& s);
/// What a mutant gate notes as it goes: each mutant as it starts, each
/// (mutant, law) pair as it ends when `pairs`, and each mutant's verdict with
/// the count done and the time left (mutants::progress_line) as it ends.
mutants::GateProgress gate_progress(bool pairs);
/// Writes `text` to `path` and says so; throws std::runtime_error when it cannot.
void write_file(const std::string& path, const std::string& text);

/// Starts the sampler of `spec` for a command that judges its tokens draw by
/// draw on noise it is given (check, mutants, replay, divergence); refuses
/// (std::invalid_argument) one that draws its own randomness, naming the
/// command that judges it (`raceoracle frequency`).
std::unique_ptr<protocol::ExternalSampler> start_replayable(const protocol::SamplerSpec& spec);

/// Refuses (std::invalid_argument) `--racecheck` where it cannot run: a build
/// of another backend than nvidia (compute-sanitizer), or an external sampler.
void require_racecheck_runs(bool sampler_given);

}  // namespace raceoracle::cli
