#pragma once
/// A fatal signal in raceoracle itself (a kernel under test that reads out of
/// bounds, in-process, as `replay --kernel MUTANT` runs it) is said in words
/// before the process dies of it; the exit status stays the signal's.

namespace raceoracle::io {

/// Installs the handler for SIGSEGV, SIGBUS, SIGFPE and SIGILL, where no other
/// is installed (a sanitizer's stays).
void say_fatal_signals_in_words();

}  // namespace raceoracle::io
