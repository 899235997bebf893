#pragma once
/// The oracle's fp32 passes over a row: the logit statistics every verdict
/// starts from, and the screen that spares the float64 key of every id that
/// provably can neither win, come second, nor enter the ambiguity set. The
/// screen's bound and why it is sound: oracle/SCREEN.md.
#include <cstdint>
#include <limits>

#include "oracle/row.h"

namespace raceoracle::oracle {

/// What one pass over logits [begin, end) of a row learns.
struct LogitStats {
  float max = -std::numeric_limits<float>::infinity();         ///< exact
  float min_finite = std::numeric_limits<float>::infinity();   ///< smallest logit > -inf
  std::int64_t unmasked = 0;                                    ///< ids > -inf
  bool nan_or_pos_inf = false;  ///< some logit is NaN or +inf (max and min are then meaningless)
};
LogitStats scan_logits(const RowView& row, std::int64_t begin, std::int64_t end);
inline LogitStats scan_logits(const RowView& row) { return scan_logits(row, 0, row.vocab); }

/// Lowest id in [begin, end) whose logit equals `value`; -1 if none.
std::int64_t find_logit(const RowView& row, float value, std::int64_t begin, std::int64_t end);

/// The screen's upper approximation of exp((x - max) / t), never below it by
/// more than SCREEN.md's factor: 2^y with y = fl(fl(x - max) * log2e_over_t)
/// clamped to [-126, 0], evaluated as 2^floor(y) (1 + frac(y)) by placing y
/// in an fp32's exponent and mantissa bits.
float screen_exp(float x, float max, float log2e_over_t);

/// The sampling screen. It visits, in id order, every id whose key may reach
/// the threshold, and skips ids that provably cannot: an id is skipped only if
///   screen_exp(x) < threshold * fl(E + eps)   (in fp32),
/// which SCREEN.md shows implies key < threshold * kScreenSlack. `visit(id)`
/// computes what it needs and returns the new threshold; thresholds must
/// never decrease and must be finite and >= 0.
class ScreenVisitor {
 public:
  virtual float visit(std::int64_t id) = 0;

 protected:
  ~ScreenVisitor() = default;
};
/// False, and nothing more is visited, when some noise is NaN, negative or
/// infinite (the row is out of contract).
bool screen_row(const RowView& row, float max, float log2e_over_t, float eps, float threshold, ScreenVisitor& v);

/// Bounds the float64 key by the screen: key <= screen_exp / fl(E + eps) * kScreenSlack
/// (SCREEN.md derives it: the linear 2^f, the fp32 exponent argument, the
/// denominator's and the product's rounding, and the oracle's own float64).
extern const double kScreenSlack;

}  // namespace raceoracle::oracle
