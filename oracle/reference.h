#pragma once
/// The oracle's reference path: every id's float64 key, no pruning. It is the
/// straightforward reading of SPEC §1 that the fast path (oracle.h, decide)
/// must agree with verdict for verdict; tests compare the two differentially.
#include "oracle/oracle.h"

namespace raceoracle::oracle {

Verdict decide_reference(const RowView& row, const NumericsContract& contract, const RaceConstants& k = {});

}  // namespace raceoracle::oracle
