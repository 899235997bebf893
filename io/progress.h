// A long run's progress on stderr, as a kernel engineer watches it: on a
// terminal one live line, redrawn as units start ("[12/84] AgreesWithOracle
// on fused-post, 1:02 elapsed, about 3.1 min left"); in CI (CI set, or stderr
// not a terminal) one line per finished unit, with the same counts.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace raceoracle::io {

/// "12 to go, about 40 s left" / "about 3.1 min left": the rest of a run at
/// its pace so far ("" before the first unit ends and after the last).
std::string time_left(double elapsed_s, std::size_t done, std::size_t total);

/// True when stderr is a terminal and CI is unset: progress redraws one line.
bool live_progress();

class Progress {
 public:
  /// `total` units; `live`: redraw one line (live_progress()), else a line a unit.
  Progress(std::size_t total, bool live);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// A unit starts: the live line shows it.
  void begin(const std::string& unit);
  /// It ended: the live line is cleared (the caller prints its result); in CI
  /// a line with the count, the unit's seconds and the time left.
  void end();
  std::size_t done() const { return done_; }

 private:
  using Clock = std::chrono::steady_clock;
  double elapsed() const;
  std::size_t total_, done_ = 0;
  bool live_, shown_ = false;
  std::string unit_;
  Clock::time_point start_ = Clock::now(), unit_start_ = start_;
};

}  // namespace raceoracle::io
