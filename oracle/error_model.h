#pragma once
/// The error model of SPEC §3: for one id, an interval that provably holds the
/// fp32 key a kernel computes under a NumericsContract. The derivation, with
/// the assumptions it rests on, is in oracle/ERROR_MODEL.md.
#include <cstdint>

#include "oracle/contract.h"

namespace raceoracle::oracle {

inline constexpr double kUnitRoundoff = 0x1p-24;   ///< u: fp32 round-to-nearest
inline constexpr double kFlushThreshold = 0x1p-126;  ///< smallest normal fp32
inline constexpr double kBf16UnitRoundoff = 0x1p-8;  ///< bf16 round-to-nearest (8 significant bits)
inline constexpr double kBf16Max = 0x1.fep+127;      ///< the largest finite bf16
inline constexpr double kBoundSafety = 1.0 + 0x1p-40;  ///< a bound's own float64 rounding, as a factor

/// Relative error of an fp32 operation that is within `ulps` of the exact result.
double relative_error(double ulps);
/// Relative error of the kernel's E against the oracle's noise (contract.noise_ulp; 0 when read).
double noise_error(const NumericsContract& c);
/// The absolute part of that error for an E of `noise` (contract.noise_abs where noise_abs_above < E <= noise_abs_below).
double noise_abs_of(double noise, const NumericsContract& c);
/// A lower bound on the kernel's fl(E' + eps) for the oracle's den = E + eps (<= 0: it may reach 0).
double den_low(double den, double noise, const NumericsContract& c);

/// What is common to every id of a sampling row.
struct RowScale {
  double row_max = 0;  ///< M, the largest finite logit (exact)
  double t = 1;        ///< race::clamp_temperature(T), exact
  float eps = race::kDefaultEps;
  /// V, the row's length: it bounds the softmax sum (at most V terms) and an
  /// online max's rescales (ceil(V / online_ids)).
  std::int64_t vocab = 1;
};

/// Rescales a key may undergo in a row of `s.vocab` ids (contract rescales
/// plus an online max's).
double rescale_steps(const RowScale& s, const NumericsContract& c);

/// The key of SPEC §1 in float64, exp((x - M) / t) / (E + eps): every key
/// the oracle ranks or bounds is this expression, so equal inputs give equal
/// keys bit for bit. NaN for 0/0.
double exact_key(double x, float noise, const RowScale& s);

/// The exact key of SPEC §1 and the interval [lo, hi] that the kernel's fp32
/// key must lie in. Masked ids have key = lo = hi = 0.
struct KeyBound {
  double key = 0;
  double lo = 0;
  double hi = 0;
  /// Relative half-width: max(hi/key - 1, 1 - lo/key); +inf when key is 0 or
  /// the interval is unbounded.
  double rho() const;
};

/// Bound on the exponent argument error of id `x`, in units of the argument
/// (an absolute error d in the argument is a relative error ~d in the key).
double exponent_error(double x, const RowScale& s, const NumericsContract& c);
/// The log-domain race: a bound on the error of the kernel's score
/// x / t - log(E + eps) (a relative error ~d in the key it ranks like).
double log_score_error(double x, float noise, const RowScale& s, const NumericsContract& c);

/// The rounding of everything but the exponent argument, as factors on the key.
struct RoundingFactors { double up = 1, down = 1; };
RoundingFactors rounding_factors(const RowScale& s, const NumericsContract& c);
/// Absolute error from results that underflow fp32's normal range, in the
/// key's units (a normalising sampler's flushes weigh S times more).
double absolute_error(double den, const RowScale& s, const NumericsContract& c);
/// Pre-scale only: x * inv_t leaves fp32's range and the key is meaningless.
bool prescale_overflows(double x, const RowScale& s);

KeyBound bound_key(double x, float noise, const RowScale& s, const NumericsContract& c);

/// bound_key's relative factors: the fp32 key of `x` lies in
/// [key * down - abs, key * up + abs] with abs = absolute_error(den);
/// up = +inf where pre-scale overflows.
RoundingFactors key_factors(double x, float noise, const RowScale& s, const NumericsContract& c);

/// The relative gap (k_i - k_j) / k_i at or below which `j` may outrank `i`
/// (SPEC §3) when k_j is near k_i, the only place it can: the threshold a
/// row's top-two gap is measured against (docs/DIVERGENCE.md). In [0, 1].
double tolerated_gap(double x_i, float e_i, double x_j, float e_j, const RowScale& s, const NumericsContract& c);

/// A fused kernel's stage-1 key of logit `x`: relative to its tile's max, one
/// rounding stage (the rescale comes in stage 2), temperature `T` clamped.
KeyBound bound_stage1_key(float x, float noise, float tile_max, float T, float eps, NumericsContract c);

/// |actual / exact - 1| over the bound's relative half-width (1: at its edge);
/// 0 where the key is so small that the absolute (flush) term dominates.
double error_ratio(const KeyBound& kb, double actual);

/// True when fp32 arithmetic under the contract may legitimately rank `j`
/// at or above `i` (SPEC §3: key_j(1+rho_j) >= key_i(1-rho_i)).
inline bool may_outrank(const KeyBound& j, const KeyBound& i) { return j.hi >= i.lo; }

}  // namespace raceoracle::oracle
