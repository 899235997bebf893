#include "oracle/filter.h"

#include "oracle/probability.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <numeric>

namespace raceoracle::oracle {
namespace {

constexpr double kSafety = kBoundSafety;

/// The error terms of ERROR_MODEL.md "The filters' boundary" for one id of logit x.
struct IdTerms {
  double eps = 0;         ///< rank: its computed weight lies within e^{+-eps} of w (log units)
  double fa = 1, fb = 1;  ///< mass: its computed weight lies in [w fa - tau, w fb + tau]
};

class TermsOf {
 public:
  TermsOf(const RowScale& s, const NumericsContract& c) : s_(s), c_(c), pre_(c), post_(c) {
    pre_.order = ScalingOrder::pre;
    post_.order = ScalingOrder::post;
  }
  IdTerms operator()(double x) const {
    const double r_exp = relative_error(c_.exp_ulp), u = kUnitRoundoff;
    // Ranking: by x, fl(x / t), fl(x * inv_t), w' or p' in either scaling
    // order (a sampler sorts the scaled logits or the probabilities): the
    // larger of the two orders' exponent errors, then the exp's and a division's rounding.
    const double d_rank = std::max(exponent_error(x, s_, pre_), exponent_error(x, s_, post_));
    const WeightFactors mass = weight_factors(x, s_, c_);
    return {(d_rank + std::log1p(r_exp) + std::log1p(u)) * kSafety, mass.lo, mass.hi};
  }

