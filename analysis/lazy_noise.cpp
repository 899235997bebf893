#include "analysis/lazy_noise.h"

#include <Random123/philox.h>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace raceoracle::analysis {

namespace {

/// An fp32 logit's bits, mapped so that unsigned order is falling logit order (-0 as +0).
std::uint32_t falling_key(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if (x == 0.0f) u = 0;
  const std::uint32_t rising = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ~rising;
}

}  // namespace

SortedRow sort_row(const float* logits, std::int64_t vocab) {
  SortedRow r;
  r.logits = logits;
  r.vocab = vocab;
  std::vector<std::uint32_t> keys;
  r.by_logit.reserve(std::size_t(vocab));
  keys.reserve(std::size_t(vocab));
  for (std::int64_t i = 0; i < vocab; ++i) {
    const float x = logits[i];
    if (std::isnan(x) || x == INFINITY) r.nan_or_pos_inf = true;
    if (!std::isfinite(x)) continue;
    r.by_logit.push_back(std::int32_t(i));
    keys.push_back(falling_key(x));
    r.max = std::max(r.max, x);
    r.min_finite = std::min(r.min_finite, x);
  }
  // A stable LSD radix sort, 8 bits a pass (a pass every key agrees on is
  // skipped: bf16 logits need two): ids stay ascending among equal logits.
  std::vector<std::int32_t> ids_out(r.by_logit.size());
  std::vector<std::uint32_t> keys_out(keys.size());
  for (int shift = 0; shift < 32; shift += 8) {
    std::size_t count[257] = {};
    for (std::uint32_t k : keys) ++count[((k >> shift) & 0xff) + 1];
    if (std::any_of(count + 1, count + 257, [&](std::size_t c) { return c == keys.size(); })) continue;
    for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (std::size_t q = 0; q < keys.size(); ++q) {
      const std::size_t at = count[(keys[q] >> shift) & 0xff]++;
      keys_out[at] = keys[q];
      ids_out[at] = r.by_logit[q];
    }
    keys.swap(keys_out);
    r.by_logit.swap(ids_out);
  }
  return r;
}

double UniformStream::open01() {
  if (next_ + 2 > 4) {
    using Philox = r123::Philox4x32_R<10>;
    const Philox::ctr_type c = {{std::uint32_t(call_), std::uint32_t(call_ >> 32), std::uint32_t(stream_),
                                 std::uint32_t(stream_ >> 32)}};
    const Philox::key_type k = {{std::uint32_t(key_), std::uint32_t(key_ >> 32)}};
    const Philox::ctr_type w = Philox()(c, k);
    std::copy(w.v, w.v + 4, words_);
    ++call_;
    next_ = 0;
  }
  const std::uint64_t bits = (std::uint64_t(words_[next_]) << 21) ^ (words_[next_ + 1] >> 11);  // 53 bits
  next_ += 2;
  return (double(bits) + 0.5) * 0x1p-53;
}

LazyNoise::LazyNoise(const SortedRow& row, double t, float eps, UniformStream& rng)
    : row_(row), t_(t), eps_(eps), rng_(rng) {}

double LazyNoise::weight(std::size_t pos) const {
  return std::exp((double(row_.logits[row_.by_logit[pos]]) - double(row_.max)) / t_);
}

double LazyNoise::threshold(double a, double kappa) const {
  return kappa == INFINITY ? 0.0 : std::max(a / kappa - eps_, 0.0);
}

double LazyNoise::largest_undrawn_weight() const {
  std::size_t pos = 0;  // the drawn positions are ascending: the first gap in them
  while (pos < drawn_pos_.size() && drawn_pos_[pos] == pos) ++pos;
  return pos < row_.by_logit.size() ? weight(pos) : 0.0;
}

bool LazyNoise::drawn(std::size_t pos) const { return std::binary_search(drawn_pos_.begin(), drawn_pos_.end(), pos); }

void LazyNoise::lower_to(double kappa) {
  if (!(kappa > 0) || !(kappa < kappa_)) return;
  const double old = kappa_;
  // The hazard of position p in this band: P(E <= threshold at kappa | E > threshold at old) = 1 - exp(-h_p),
  // h_p = threshold(a_p, kappa) - threshold(a_p, old), which never rises down the row (a falls).
  const auto hazard = [&](std::size_t p, double& base) {
    const double a = weight(p);
    base = threshold(a, old);
    return threshold(a, kappa) - base;
  };
  const std::size_t n = row_.by_logit.size();
  std::size_t j = 0;
  while (j < n) {
    double base = 0;
    const double h = hazard(j, base);
    if (!(h > 0)) break;  // no later position has a hazard either
    // Proposals at hazard h at every position from j on (at least each one's
    // own): the first lands floor(Exp(1) / h) positions on; it is kept with
    // probability (1 - e^-h_l) / (1 - e^-h) (thinning), an undrawn id only.
    const double jump = std::floor(rng_.exp1() / h);
    if (jump >= double(n - j)) break;
    const std::size_t l = j + std::size_t(jump);
    double base_l = base;
    const double hl = l == j ? h : hazard(l, base_l);
    const double keep = rng_.open01();
    if (!drawn(l) && keep * -std::expm1(-h) < -std::expm1(-hl)) {
      // E in (base, base + hl]: Exp(1) conditioned on that band.
      const double e = base_l - std::log1p(rng_.open01() * std::expm1(-hl));
      ids_.push_back(row_.by_logit[l]);
      noise_.push_back(float(e));
      drawn_pos_.insert(std::upper_bound(drawn_pos_.begin(), drawn_pos_.end(), l), l);
    }
    j = l + 1;
  }
  kappa_ = kappa;
}

void LazyNoise::materialize(float* out) {
  for (std::int64_t i = 0; i < row_.vocab; ++i) {
    const float x = row_.logits[i];
    const double a = std::isfinite(x) ? std::exp((double(x) - double(row_.max)) / t_) : 0.0;
    out[i] = float(threshold(a, kappa_) + rng_.exp1());
  }
  for (std::size_t q = 0; q < ids_.size(); ++q) out[ids_[q]] = noise_[q];
}

}  // namespace raceoracle::analysis
