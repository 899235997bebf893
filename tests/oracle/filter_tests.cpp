// The filters of SPEC §9: the definition's kept set on rows written by hand,
// then the boundary's soundness (no fp32 sampler keeps or drops an id outside
// it) and tightness (how much of its width fp32 uses), against fp32
// emulations of the two ways engines filter, over rows whose top_p, top_k and
// min_p sit exactly on a boundary or one ulp from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "oracle/filter.h"
#include "oracle/oracle.h"
#include "race/bf16.h"
#include "tests/support/depth.h"

namespace raceoracle::oracle {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Row {
  std::vector<float> x, e;
  float T = 1;
  RowFilter f;
  RowView view() const {
    RowView v;
    v.logits = x.data();
    v.dtype = Dtype::f32;
    v.noise = e.data();
    v.vocab = std::int64_t(x.size());
    v.temperature = T;
    v.filter = &f;
    return v;
  }
};

std::vector<std::int64_t> kept_ids(const KeptSet& k) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < k.kept.size(); ++i)
    if (k.kept[i]) out.push_back(std::int64_t(i));
  return out;
}

KeptSet kept_of(const Row& r, const NumericsContract& c = {}) {
  const RowView v = r.view();
  return kept_set(v, r.f, row_scale(v), c);
}

NumericsContract with(race::TopKTies t, race::TopPMass m) {
  NumericsContract c;
  c.filters.top_k_ties = t;
  c.filters.top_p_mass = m;
  return c;
}

