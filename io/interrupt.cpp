#include "io/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include "io/children.h"

namespace raceoracle::io {
namespace {

volatile sig_atomic_t g_stop = 0;  // the signal that asked the run to stop

void on_interrupt(int sig) {
  kill_live_groups();
  if (g_stop) {  // the second: at once
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_stop = sig;
  static const char msg[] =
      "\nraceoracle: interrupted: the unit running now ends, then the partial report is written "
      "(interrupt again to stop at once)\n";
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
}

}  // namespace

void stop_gracefully_on_interrupt() {
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old{};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // a run started in the background with nohup keeps ignoring it
    struct sigaction sa{};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

bool interrupted() { return g_stop != 0; }

int interrupted_exit() { return 128 + g_stop; }

}  // namespace raceoracle::io
