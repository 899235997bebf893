// Ctrl-C in a long run keeps what the run found: the first SIGINT or SIGTERM
// asks it to stop (interrupted() turns true, and the children it started are
// killed so that the unit running now ends soon); the run then writes its
// report, marked partial, and exits 128 + the signal. A second signal ends
// it at once. SIGINT stays ignored where it is (a background job of a
// script): send SIGTERM there.
#pragma once

namespace raceoracle::io {

/// Installs the handlers (where SIGINT and SIGTERM are not ignored).
void stop_gracefully_on_interrupt();
/// A stop was asked for.
bool interrupted();
/// The exit status of an interrupted run: 128 + the signal, as a shell
/// reports it (130 for Ctrl-C, 143 for SIGTERM).
int interrupted_exit();

}  // namespace raceoracle::io
