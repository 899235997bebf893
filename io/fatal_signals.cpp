#include "io/fatal_signals.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <initializer_list>

namespace raceoracle::io {
namespace {

void say_and_die(int sig) {
  const char* what = sig == SIGSEGV ? "SIGSEGV (an invalid memory access)"
                     : sig == SIGBUS ? "SIGBUS (a bad memory access)"
                     : sig == SIGFPE ? "SIGFPE (an arithmetic fault)"
                     : sig == SIGILL ? "SIGILL (an illegal instruction)"
                                     : "a fatal signal";
  const char* head = "\nraceoracle: crashed with ";
  const char* tail = ". A kernel under test that reads or writes out of bounds crashes the process it runs in; "
                     "`raceoracle mutants` runs each law in a process of its own and reports a crash as such.\n";
  (void)!write(2, head, std::strlen(head));
  (void)!write(2, what, std::strlen(what));
  (void)!write(2, tail, std::strlen(tail));
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void say_fatal_signals_in_words() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction old{};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_DFL) signal(sig, say_and_die);
  }
}

}  // namespace raceoracle::io
