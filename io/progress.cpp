#include "io/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace raceoracle::io {

std::string time_left(double elapsed_s, std::size_t done, std::size_t total) {
  if (done == 0 || done >= total) return "";
  const double left = elapsed_s / double(done) * double(total - done);
  return fmt::format("{} to go, about {}", total - done,
                     left < 90 ? fmt::format("{:.0f} s left", left) : fmt::format("{:.1f} min left", left / 60));
}

bool live_progress() {
  const char* ci = std::getenv("CI");
  return isatty(STDERR_FILENO) && !(ci && *ci);
}

namespace {
std::string clock_text(double s) {
  const long t = long(s);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}
}  // namespace

Progress::Progress(std::size_t total, bool live) : total_(total), live_(live) {}

Progress::~Progress() {
  if (shown_) std::fputs("\r\033[K", stderr);
}

double Progress::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void Progress::begin(const std::string& unit) {
  unit_ = unit;
  unit_start_ = Clock::now();
  if (!live_) return;
  const std::string left = time_left(elapsed(), done_, total_);
  std::fprintf(stderr, "\r\033[K[%zu/%zu] %s, %s elapsed%s", done_ + 1, total_, unit.c_str(), clock_text(elapsed()).c_str(),
               left.empty() ? "" : (", " + left).c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::end() {
  ++done_;
  if (live_) {
    if (shown_) std::fputs("\r\033[K", stderr), std::fflush(stderr);
    shown_ = false;
    return;
  }
  const double unit_s = std::chrono::duration<double>(Clock::now() - unit_start_).count();
  const std::string left = time_left(elapsed(), done_, total_);
  std::fprintf(stderr, "  [%zu/%zu] %s (%.1f s); %s elapsed%s\n", done_, total_, unit_.c_str(), unit_s,
               clock_text(elapsed()).c_str(), left.empty() ? "" : ("; " + left).c_str());
  std::fflush(stderr);
}

}  // namespace raceoracle::io
