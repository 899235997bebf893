#pragma once
/// A kernel's numerics contract (SPEC §3), as the oracle names it; the
/// definition is race/definition.h, shared with the kernels.
#include "oracle/row.h"

namespace raceoracle::oracle {

using race::NumericsContract;
using race::ScalingOrder;

}  // namespace raceoracle::oracle