TEST(KeptSet, TopKKeepsEveryTieOrExactlyKByLowestId) {
  Row r{{1, 3, 2, 2, 2, 0}, std::vector<float>(6, 1.0f)};
  r.f.top_k = 2;
  EXPECT_EQ(kept_ids(kept_of(r, with(race::TopKTies::keep_all, race::TopPMass::top_k_first))),
            (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(kept_ids(kept_of(r, with(race::TopKTies::exactly_k, race::TopPMass::top_k_first))),
            (std::vector<std::int64_t>{1, 2}));
}

TEST(KeptSet, TopPKeepsTheCrossingIdAndNoMore) {
  // Probabilities proportional to 8, 4, 2, 1, 1 (sum 16): masses before them 0, 1/2, 3/4, 7/8, 15/16.
  Row r{{3 * std::log(2.0f), 2 * std::log(2.0f), std::log(2.0f), 0, 0}, std::vector<float>(5, 1.0f)};
  r.f.top_p = 0.7f;  // 1/2 < 0.7 <= 3/4: ids 0, 1 (id 1 crosses p: kept)
  EXPECT_EQ(kept_ids(kept_of(r)), (std::vector<std::int64_t>{0, 1}));
  r.f.top_p = 0.01f;  // at least one id: the most probable
  EXPECT_EQ(kept_ids(kept_of(r)), (std::vector<std::int64_t>{0}));
  r.f.top_p = 0.9f;  // 7/8 < 0.9: id 3 kept; id 4 (a tie, higher id) has 15/16 before it
  EXPECT_EQ(kept_ids(kept_of(r)), (std::vector<std::int64_t>{0, 1, 2, 3}));
}

TEST(KeptSet, JointAndTopKFirstDifferWhereTheTopKSetIsRenormalised) {
  // p ~ 8, 4, 2, 1, 1; top_k = 2 keeps {0, 1} (mass 12/16). top_p = 0.6:
  // joint measures 1/2 before id 1 (< 0.6: kept); top-k first 8/12 = 0.667 (dropped).
  Row r{{3 * std::log(2.0f), 2 * std::log(2.0f), std::log(2.0f), 0, 0}, std::vector<float>(5, 1.0f)};
  r.f.top_k = 2;
  r.f.top_p = 0.6f;
  EXPECT_EQ(kept_ids(kept_of(r, with(race::TopKTies::keep_all, race::TopPMass::joint))), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(kept_ids(kept_of(r, with(race::TopKTies::keep_all, race::TopPMass::top_k_first))), (std::vector<std::int64_t>{0}));
}

TEST(KeptSet, MinPKeepsAnIdExactlyOnTheThreshold) {
  Row r{{0, -std::log(4.0f), -std::log(8.0f)}, std::vector<float>(3, 1.0f)};
  r.f.min_p = float(std::exp(double(r.x[1])));  // the fp32 of p_1 / p_max: id 1 sits on the threshold
  const KeptSet k = kept_of(r);
  EXPECT_EQ(k.kept[1], double(r.f.min_p) <= std::exp(double(r.x[1])));
  EXPECT_TRUE(std::binary_search(k.boundary.begin(), k.boundary.end(), std::int64_t(1)));  // fp32 may decide either way
  EXPECT_FALSE(k.kept[2]);
}

TEST(KeptSet, TheDefinitionsPropertiesHoldOnRandomRows) {
  // What SPEC §9 says of every kept set, over random rows and filters in both
  // semantics: never empty, the most probable id in it; top-k keeps at most k
  // (exactly k) or exactly the ids above the k-th value (keep all); the kept
  // mass reaches p and is minimal (dropping the least probable kept id falls
  // below p); min-p keeps exactly the ids at or above its share; joint and
  // top-k first agree without a top-k; and every set is a prefix of the order.
  std::mt19937_64 g(race::kCiSeed);
  std::uniform_int_distribution<int> vocab(1, 200), pick(0, 1 << 20);
  for (int t = 0; t < 4000; ++t) {
    Row r;
    const int V = vocab(g);
    std::normal_distribution<float> n(0, float(1 + pick(g) % 6));
    for (int i = 0; i < V; ++i) r.x.push_back(pick(g) % 5 == 0 ? float(pick(g) % 3) : n(g)), r.e.push_back(1.0f);
    if (pick(g) % 2) for (float& v : r.x) v = race::widen_bf16(race::round_to_bf16(v));
    r.T = 0.3f + float(pick(g) % 20) / 10;
    r.f.top_k = pick(g) % 3 ? 1 + pick(g) % V : 0;
    r.f.top_p = pick(g) % 3 ? float(pick(g) % 1000 + 1) / 1000 : 1.0f;
    r.f.min_p = pick(g) % 4 ? 0.0f : float(pick(g) % 100) / 100;
    const race::TopKTies ties = pick(g) % 2 ? race::TopKTies::keep_all : race::TopKTies::exactly_k;
    const race::TopPMass mass = pick(g) % 2 ? race::TopPMass::joint : race::TopPMass::top_k_first;
    const KeptSet k = kept_of(r, with(ties, mass));
    const RowScale s = row_scale(r.view());
    std::vector<int> ids(static_cast<std::size_t>(V));
    std::iota(ids.begin(), ids.end(), 0);
    std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return r.x[std::size_t(a)] > r.x[std::size_t(b)]; });
    auto w = [&](int i) { return std::exp((double(r.x[std::size_t(i)]) - s.row_max) / s.t); };
    ASSERT_GE(k.kept_count, 1);
    ASSERT_TRUE(k.kept[std::size_t(ids[0])]) << "the most probable id";
    for (int q = 1; q < V; ++q)  // a prefix of the definition's order
      if (k.kept[std::size_t(ids[std::size_t(q)])]) ASSERT_TRUE(k.kept[std::size_t(ids[std::size_t(q - 1)])]) << q;
    // Each filter alone against the same row.
    Row only = r;
    only.f = {r.f.top_k, 1.0f, 0.0f};
    const std::int64_t by_k = kept_of(only, with(ties, mass)).kept_count;
    if (r.f.top_k > 0 && r.f.top_k < V) {
      if (ties == race::TopKTies::exactly_k) EXPECT_EQ(by_k, r.f.top_k);
      else {
        const float kth = r.x[std::size_t(ids[std::size_t(r.f.top_k - 1)])];
        EXPECT_EQ(by_k, std::count_if(r.x.begin(), r.x.end(), [&](float v) { return v >= kth; }));
      }
    }
    only.f = {0, r.f.top_p, 0.0f};
    const KeptSet by_p = kept_of(only, with(ties, mass));
    if (r.f.top_p < 1) {
      double total = 0, kept = 0, last = 0;
      for (int i = 0; i < V; ++i) total += w(i);
      for (int i = 0; i < V; ++i)
        if (by_p.kept[std::size_t(i)]) kept += w(i), last = last == 0 ? w(i) : std::min(last, w(i));  // the least probable kept
      EXPECT_GE(kept / total, double(r.f.top_p) * (1 - 1e-12)) << "kept mass reaches p";
      EXPECT_LT((kept - last) / total, double(r.f.top_p) * (1 + 1e-12)) << "and is minimal";
      EXPECT_EQ(kept_of(only, with(ties, race::TopPMass::joint)).kept, by_p.kept) << "no top-k: the semantics agree";
    }
    only.f = {0, 1.0f, r.f.min_p};
    const KeptSet by_m = kept_of(only, with(ties, mass));
    for (int i = 0; i < V; ++i) EXPECT_EQ(bool(by_m.kept[std::size_t(i)]), w(i) >= double(r.f.min_p)) << i;
  }
}

TEST(FilteredVerdict, NeutralFiltersAreTheUnfilteredRace) {
  std::mt19937 g(7);
  std::normal_distribution<float> n(0, 3);
  std::exponential_distribution<float> ex(1);
  for (int t = 0; t < 200; ++t) {
    Row r;
    for (int i = 0; i < 50; ++i) r.x.push_back(n(g)), r.e.push_back(ex(g));
    r.T = 0.7f;
    r.f = t % 2 ? RowFilter{50, 1.0f, 0.0f} : RowFilter{0, 1.0f, 0.0f};
    RowView plain = r.view();
    plain.filter = nullptr;
    const Verdict a = decide(r.view(), {}), b = decide(plain, {});
    EXPECT_EQ(a.token, b.token);
    EXPECT_EQ(a.ambiguous, b.ambiguous);
  }
}

TEST(FilteredVerdict, FilteredIdsNeverWinAndGreedyRowsIgnoreFilters) {
  // Id 3 has by far the largest key without filters (noise 1e-6) but the smallest probability.
  Row r{{2, 1, 0.5f, -1}, {1, 1, 1, 1e-6f}};
  r.T = 1;
  r.f.top_k = 3;
  const Verdict v = decide(r.view(), {});
  EXPECT_NE(v.token, 3);
  EXPECT_EQ(v.kept, 3);
  EXPECT_EQ(std::count(v.ambiguous.begin(), v.ambiguous.end(), 3), 0);
  r.T = 0;  // greedy: the argmax, filters ignored
  EXPECT_EQ(decide(r.view(), {}).token, 0);
  EXPECT_EQ(decide(r.view(), {}).kept, -1);
}

TEST(FilteredVerdict, FiltersOutsideTheirDomainMakeTheRowInvalid) {
  Row r{{2, 1, 0.5f}, {1, 1, 1}};
  for (RowFilter f : {RowFilter{0, 0.0f, 0}, RowFilter{0, -1.0f, 0}, RowFilter{0, std::nanf(""), 0}, RowFilter{0, 1, 1.5f},
                      RowFilter{0, 1, -0.1f}, RowFilter{0, 1, std::nanf("")}}) {
    r.f = f;
    const Verdict v = decide(r.view(), {});
    EXPECT_EQ(v.row_class, RowClass::invalid);
    EXPECT_EQ(v.reason, InvalidReason::bad_filter);
  }
}

// ---- Soundness and tightness against fp32 emulations ----

/// How the emulated sampler filters (the two ways of FIELD_SAMPLERS.md §3).
enum class Style {
  /// x / T, top-k on the scaled logits (every tie kept), softmax over the
  /// top-k set, an ascending stable sort and cumulative sum, drop where it is
  /// <= fl(1 - p): what vLLM's PyTorch path computes (ties: the higher id kept).
  sort_ascending,
  /// exp((x - M) * inv_t), probabilities over every id, a descending stable
  /// sort, keep while the mass before is < p (joint), exactly k by position,
  /// min_p against fl(min_p p_max).
  joint_descending,
};

struct Emulated {
  std::vector<std::uint8_t> kept;
  std::vector<float> ahead;  ///< the computed mass before each id (joint_descending), else empty
};

Emulated emulate(const Row& r, Style style) {
  const std::size_t V = r.x.size();
  const float t = std::max(r.T, race::kMinTemperature);
  Emulated out;
  out.kept.assign(V, 0);
  std::vector<std::size_t> ids(V);
  std::iota(ids.begin(), ids.end(), 0);
  if (style == Style::sort_ascending) {
    std::vector<float> xs(V);
    for (std::size_t i = 0; i < V; ++i) xs[i] = r.x[i] / t;
    std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) { return xs[a] < xs[b]; });
    std::vector<std::uint8_t> in(V, 1);
    if (r.f.top_k > 0 && std::size_t(r.f.top_k) < V) {
      const float kth = xs[ids[V - std::size_t(r.f.top_k)]];
      for (std::size_t i = 0; i < V; ++i) in[i] = xs[i] >= kth;
    }
    float m = -kInf;
    for (std::size_t i = 0; i < V; ++i)
      if (in[i]) m = std::max(m, xs[i]);
    std::vector<float> p(V, 0.0f);
    float S = 0;
    for (std::size_t i = 0; i < V; ++i)
      if (in[i]) p[i] = std::exp(xs[i] - m), S += p[i];
    for (std::size_t i = 0; i < V; ++i) p[i] /= S;
    float cum = 0;
    const float one_minus_p = 1.0f - r.f.top_p;
    for (std::size_t q = 0; q < V; ++q) {
      const std::size_t i = ids[q];
      cum += p[i];
      out.kept[i] = in[i] && (r.f.top_p >= 1.0f || q == V - 1 || !(cum <= one_minus_p));
    }
    if (r.f.min_p > 0) {
      float pmax = 0;
      for (float v : p) pmax = std::max(pmax, v);
      for (std::size_t i = 0; i < V; ++i) out.kept[i] = out.kept[i] && p[i] >= r.f.min_p * pmax;
    }
    return out;
  }
  float M = -kInf;
  for (float v : r.x) M = std::max(M, v);
  const float inv_t = 1.0f / t;
  std::vector<float> p(V);
  float S = 0;
  for (std::size_t i = 0; i < V; ++i) p[i] = std::exp((r.x[i] - M) * inv_t), S += p[i];
  for (std::size_t i = 0; i < V; ++i) p[i] /= S;
  std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
  out.ahead.assign(V, 0.0f);
  float cum = 0;
  for (std::size_t q = 0; q < V; ++q) {
    const std::size_t i = ids[q];
    out.ahead[i] = cum;
    const bool k_ok = r.f.top_k <= 0 || q < std::size_t(r.f.top_k);
    const bool p_ok = r.f.top_p >= 1.0f || cum < r.f.top_p;
    const bool m_ok = r.f.min_p == 0 || p[i] >= r.f.min_p * p[ids[0]];
    out.kept[i] = k_ok && p_ok && m_ok;
    cum += p[i];
  }
  return out;
}

