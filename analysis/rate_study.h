#pragma once
/// The divergence study without kernels (`--no-kernels`): the rate columns
/// and the key errors of the deciding ids, on many rows. A pool of logit rows
/// (drawn, or read from the user's file) is reused with fresh Exp(1) noise per
/// row; each row's noise is drawn only where it can matter (lazy_noise.h) and
/// the row is decided by the oracle's own rules from those ids, both scaling
/// orders from one draw. The first rows of each temperature are also drawn in
/// full and decided over every id: their verdicts must be identical, and
/// their noise is what the noise report reads. docs/DIVERGENCE.md,
/// "Noise drawn only where it can matter", says why this is exact.
#include "analysis/divergence_state.h"

namespace raceoracle::analysis {

/// `o.rows x o.batches` rows per temperature over min(that, o.logit_rows)
/// logit rows, on every core; of each temperature, the rows o.shard owns.
DivergenceState run_rate_study(const DivergenceOptions& o);

}  // namespace raceoracle::analysis
