// The filters' select on its own (kernels/filtered_select.h), as the verify
// kernels call it: one workgroup finds a row's cuts with the weights of their
// pre-scale softmax (verify_filters.h's PreScaleWeight), and every id's
// membership is the definition's (SPEC §9: top-k with every id tied at the
// k-th kept, top-p on the top-k set, ties by id, min-p on the weights), on
// rows whose boundaries sit far from fp32's latitude. cpu backend: launched
// through the HIP-on-CPU layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/verify_filters.h"
#include "tests/support/depth.h"

namespace raceoracle::kernels::filtered {
namespace {

constexpr int kThreads = 256;

/// One row's select, the top-k set gathered where it holds at most `capacity` ids (0: never).
__global__ void select_row(const float* x, std::int64_t n, float t, race::RowFilter f, unsigned capacity, Kept* out,
                           float* m_out) {
  RACEORACLE_SHARED(unsigned, smem_u, 32);
  RACEORACLE_SHARED(Histograms<kThreads>, hist, 1);
  RACEORACLE_SHARED(TopSet, top, 1);
  const Selected s =
      select_kept(SelectRow<float, kThreads, Defect::none, verify::PreScaleWeight>{x, n, {0.0f, t}, smem_u, hist, Fixed(n), top},
                  read_filters<Defect::none>(&f, n, 0), capacity);
  if (threadIdx.x == 0) *out = s.kept, *m_out = s.m;
}

struct RowSelect {
  Kept kept;
  float m = 0;
};
RowSelect select(const std::vector<float>& x, float t, const race::RowFilter& f, unsigned capacity) {
  RowSelect r;
  hipLaunchKernelGGL(select_row, dim3(1), dim3(kThreads), 0, nullptr, x.data(), std::int64_t(x.size()), t, f, capacity, &r.kept,
                     &r.m);
  EXPECT_EQ(hipDeviceSynchronize(), hipSuccess);
  return r;
}

/// The definition's kept set in float64: ranks by x (ties by id), pre-scale
/// weights; `margin` the least relative distance of any boundary compare
/// from its threshold (the row is judged only where it is wide).
std::vector<bool> definition(const std::vector<float>& x, double t, const race::RowFilter& f, double& margin) {
  const std::int64_t n = std::int64_t(x.size());
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](std::int64_t a, std::int64_t b) { return x[std::size_t(a)] > x[std::size_t(b)]; });
  const double m = x[std::size_t(ids[0])] / t;
  auto w = [&](std::int64_t i) { return std::exp(x[std::size_t(i)] / t - m); };
  std::vector<bool> kept(std::size_t(n), true);
  margin = 1;
  std::int64_t last = n;  // the top-k set: ranks [0, last)
  if (f.top_k > 0 && f.top_k < n) {
    const float kth = x[std::size_t(ids[std::size_t(f.top_k - 1)])];
    last = 0;
    while (last < n && x[std::size_t(ids[std::size_t(last)])] >= kth) ++last;
  }
  double S = 0;
  for (std::int64_t r = 0; r < last; ++r) S += w(ids[std::size_t(r)]);
  double before = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t i = ids[std::size_t(r)];
    bool keep = r < last;
    if (keep && f.top_p < 1) {
      keep = before / S < f.top_p;
      margin = std::min(margin, std::abs(before / S - f.top_p) / f.top_p);
    }
    if (r < last) before += w(i);
    if (keep && f.min_p > 0) {
      keep = w(i) >= f.min_p;
      margin = std::min(margin, std::abs(w(i) - f.min_p) / f.min_p);
    }
    kept[std::size_t(i)] = keep;
  }
  return kept;
}