NumericsContract contract_of(Style s) {
  NumericsContract c;
  c.exp_ulp = 1.0;  // glibc expf
  c.div_ulp = 0.5;
  c.rescale_ulp = 1.0;
  c.rescales = 0;
  if (s == Style::sort_ascending) {
    c.order = ScalingOrder::pre;
    c.scale_divides = true;
    c.filters = {true, race::TopKTies::keep_all, race::TopPMass::top_k_first, race::TieOrder::any, 0};
  } else {
    c.filters = {true, race::TopKTies::exactly_k, race::TopPMass::joint, race::TieOrder::lowest_id, 0};
  }
  return c;
}

/// A row whose filters sit on a boundary: top_p at an id's exact mass before
/// it (or one ulp either side), top_k at a planted tie, min_p at an id's
/// probability ratio; bf16 rows have plateaus of equal logits.
Row boundary_row(std::mt19937_64& g, Dtype dtype) {
  std::uniform_int_distribution<int> vocab(2, 300), pick(0, 1 << 20), ulps(-1, 1);
  const float temps[] = {1.0f, 0.7f, 0.3f, 2.0f, 0.05f};
  const float scales[] = {1.0f, 3.0f, 8.0f, 0.01f};
  Row r;
  const int V = vocab(g);
  const float scale = scales[pick(g) % 4];
  std::normal_distribution<float> n(0, scale);
  for (int i = 0; i < V; ++i) {
    float v = n(g);
    if (dtype == Dtype::bf16) v = race::widen_bf16(race::round_to_bf16(v));
    r.x.push_back(v);
  }
  if (pick(g) % 4 == 0) r.x[std::size_t(pick(g) % V)] = r.x[std::size_t(pick(g) % V)];  // an exact tie
  if (pick(g) % 8 == 0) r.x[std::size_t(pick(g) % V)] = -kInf;
  std::exponential_distribution<float> ex(1);
  for (int i = 0; i < V; ++i) r.e.push_back(ex(g));
  r.T = temps[pick(g) % 5];
  // The exact masses in the definition's order (joint), to sit p on one.
  const RowView v = r.view();
  const RowScale s = row_scale(v);
  std::vector<std::size_t> ids(static_cast<std::size_t>(V));
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) { return r.x[a] > r.x[b]; });
  std::vector<double> w(static_cast<std::size_t>(V));
  double S = 0;
  for (int i = 0; i < V; ++i) S += w[std::size_t(i)] = std::exp((double(r.x[std::size_t(i)]) - s.row_max) / s.t);
  const int which = pick(g) % 4;
  const std::size_t at = std::size_t(pick(g) % V);
  if (which == 0 || which == 3) {  // top_p on the mass before the id at position `at` (or one ulp off)
    double before = 0;
    for (std::size_t q = 0; q < at; ++q) before += w[ids[q]];
    float p = float(before / S);
    for (int u = ulps(g); u != 0; u += u > 0 ? -1 : 1) p = std::nextafter(p, u > 0 ? 2.0f : 0.0f);
    r.f.top_p = p > 0 ? p : 1e-6f;
  }
  if (which == 1 || which == 3) {  // top_k at a tie: make the k-th and (k+1)-th equal
    const int k = 1 + pick(g) % std::max(1, V - 1);
    if (k < V) r.x[ids[std::size_t(k)]] = r.x[ids[std::size_t(k - 1)]];
    r.f.top_k = k;
  }
  if (which == 2) {  // min_p on an id's probability ratio (or one ulp off)
    float m = float(w[at]);
    for (int u = ulps(g); u != 0; u += u > 0 ? -1 : 1) m = std::nextafter(m, u > 0 ? 2.0f : 0.0f);
    r.f.min_p = std::min(m, 1.0f);
  }
  return r;
}

