#pragma once
/// A row's Exp(1) noise, drawn only where it can matter. Over one logit row,
/// the race's winner, runner-up, ambiguity set and competitive keys depend
/// only on the ids whose key a_i / (E_i + eps) reaches some threshold kappa
/// (a_i = exp((x_i - M) / t)). Every other id's draw need not be made, only
/// known to exceed its own threshold a_i / kappa - eps. Those ids are found
/// by geometric jumps down the row in falling-logit order, so a draw costs
/// about the number of ids that reach kappa, not V. The argument, and why the
/// draws are exactly Exp(1): docs/DIVERGENCE.md, "Noise drawn only where it can matter".
#include <cmath>
#include <cstdint>
#include <vector>

namespace raceoracle::analysis {

/// A logit row ready for many draws of noise.
struct SortedRow {
  const float* logits = nullptr;  ///< `vocab` logits, widened exactly; not owned
  std::int64_t vocab = 0;
  std::vector<std::int32_t> by_logit;  ///< the finite ids, largest logit first, lowest id first among equals
  float max = -INFINITY;               ///< the largest finite logit
  float min_finite = INFINITY;
  bool nan_or_pos_inf = false;         ///< out of contract: such rows are decided on every id
};
SortedRow sort_row(const float* logits, std::int64_t vocab);

/// Uniforms from Philox-4x32-10 (Random123) under a 64-bit key, one stream
/// per 64-bit `stream`: deterministic in (key, stream), independent across streams.
class UniformStream {
 public:
  UniformStream(std::uint64_t key, std::uint64_t stream) : key_(key), stream_(stream) {}
  double open01();  ///< in (0, 1): 53 random bits, an odd multiple of 2^-54
  double exp1() { return -std::log(open01()); }

 private:
  std::uint64_t key_, stream_, call_ = 0;
  std::uint32_t words_[4] = {};
  int next_ = 4;
};

/// One draw of a row's noise, made lazily. Before the first `lower_to` no
/// id is drawn (kappa = +inf).
class LazyNoise {
 public:
  /// `t`: the clamped temperature; `eps`: the race's eps (key = a / (E + eps)).
  LazyNoise(const SortedRow& row, double t, float eps, UniformStream& rng);

  /// Draws every id not drawn yet whose key reaches `kappa` (0 < kappa <
  /// kappa()): afterwards every undrawn id's E exceeds a_i / kappa - eps in
  /// float64, so its key, with E rounded to fp32, is below kappa (1 + 2^-23).
  void lower_to(double kappa);
  double kappa() const { return kappa_; }
  const std::vector<std::int64_t>& ids() const { return ids_; }  ///< the drawn ids, in the order drawn
  /// a_i of the undrawn id of largest logit (0 when every finite id is drawn): its key is a_i / (E + eps).
  double largest_undrawn_weight() const;
  const std::vector<float>& noise() const { return noise_; }     ///< their noise, rounded to fp32
  /// Every id's noise into out[vocab]: the drawn ids' as drawn, every other
  /// id's from Exp(1) conditioned on exceeding its threshold (memorylessness:
  /// the threshold plus a fresh Exp(1)), so `out` is one draw of i.i.d.
  /// Exp(1) noise. Ends the draw: call nothing else afterwards.
  void materialize(float* out);

 private:
  double weight(std::size_t pos) const;  ///< a_i of the id at `pos` in falling-logit order
  /// Id at `pos`'s threshold on E at kappa: max(a / kappa - eps, 0), 0 at kappa = inf.
  double threshold(double a, double kappa) const;
  bool drawn(std::size_t pos) const;

  const SortedRow& row_;
  double t_;
  double eps_;
  UniformStream& rng_;
  double kappa_ = INFINITY;
  std::vector<std::int64_t> ids_;
  std::vector<float> noise_;
  std::vector<std::size_t> drawn_pos_;  ///< ascending
};

}  // namespace raceoracle::analysis