TEST(FilteredSelect, KeepsTheDefinitionsIdsWithPreScaleWeights) {
  std::mt19937 rng(11);
  const std::vector<race::RowFilter> filters = {{1, 1.0f, 0.0f},   {5, 1.0f, 0.0f},  {50, 1.0f, 0.0f},   {0, 0.3f, 0.0f},
                                                {0, 0.9f, 0.0f},   {50, 0.9f, 0.0f}, {0, 1.0f, 0.05f},   {5, 0.8f, 0.05f},
                                                {2, 1.0f, 0.0f}};
  int judged = 0;
  const int trials = test_support::depth(60, 1);  // every vocab and temperature from 10 on
  for (int trial = 0; trial < trials; ++trial) {
    const std::int64_t n = std::vector<std::int64_t>{7, 300, 1500}[std::size_t(trial % 3)];
    const float t = std::vector<float>{0.3f, 0.7f, 1.0f, 1.5f}[std::size_t(trial / 3 % 4)];
    std::normal_distribution<float> N(0.0f, std::vector<float>{0.5f, 2.0f}[std::size_t(trial % 2)]);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (float& v : x) v = N(rng);
    if (trial % 5 == 0 && n > 3) {  // a tie at the row's 2nd value: top_k = 2 keeps every id tied there
      std::vector<float> s = x;
      std::sort(s.rbegin(), s.rend());
      x[std::size_t(rng() % std::uint64_t(n))] = s[1];
    }
    for (const race::RowFilter& f : filters) {
      double margin = 0;
      const std::vector<bool> want = definition(x, t, f, margin);
      if (margin < 1e-3) continue;  // a boundary inside fp32's latitude: the oracle's to judge, not this test's
      for (const unsigned capacity : {TopSet::kCapacity, 0u}) {  // the top-k set gathered where it fits, and never
        const RowSelect r = select(x, t, f, capacity);
        const verify::PreScaleWeight w{r.m, t};
        for (std::int64_t i = 0; i < n; ++i)
          ASSERT_EQ(r.kept.keeps(rank_key<float>(x[std::size_t(i)]), i, w(x[std::size_t(i)])), want[std::size_t(i)])
              << "trial " << trial << " V " << n << " T " << t << " top_k " << f.top_k << " top_p " << f.top_p
              << " min_p " << f.min_p << " capacity " << capacity << " id " << i;
      }
      ++judged;
    }
  }
  EXPECT_GT(judged, trials * 400 / 60);  // of 9 a trial: the rest sit on a boundary
}

void expect_same_cuts(const RowSelect& gathered, const RowSelect& row, const std::string& at) {
  EXPECT_FALSE(row.kept.listed) << at;
  EXPECT_EQ(gathered.m, row.m) << at;
  EXPECT_EQ(gathered.kept.top_k.key, row.kept.top_k.key) << at;
  EXPECT_EQ(gathered.kept.top_k.id, row.kept.top_k.id) << at;
  EXPECT_EQ(gathered.kept.top_p.key, row.kept.top_p.key) << at;
  EXPECT_EQ(gathered.kept.top_p.id, row.kept.top_p.id) << at;
  EXPECT_EQ(gathered.kept.min_w, row.kept.min_w) << at;
}

// The top-k set gathered into shared memory gives the same cuts, bit for bit,
// as the passes over the row, on either side of the TopSet's capacity: `size`
// ids tied at the row's max (top_k = 3 keeps them all; the superset of
// key_below_kth is those ties), top-p's cut inside those ties (found among
// them by id), min-p on the weights.
TEST(FilteredSelect, TheGatheredTopKSetGivesTheCutsOfTheRow) {
  std::mt19937 rng(5);
  std::normal_distribution<float> N(0.0f, 1.0f);
  for (const unsigned size : {TopSet::kCapacity - 1, TopSet::kCapacity, TopSet::kCapacity + 1}) {
    std::vector<float> x(3000);
    for (float& v : x) v = N(rng);
    std::vector<std::size_t> ids(x.size());
    std::iota(ids.begin(), ids.end(), std::size_t(0));
    std::shuffle(ids.begin(), ids.end(), rng);
    for (unsigned j = 0; j < size; ++j) x[ids[j]] = 6.0f;
    for (const race::RowFilter f : {race::RowFilter{3, 1.0f, 0.0f}, race::RowFilter{3, 0.37f, 0.0f}, race::RowFilter{3, 0.6f, 0.5f}}) {
      const RowSelect gathered = select(x, 0.7f, f, TopSet::kCapacity), row = select(x, 0.7f, f, 0);
      const std::string at = "ties " + std::to_string(size) + " top_p " + std::to_string(f.top_p);
      EXPECT_EQ(gathered.kept.listed, size <= TopSet::kCapacity) << at;
      expect_same_cuts(gathered, row, at);
      // The cut falls inside the ties: some of them kept, some not (top_p < 1).
      if (f.top_p < 1) EXPECT_TRUE(row.kept.top_p.id >= 0 && row.kept.top_p.id < std::int64_t(x.size())) << at;
    }
  }
}