TEST(FilterBoundary, SoundAndTightAgainstFp32FiltersAtTheirBoundaries) {
  const int rows = test_support::depth(26000, 100);  // per style and dtype
  std::mt19937_64 g(race::kCiSeed);
  long cases = 0, flips = 0, outside = 0, boundary_ids = 0, race_unexplained = 0, race_flips = 0;
  double worst_ratio = 0, worst_rounding = 0;
  for (Style style : {Style::sort_ascending, Style::joint_descending})
    for (Dtype dtype : {Dtype::f32, Dtype::bf16})
      for (int t = 0; t < rows; ++t) {
        Row r = boundary_row(g, dtype);
        const NumericsContract c = contract_of(style);
        const RowView v = r.view();
        const RowScale s = row_scale(v);
        const KeptSet k = kept_set(v, r.f, s, c);
        const Emulated e = emulate(r, style);
        ++cases;
        boundary_ids += long(k.boundary.size());
        for (std::size_t i = 0; i < r.x.size(); ++i) {
          if (e.kept[i] == k.kept[i] || !(r.x[i] > -kInf)) continue;  // a masked id has p = 0: never kept, never wins
          ++flips;
          if (!std::binary_search(k.boundary.begin(), k.boundary.end(), std::int64_t(i))) {
            ++outside;
            ADD_FAILURE() << fmt::format("id {} {} by fp32, {} by the definition, not on the boundary (V {}, T {}, k {}, p {:.9g}, min_p {:.9g})",
                                         i, e.kept[i] ? "kept" : "dropped", k.kept[i] ? "kept" : "dropped", r.x.size(), r.T,
                                         r.f.top_k, r.f.top_p, r.f.min_p);
          }
        }
        // The computed mass before each id lies in its interval; how much of the half-width it uses.
        if (!e.ahead.empty() && !k.ahead.empty() && r.f.top_k <= 0)
          for (std::size_t i = 0; i < r.x.size(); ++i) {
            if (!(r.x[i] > -kInf)) continue;
            const double a = e.ahead[i], lo = k.ahead_lo[i], hi = k.ahead_hi[i], x = k.ahead[i];
            if (a < lo || a > hi) {
              ++outside;
              ADD_FAILURE() << fmt::format("computed mass {:.9g} outside [{:.9g}, {:.9g}] (exact {:.9g})", a, lo, hi, x);
            }
            const double half = a >= x ? hi - x : x - lo;
            if (!(half > 0 && x > 1e-3)) continue;
            worst_ratio = std::max(worst_ratio, std::abs(a - x) / half);
            // Rounding alone: no other id within 1e-3 of its log-probability, so fp32 cannot reorder it.
            bool isolated = true;
            for (std::size_t j = 0; j < r.x.size() && isolated; ++j)
              isolated = j == i || std::abs(double(r.x[j]) - double(r.x[i])) / std::max(r.T, race::kMinTemperature) > 1e-3;
            if (isolated) worst_rounding = std::max(worst_rounding, std::abs(a - x) / half);
          }
        // The race over the emulated kept set, keys fl(p' / fl(E + eps)), is explained by the verdict.
        const Verdict verdict = decide(v, c);
        if (verdict.row_class != RowClass::sampling && verdict.row_class != RowClass::forced) continue;
        const float t_ = std::max(r.T, race::kMinTemperature);
        float M = -kInf;
        for (float x : r.x) M = std::max(M, x);
        std::int64_t best = -1;
        float best_key = -1;
        for (std::size_t i = 0; i < r.x.size(); ++i) {
          if (!e.kept[i]) continue;
          const float key = (style == Style::sort_ascending ? std::exp(r.x[i] / t_ - M / t_) : std::exp((r.x[i] - M) * (1.0f / t_))) /
                            (r.e[i] + race::kDefaultEps);
          if (key > best_key) best_key = key, best = std::int64_t(i);
        }
        if (best != verdict.token) ++race_flips;
        if (judge(verdict, best, v.vocab) == Outcome::unexplained) ++race_unexplained;
      }
  fmt::print("filter boundary: {} rows at a boundary (fp32 and bf16, two styles), {} ids on the boundary, "
             "{} kept/dropped flips by fp32, {} outside; race: {} tokens differ from the definition's, {} unexplained; "
             "computed mass before an id uses at most {:.3g} of the interval's half-width ({:.3g} where no id lies within 1e-3 of it: rounding alone)\n",
             cases, boundary_ids, flips, outside, race_flips, race_unexplained, worst_ratio, worst_rounding);
  EXPECT_GT(boundary_ids, 0);  // the rows sit on their filters' boundaries
  EXPECT_EQ(outside, 0);
  EXPECT_EQ(race_unexplained, 0);
}

}  // namespace
}  // namespace raceoracle::oracle
