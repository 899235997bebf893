#include "io/children.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <mutex>

namespace raceoracle::io {
namespace {

// The groups alive now; a fixed array of atomics, so the handler reads it
// safely. Past 256 at once (`check --devices` can start more) a group relies
// on PR_SET_PDEATHSIG alone, which still kills its leader with raceoracle.
std::array<std::atomic<pid_t>, 256> g_live{};

void kill_live_and_reraise(int sig) {
  for (auto& p : g_live)
    if (pid_t g = p.load(); g > 0) kill(-g, SIGKILL);
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old{};
      sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_DFL) signal(sig, kill_live_and_reraise);  // a host's handler (Python's) stays
    }
  });
}

}  // namespace

bool become_group_leader(pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  return getppid() == parent;
}

void track_group(pid_t pid) {
  install_handlers_once();
  setpgid(pid, pid);
  for (auto& p : g_live) {
    pid_t expected = 0;
    if (p.compare_exchange_strong(expected, pid)) return;
  }
}

void untrack_group(pid_t pid) {
  for (auto& p : g_live) {
    pid_t expected = pid;
    if (p.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace raceoracle::io