// The top-k set is gathered after its radix select over the row where the
// one-pass superset does not serve: the superset overflows the TopSet (the
// row's three largest ids in one thread's first vector, so that the 3rd
// largest of the threads' own maxima is the value 1,100 ids share), or k is
// above the threads a row (300 > 256). The cuts are the row's.
TEST(FilteredSelect, TheTopKSetIsGatheredAfterItsSelectWhereTheSupersetDoesNotServe) {
  std::mt19937 rng(8);
  std::normal_distribution<float> N(0.0f, 1.0f);
  std::vector<float> crowded(3000), wide(3000);
  for (float& v : crowded) v = N(rng);
  for (float& v : wide) v = N(rng);
  for (std::size_t j = 0; j < 1100; ++j) crowded[100 + j] = 5.0f;
  crowded[0] = 9.0f, crowded[1] = 8.0f, crowded[2] = 7.0f;  // ids 0-3: thread 0's first vector (aligned rows)
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(crowded.data()) % 16, 0u);
  const struct {
    const std::vector<float>& x;
    race::RowFilter f;
    const char* what;
  } cases[] = {{crowded, {3, 0.5f, 0.0f}, "superset of 1,103 ids"}, {crowded, {3, 1.0f, 0.2f}, "superset of 1,103 ids, min-p"},
               {wide, {300, 0.8f, 0.0f}, "k above THREADS"}, {wide, {300, 1.0f, 0.0f}, "k above THREADS, top-k alone"}};
  for (const auto& c : cases) {
    const RowSelect gathered = select(c.x, 0.7f, c.f, TopSet::kCapacity), row = select(c.x, 0.7f, c.f, 0);
    EXPECT_TRUE(gathered.kept.listed) << c.what;
    expect_same_cuts(gathered, row, c.what);
  }
}

// A top-p cut inside a tie of every id (a flat row): the ties are kept lowest
// id first, exactly as many as the definition keeps, whether the cut's id is
// found by gathering the ties (5,000: up to the histograms' 6,144) or by the
// bitwise search over ids (8,192). p n lies far from an integer: no rounding
// decides the count (fp32 sums of ones are exact).
TEST(FilteredSelect, ACutInsideATieOfEveryIdKeepsTheLowestIds) {
  for (const auto& [n, p] : {std::pair<std::int64_t, float>{5000, 0.3001f}, std::pair<std::int64_t, float>{8192, 0.3f}}) {
    const std::vector<float> x(static_cast<std::size_t>(n), 0.0f);
    const std::int64_t kept = std::int64_t(std::ceil(double(p) * double(n)));  // j kept while j < p n
    const RowSelect r = select(x, 1.0f, race::RowFilter{0, p, 0.0f}, TopSet::kCapacity);
    EXPECT_EQ(r.kept.top_p.id, kept - 1) << "V " << n;
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(r.kept.keeps(rank_key<float>(0.0f), i, 1.0f), i < kept) << "V " << n << " id " << i;
  }
}

}  // namespace
}  // namespace raceoracle::kernels::filtered