 private:
  const RowScale& s_;
  const NumericsContract& c_;
  NumericsContract pre_, post_;
};

/// The finite ids by logit, descending, ties by lowest id: a stable LSD radix
/// sort on the fp32 bits (a comparison sort of V = 163840 took most of a
/// filtered row's time). Every logit is an fp32 (bf16 widens exactly); -0 is
/// keyed as +0, a tie.
std::vector<std::int64_t> order_by_logit(const RowView& row) {
  std::vector<std::uint32_t> key, key2;
  std::vector<std::int64_t> ids, ids2;
  for (std::int64_t i = 0; i < row.vocab; ++i) {
    const float x = float(row.logit(i));
    if (!(x > -std::numeric_limits<float>::infinity())) continue;
    std::uint32_t u = 0;
    if (x != 0.0f) std::memcpy(&u, &x, 4);
    const std::uint32_t ascending = (u >> 31) ? ~u : (u | 0x80000000u);
    key.push_back(~ascending);
    ids.push_back(i);
  }
  key2.resize(key.size());
  ids2.resize(ids.size());
  for (int shift = 0; shift < 32; shift += 8) {
    std::size_t count[257] = {};
    for (std::uint32_t k : key) ++count[((k >> shift) & 0xFF) + 1];
    for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
    for (std::size_t j = 0; j < key.size(); ++j) {
      const std::size_t at = count[(key[j] >> shift) & 0xFF]++;
      key2[at] = key[j];
      ids2[at] = ids[j];
    }
    key.swap(key2);
    ids.swap(ids2);
  }
  return ids;
}

}  // namespace

KeptSet kept_set(const RowView& row, const RowFilter& f, const RowScale& s, const NumericsContract& c) {
  const std::int64_t V = row.vocab;
  const FilterSemantics& sem = c.filters;
  const bool lowest_id = sem.tie_order == race::TieOrder::lowest_id;
  KeptSet out;
  out.kept.assign(std::size_t(V), 0);

  // The definition's order: probability descending, ties by lowest id; -inf ids never kept.
  const std::vector<std::int64_t> order = order_by_logit(row);
  const std::int64_t n = std::int64_t(order.size());
  if (n == 0) return out;
  const std::size_t N = std::size_t(n);
  // Exact weights w = exp((x - M) / t) and their prefix sums P; the computed
  // weights' bounds fa w, fb w and their prefix sums Pa, Pb; the ranking
  // interval [y - eps, y + eps] of each, made monotone (only ever widened).
  std::vector<double> x(N), w(N), wa(N), wb(N), P(N + 1, 0.0), Pa(N + 1, 0.0), Pb(N + 1, 0.0), ylo(N), yhi(N);
  const TermsOf terms(s, c);
  const double tau = flush_per_weight(n);
  IdTerms t;
  double y = 0;
  for (std::size_t q = 0; q < N; ++q) {
    x[q] = row.logit(order[q]);
    if (q == 0 || x[q] != x[q - 1]) {  // once per distinct value (bf16 rows hold a few thousand)
      y = (x[q] - s.row_max) / s.t;
      t = terms(x[q]);
      w[q] = std::exp(y);
    } else {
      w[q] = w[q - 1];
    }
    wa[q] = w[q] * t.fa;
    wb[q] = w[q] * t.fb;
    P[q + 1] = P[q] + w[q];
    Pa[q + 1] = Pa[q] + wa[q];
    Pb[q + 1] = Pb[q] + wb[q];
    ylo[q] = y - t.eps;
    yhi[q] = y + t.eps;
    // A weight that may flush computes as anything in [0, tau]: it may tie with every other such one.
    if (w[q] * std::exp(t.eps) <= tau) ylo[q] = -kInf, yhi[q] = std::max(yhi[q], std::log(tau));
  }
  for (std::size_t q = 1; q < N; ++q) ylo[q] = std::min(ylo[q], ylo[q - 1]);
  for (std::size_t q = N - 1; q-- > 0;) yhi[q] = std::max(yhi[q], yhi[q + 1]);
  auto range = [](const std::vector<double>& S, std::int64_t lo, std::int64_t hi) {
    return hi > lo ? S[std::size_t(hi)] - S[std::size_t(lo)] : 0.0;
  };

  // Per position q: its tie group [g0, g1) (equal logits); A = how many rank
  // above it whatever fp32 does, B = how many may rank at or above it.
  std::vector<std::int64_t> g0(N), g1(N), A(N), B(N);
  for (std::int64_t q = 0; q < n;) {
    std::int64_t e = q;
    while (e < n && x[std::size_t(e)] == x[std::size_t(q)]) ++e;
    // Equal logits have equal intervals: one search for the group.
    const double hq = yhi[std::size_t(q)], lq = ylo[std::size_t(q)];
    const std::int64_t a = std::min<std::int64_t>(q, std::partition_point(ylo.begin(), ylo.end(), [&](double v) { return v > hq; }) - ylo.begin());
    const std::int64_t b = std::max<std::int64_t>(e, std::partition_point(yhi.begin(), yhi.end(), [&](double v) { return v >= lq; }) - yhi.begin());
    for (std::int64_t r = q; r < e; ++r) g0[std::size_t(r)] = q, g1[std::size_t(r)] = e, A[std::size_t(r)] = a, B[std::size_t(r)] = b;
    q = e;
  }
  // Ahead of q whatever fp32 does: [0, A), and a tie's lower ids when ties go
  // by id; may be ahead: [0, B) but q, less a tie's higher ids when ties go by id.
  auto must_count = [&](std::int64_t q) { return A[std::size_t(q)] + (lowest_id ? q - g0[std::size_t(q)] : 0); };
  auto may_count = [&](std::int64_t q) { return B[std::size_t(q)] - 1 - (lowest_id ? g1[std::size_t(q)] - 1 - q : 0); };

  // Top-k: exact, certainly kept, certainly dropped. Each set is a prefix of the order.
  const bool k_on = race::top_k_on(f, n);
  const std::int64_t k = f.top_k;
  const bool keep_all = sem.top_k_ties == race::TopKTies::keep_all;
  std::vector<std::uint8_t> k_exact(N, 1), k_sure(N, 1), k_drop(N, 0);
  std::int64_t xk = n, ck = n, ek = n;  // the exact set [0, xk), certainly kept [0, ck), not certainly dropped [0, ek)
  if (k_on) {
    for (std::int64_t q = 0; q < n; ++q) {
      const std::size_t i = std::size_t(q);
      // Keep-all counts the ids strictly above (a tie is never above itself).
      const std::int64_t above = keep_all ? g0[i] : q;
      const std::int64_t may = keep_all ? B[i] - (g1[i] - g0[i]) : may_count(q);
      const std::int64_t must = keep_all ? A[i] : must_count(q);
      k_exact[i] = above < k;
      k_sure[i] = may < k;
      k_drop[i] = must >= k;
    }
    xk = std::int64_t(std::count(k_exact.begin(), k_exact.end(), 1));
    ck = std::int64_t(std::count(k_sure.begin(), k_sure.end(), 1));
    ek = n - std::int64_t(std::count(k_drop.begin(), k_drop.end(), 1));
  }

  // Top-p over the reference set R: every id (joint) or the top-k set (top-k
  // first), which fp32 may make anything from [0, ck) to [0, ek).
  const bool p_on = race::top_p_on(f);
  std::vector<std::uint8_t> p_exact(N, 1), p_sure(N, 1), p_drop(N, 0);
  if (p_on) {
    const bool joint = sem.top_p_mass == race::TopPMass::joint || !k_on;
    const std::int64_t rx = joint ? n : xk, rlo = joint ? n : ck, rhi = joint ? n : ek;
    const double p = double(f.top_p), nt = double(n) * tau, u = kUnitRoundoff;
    const double r_div = relative_error(c.div_ulp);
    const double depth = sem.sum_depth > 0 ? double(sem.sum_depth) : double(n);
    const double g = sum_error(depth) * kSafety;
    // The computed mass of R (the softmax's sum, or the renormaliser).
    const double d_lo = std::max(Pa[std::size_t(rlo)] * (1 - g) - nt, 0x1p-1000), d_hi = Pb[std::size_t(rhi)] * (1 + g) + nt;
    out.ahead.assign(std::size_t(V), 0.0);
    out.ahead_lo.assign(std::size_t(V), 0.0);
    out.ahead_hi.assign(std::size_t(V), 0.0);
    for (std::int64_t q = 0; q < n; ++q) {
      const std::size_t i = std::size_t(q);
      const double exact = q < rx ? P[i] / P[std::size_t(rx)] : kInf;
      p_exact[i] = exact < p;
      // The mass certainly ahead of q within the smallest R, and that may be ahead within the largest.
      const std::int64_t Aq = A[i], G0 = g0[i], G1 = g1[i], Bq = B[i];
      const double must_a = range(Pa, 0, std::min(Aq, rlo)) + (lowest_id ? double(std::max<std::int64_t>(0, std::min(q, rlo) - G0)) * wa[i] : 0.0);
      const double must_b = range(Pb, 0, std::min(Aq, rhi)) + (lowest_id ? double(std::max<std::int64_t>(0, std::min(q, rhi) - G0)) * wb[i] : 0.0);
      const double may_b = lowest_id ? range(Pb, 0, std::min(q, rhi)) + range(Pb, std::min(G1, rhi), std::min(Bq, rhi))
                                     : range(Pb, 0, std::min(Bq, rhi)) - (q < rhi ? wb[i] : 0.0);
      const double may_a = lowest_id ? range(Pa, 0, std::min(q, rlo)) + range(Pa, std::min(G1, rlo), std::min(Bq, rlo))
                                     : range(Pa, 0, std::min(Bq, rlo)) - (q < rlo ? wa[i] : 0.0);
      // A sampler compares C' = (computed mass ahead) / (computed mass of R)
      // with p; or the complement, T' = (mass of R at or below q) / (mass of R), with 1 - p.
      const double c_lo = std::max(0.0, must_a * (1 - g) - nt) / d_hi * (1 - r_div);
      const double c_hi = (may_b * (1 + g) + nt) / d_lo * (1 + r_div);
      const double t_lo = std::max(0.0, (Pa[std::size_t(rlo)] - may_a) * (1 - g) - nt) / d_hi * (1 - r_div);
      const double t_hi = ((Pb[std::size_t(rhi)] - must_b) * (1 + g) + nt) / d_lo * (1 + r_div);
      const double lo = std::min(c_lo, 1 - t_hi) / kSafety - 0x1p-60, hi = std::max(c_hi, 1 - t_lo) * kSafety + 0x1p-60;
      const std::int64_t id = order[i];
      out.ahead[std::size_t(id)] = exact, out.ahead_lo[std::size_t(id)] = lo, out.ahead_hi[std::size_t(id)] = hi;
      // Against p itself, fl(1 - p) or fl(p S): each within u of p.
      p_sure[i] = hi < p - u && q < rlo;
      p_drop[i] = lo >= p + u || q >= rhi;
    }
  }

  // Min-p: w' / w'_max against min_p; the max's weight is exp(0), within the exp's error of 1.
  const bool m_on = race::min_p_on(f);
  std::vector<std::uint8_t> m_exact(N, 1), m_sure(N, 1), m_drop(N, 0);
  if (m_on) {
    const double mp = double(f.min_p), u = kUnitRoundoff, r_exp = relative_error(c.exp_ulp);
    const double r_div = relative_error(c.div_ulp);
    // p' = fl(w' / S') and p'_max = fl(w'_max / S'), then min_p p'_max rounded once.
    const double lo_f = (1 - r_div) * (1 - u) / ((1 + r_div) * (1 + r_exp)), hi_f = (1 + r_div) * (1 + u) / ((1 - r_div) * (1 - r_exp));
    for (std::size_t q = 0; q < N; ++q) {
      m_exact[q] = w[q] >= mp;
      m_sure[q] = (wa[q] - tau) * lo_f / kSafety > mp + tau;
      m_drop[q] = (wb[q] + tau) * hi_f * kSafety < mp - tau;
    }
  }

  for (std::size_t q = 0; q < N; ++q) {
    const bool exact = k_exact[q] && p_exact[q] && m_exact[q];
    const bool sure = k_sure[q] && p_sure[q] && m_sure[q];
    const bool drop = k_drop[q] || p_drop[q] || m_drop[q];
    const std::int64_t id = order[q];
    out.kept[std::size_t(id)] = exact;
    out.kept_count += exact;
    // Certain only where the certainty agrees with the exact answer.
    if (!((sure && exact) || (drop && !exact))) out.boundary.push_back(id);
  }
  std::sort(out.boundary.begin(), out.boundary.end());
  return out;
}

}  // namespace raceoracle::oracle
