#pragma once
/// The definition's vocabulary (docs/SPEC.md §1-3), stated once. The oracle
/// (the judge) and the kernels (the judged) are siblings over this layer:
/// neither includes the other. Header-only and free of dependencies, so device
/// code can include it.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "race/filters.h"

namespace raceoracle::race {

/// Logit storage. bf16 is the upper half of an fp32; both widen exactly to double.
enum class Dtype : std::uint8_t { f32, bf16 };
inline const char* to_string(Dtype d) { return d == Dtype::bf16 ? "bf16" : "f32"; }
inline std::size_t size_of(Dtype d) { return d == Dtype::bf16 ? 2 : 4; }

/// What the race compares (SPEC §3): the ratio key w / (E + eps), or its log
/// x / t - log(E + eps) (the field's log-domain races, docs/CONVENTIONS.md).
enum class KeyDomain : std::uint8_t { ratio, log };
inline const char* to_string(KeyDomain d) { return d == KeyDomain::log ? "log" : "ratio"; }

/// Where a kernel applies 1/t (SPEC §2).
///   post: m = max(x), exp((x - m) * inv_t)      (production order)
///   pre : xs = x * inv_t, m = max(xs), exp(xs - m)
enum class ScalingOrder : std::uint8_t { post, pre };
/// The orders' names, in the enum's order: files, flags and reports spell them so.
inline constexpr const char* kScalingOrderNames[] = {"post", "pre"};
inline const char* to_string(ScalingOrder s) { return kScalingOrderNames[int(s)]; }

/// The clamp the definition applies to sampling temperatures: t = max(T, 1e-5f).
inline constexpr float kMinTemperature = 1e-5f;

/// fp32's infinity (a masked id's logit is -kInf) and quiet NaN, as the
/// inputs hold them: named once for every file that builds or reads a row.
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
/// The race denominator's eps and the greedy threshold, by default (SPEC §1).
inline constexpr float kDefaultEps = 1e-10f;
inline constexpr float kDefaultGreedyEps = 1e-10f;
/// The fixed seed of CI runs (properties, agreement, divergence, fiber schedule).
inline constexpr std::uint64_t kCiSeed = 20261130;

/// The two fp32 constants of the race. Separate roles even when equal.
struct RaceConstants {
  float eps = kDefaultEps;                ///< race denominator: key = softmax / (E + eps)
  float greedy_eps = kDefaultGreedyEps;   ///< a row is greedy iff T <= greedy_eps, compared in fp32
};

/// A row is greedy iff T <= greedy_eps, compared in fp32 (T == greedy_eps and negative T are greedy).
constexpr bool is_greedy(float T, float greedy_eps) { return T <= greedy_eps; }

/// How a sampler picks its greedy rows: the definition's `T <= greedy_eps`,
/// or a rule of the field's (docs/CONVENTIONS.md): `T == 0` (-0 included),
/// `T < c` for a constant c of the sampler's own.
enum class GreedyRule : std::uint8_t { definition, zero, below };
/// The race's eps: the request's (the definition), none (key = p / E: a row
/// with a zero draw is out of the sampler's contract), or a constant of the
/// sampler's own.
enum class EpsRule : std::uint8_t { request, none, fixed };
/// How exact ties are broken (equal raw maxima of a greedy row, equal keys of
/// a sampling row, equal values at a filter boundary): the lowest id (SPEC
/// §1), or the highest (a reduction that keeps its left operand only on `>`).
enum class TieRule : std::uint8_t { lowest_id, highest_id };
/// What a row with no unmasked id gives: id 0 (SPEC §1), or any id in [0, V)
/// (a reduction over -inf keys returns whichever lane it kept: FlashInfer's).
enum class FullyMasked : std::uint8_t { zero, any };

/// What a sampler does where the field departs from SPEC §1, declared so that
/// it is judged by what it does and reported as a deviation, never silently
/// accepted. The defaults are the definition's.
struct Conventions {
  GreedyRule greedy = GreedyRule::definition;
  float greedy_below = 0;  ///< GreedyRule::below: greedy iff T < greedy_below, compared in fp32
  EpsRule eps = EpsRule::request;
  float eps_fixed = 0;  ///< EpsRule::fixed: the eps the sampler adds whatever the request says
  /// true (the definition): a NaN logit acts as a masked id (law NanIsolation);
  /// false: a row with a NaN logit is out of the sampler's contract.
  bool nan_is_masked = true;
  TieRule ties = TieRule::lowest_id;
  FullyMasked fully_masked = FullyMasked::zero;
  // Written out: device code includes this header as C++17 (no defaulted ==).
  constexpr bool operator==(const Conventions& o) const {
    return greedy == o.greedy && greedy_below == o.greedy_below && eps == o.eps && eps_fixed == o.eps_fixed &&
           nan_is_masked == o.nan_is_masked && ties == o.ties && fully_masked == o.fully_masked;
  }
  constexpr bool operator!=(const Conventions& o) const { return !(*this == o); }
};

/// Greedy under the sampler's conventions (the definition's rule by default).
constexpr bool is_greedy(float T, float greedy_eps, const Conventions& c) {
  return c.greedy == GreedyRule::zero ? T == 0.0f : c.greedy == GreedyRule::below ? T < c.greedy_below : T <= greedy_eps;
}
/// The eps the sampler adds, given the request's.
constexpr float race_eps(float request_eps, const Conventions& c) {
  return c.eps == EpsRule::none ? 0.0f : c.eps == EpsRule::fixed ? c.eps_fixed : request_eps;
}
/// t = max(T, 1e-5f) on the host; a NaN T stays NaN (such a row is out of contract).
constexpr float clamp_temperature(float T) { return T < kMinTemperature ? kMinTemperature : T; }

/// What a subject promises about one row among batchmates (law
/// BatchmateInvariance, SPEC §5): a different token than alone only where the
/// row is ambiguous under its contract (the default: a kernel may choose its
/// tiling by the row count), or the same token, bit for bit, whatever the
/// batch (an engine's batch-invariant mode).
enum class BatchInvariance : std::uint8_t { within_contract, exact };

/// A kernel's numerics contract (SPEC §3): what the error model needs to know
/// about how a kernel computes its fp32 keys. Every field is an input taken
/// from the platform's published figures, never a tolerance tuned to pass.
struct NumericsContract {
  ScalingOrder order = ScalingOrder::post;
  /// Maximum error, in ulps of the result, of the kernel's expf (glibc: 1,
  /// CUDA expf: 2, HIP/OCML expf: 1 on [-10, 10]). Below 0.5 means 0.5:
  /// nothing rounds better than correctly.
  double exp_ulp = 2.0;
  /// Error of fp32 division and of the reciprocal 1/t (IEEE '/': 0.5).
  double div_ulp = 0.5;
  /// expf used by the rescales.
  double rescale_ulp = 2.0;
  /// Rescales (an exp and a multiply) a key undergoes after it is formed,
  /// whatever the row: 0 unfused, 1 the fused kernel's stage 2.
  int rescales = 1;
  /// An online max: a thread's running best is rescaled at most once per this
  /// many ids of the row, ceil(V / online_ids) more rescales (0: no online max).
  int online_ids = 0;
  /// The key's weight divided by the softmax sum (p = w / S) before the race.
  bool normalises = false;
  /// The ratio race, or the log-domain race x / t - log(E + eps).
  KeyDomain domain = KeyDomain::ratio;
  /// Error of the log-domain race's logf, in ulps of its result.
  double log_ulp = 1.0;
  /// Error of the E the kernel divides by against the noise the oracle judges
  /// with, in ulps of E: 0 for a kernel that reads the noise tensor; a kernel
  /// that draws its noise (race/noise.h) computes -logf(u) within logf's
  /// error of -log(u), whose rounding to fp32 is the oracle's tensor: logf's
  /// ulps + 0.5 (docs/DRAWN_NOISE.md, "Accuracy").
  double noise_ulp = 0.0;
  /// A replayed stream's fast log (oracle/noise_streams.h, NoiseBound): the
  /// kernel's E may also lie `noise_abs` away from the oracle's where
  /// `noise_abs_above` < E <= `noise_abs_below` (u >= 1/2, the cap excluded:
  /// torch's 2^-24 is set, not computed). 0: no absolute term.
  double noise_abs = 0.0;
  double noise_abs_above = 0.0, noise_abs_below = 0.0;
  /// Logit storage: informational, both widen exactly.
  Dtype logits = Dtype::bf16;
  /// How 1/t is applied: x * fl(1/t), two roundings (the kernels), or x / t, one.
  bool scale_divides = false;
  /// How the key is formed: w / (E + eps) (the definition), or w * fl(1 / (E + eps)).
  bool key_reciprocal = false;
  /// The keys compared in bf16 (rounded to nearest even) rather than fp32; in
  /// the log domain, -log(E + eps) and the sum x / t - log(E + eps) rounded to bf16.
  bool key_bf16 = false;
  /// Where the sampler departs from SPEC §1 (greedy rule, eps, NaN logits).
  Conventions conventions;
  /// How its filters keep ids, where it filters (SPEC §9).
  FilterSemantics filters;
  /// What it promises about a row among batchmates.
  BatchInvariance batch_invariance = BatchInvariance::within_contract;
};

}  // namespace raceoracle::race
