// raceoracle: the command-line front end (cli/command_line.h).
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "cli/command_line.h"
#include "mutants/harness.h"

namespace {

/// A fatal signal in raceoracle itself (a kernel under test that reads out of
/// bounds, in-process, as `replay --kernel MUTANT` runs it) is said in words
/// before the process dies of it; the exit status stays the signal's.
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

int main(int argc, char** argv) {
  // The mutant harness's children (mutants/harness.h), not a user command.
  if (argc > 1 && std::string(argv[1]) == "__pair") return raceoracle::mutants::pair_child_main(argc, argv);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction old{};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_DFL) signal(sig, say_and_die);  // a sanitizer's stays
  }
  raceoracle::cli::CommandLine command_line;
  try {
    command_line.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // The message names the flag, the value and what is allowed; a bad
    // command line exits 2, as usage errors do (CLI11's own codes are 100+).
    return command_line.exit(e) == 0 ? 0 : 2;
  }
  return command_line.run();
}
