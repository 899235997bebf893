// The frequency law (analysis/frequency.h) calibrated: a correct sampler's
// false-alarm rate measured over 200 seeds, and planted defects of known
// size detected where they exceed the power the law reports. The samplers
// here draw from a known law (std::discrete_distribution), or run the race
// itself (with a noise floor: FIELD_BUGS #5 and #26).
#include "analysis/frequency.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "oracle/distribution.h"

namespace raceoracle::analysis {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
using oracle::Distribution;

struct Rows {
  std::vector<std::vector<float>> x;
  std::vector<float> T;
  std::vector<race::RowFilter> f;  ///< empty: no filters
  std::int64_t vocab() const { return std::int64_t(x[0].size()); }
  std::vector<Distribution> laws(const race::NumericsContract& c = {}) const {
    std::vector<Distribution> out;
    for (std::size_t r = 0; r < x.size(); ++r) {
      oracle::RowView v;
      v.logits = x[r].data();
      v.vocab = vocab();
      v.temperature = T[r];
      v.filter = f.empty() ? nullptr : &f[r];
      out.push_back(oracle::distribution(v, c));
    }
    return out;
  }
};

/// LLM-like rows: a few head ids, a long tail, some masked ids.
Rows llm_rows(int rows, int V, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> n(0, 2.5f);
  Rows r;
  const float temps[] = {1.0f, 0.7f, 1.3f, 0.5f};
  for (int i = 0; i < rows; ++i) {
    std::vector<float> x(static_cast<std::size_t>(V));
    for (auto& v : x) v = n(g);
    x[std::size_t(i % V)] += 6.0f;
    x[std::size_t((7 * i + 3) % V)] = -kInf;
    r.x.push_back(x);
    r.T.push_back(temps[i % 4]);
  }
  return r;
}

/// Draws from fixed laws (one per row), as a sampler with its own RNG would.
DrawFn draws_from(const std::vector<std::vector<double>>& laws, std::uint64_t seed) {
  auto g = std::make_shared<std::mt19937_64>(seed);
  auto picks = std::make_shared<std::vector<std::discrete_distribution<std::int64_t>>>();
  for (const auto& p : laws) picks->emplace_back(p.begin(), p.end());
  return [g, picks](std::int64_t m) {
    std::vector<std::int64_t> out;
    for (auto& d : *picks)
      for (std::int64_t j = 0; j < m; ++j) out.push_back(d(*g));
    return out;
  };
}

std::vector<std::vector<double>> centres(const std::vector<Distribution>& d) {
  std::vector<std::vector<double>> p;
  for (const auto& x : d) p.push_back(x.p);
  return p;
}

TEST(FrequencyLaw, CorrectSamplersRaiseNoFalseAlarmOver200Seeds) {
  // At alpha = 0.05 a false alarm would be measurable; the rate observed is
  // printed beside the stated level. Each run: 4 rows, 3 looks to 65536 draws.
  FrequencySettings s;
  s.alpha = 0.05;
  s.draws = 1 << 16;
  int alarms = 0;
  const int seeds = 200;
  for (int seed = 0; seed < seeds; ++seed) {
    const Rows rows = llm_rows(4, 300 + 37 * (seed % 5), std::uint64_t(seed));
    const auto laws = rows.laws();
    const FrequencyReport r = frequency_test(laws, rows.vocab(), draws_from(centres(laws), 1000 + seed), s);
    alarms += !r.passed;
    if (!r.passed) fmt::print("a false alarm at seed {}: {}", seed, describe(r));
  }
  fmt::print("frequency law: {} false alarms in {} correct runs at a stated rate of {}\n", alarms, seeds, s.alpha);
  EXPECT_LE(alarms, int(s.alpha * seeds));
}

/// One row's law with id `id`'s probability scaled by (1 + r), renormalised.
std::vector<double> nudged(std::vector<double> p, std::int64_t id, double r) {
  p[std::size_t(id)] *= 1 + r;
  double s = 0;
  for (double q : p) s += q;
  for (double& q : p) q /= s;
  return p;
}

/// The worst relative error the report says it sees for an id of probability p.
double reported_up(const FrequencyReport& r, std::int64_t row, double p) {
  for (const auto& d : r.rows[std::size_t(row)].power.decades)
    if (p >= std::pow(10.0, d.exponent) && p < std::pow(10.0, d.exponent + 1)) return d.up;
  return std::numeric_limits<double>::infinity();
}

TEST(FrequencyLaw, ATokenFivePercentTooLikelyIsCaughtWhereThePowerSaysSo) {
  // A head id (p ~ 0.3) made 5% more likely: the power report at 2^20 draws
  // says what relative error it sees in that decade; at a budget where that
  // is below 5%, the defect is caught; at 2^12, where it is far above, it is
  // (honestly) missed.
  const Rows rows = llm_rows(2, 500, 7);
  const auto laws = rows.laws();
  std::int64_t id = 0;
  for (std::size_t i = 0; i < laws[0].p.size(); ++i)
    if (laws[0].p[i] > laws[0].p[std::size_t(id)]) id = std::int64_t(i);
  auto bad = centres(laws);
  bad[0] = nudged(bad[0], id, 0.05);
  for (std::int64_t budget : {std::int64_t(1) << 12, std::int64_t(1) << 20}) {
    FrequencySettings s;
    s.draws = budget;
    const FrequencyReport clean = frequency_test(laws, rows.vocab(), draws_from(centres(laws), 3), s);
    ASSERT_TRUE(clean.passed) << describe(clean);
    const double sees = reported_up(clean, 0, laws[0].p[std::size_t(id)]);
    const FrequencyReport r = frequency_test(laws, rows.vocab(), draws_from(bad, 3), s);
    fmt::print("5% on an id of p = {:.3f} at {} draws: the law sees +{:.3g}; {}\n", laws[0].p[std::size_t(id)], budget,
               sees, r.passed ? "missed" : "caught");
    if (sees < 0.05) EXPECT_FALSE(r.passed) << describe(r);
    if (sees > 0.2) EXPECT_TRUE(r.passed) << "caught below its stated power: " << describe(r);
  }
}

TEST(FrequencyLaw, TemperatureOffByOnePercentIsCaughtAtTheReportedTv) {
  const Rows rows = llm_rows(4, 2000, 11);
  const auto laws = rows.laws();
  Rows hot = rows;
  for (float& t : hot.T) t *= 1.01f;
  FrequencySettings s;
  s.draws = 1 << 22;
  const FrequencyReport clean = frequency_test(laws, rows.vocab(), draws_from(centres(laws), 5), s);
  ASSERT_TRUE(clean.passed) << describe(clean);
  const FrequencyReport r = frequency_test(laws, rows.vocab(), draws_from(centres(hot.laws()), 5), s);
  double tv = 0, seen = 0;  // the defect's size on row 0, and the TV the law reported it sees there
  const auto h = hot.laws();
  for (std::size_t i = 0; i < h[0].p.size(); ++i) tv += 0.5 * std::abs(h[0].p[i] - laws[0].p[i]);
  seen = clean.rows[0].power.tv;
  fmt::print("T off by 1%: TV {:.3g} per row (token level), the law sees binned TV {:.3g} at {} draws: {}\n", tv, seen,
             s.draws, r.passed ? "missed" : "caught");
  EXPECT_FALSE(r.passed) << describe(r);
}

TEST(FrequencyLaw, TopPSemanticsSwappedIsCaught) {
  // top-k 20 then top-p 0.5: measured on the top-k set (the definition) or
  // on the whole row (joint) keeps different ids.
  Rows rows = llm_rows(4, 400, 13);
  for (std::size_t r = 0; r < 4; ++r) rows.f.push_back({20, 0.5f, 0.0f});
  const auto laws = rows.laws();
  race::NumericsContract joint;
  joint.filters.top_p_mass = race::TopPMass::joint;
  const auto swapped = rows.laws(joint);
  FrequencySettings s;
  s.draws = 1 << 16;
  const FrequencyReport r = frequency_test(laws, rows.vocab(), draws_from(centres(swapped), 17), s);
  EXPECT_FALSE(r.passed) << describe(r);
  fmt::print("top-p semantics swapped: {}", describe(r));
}

TEST(FrequencyLaw, AMaskedIdSampledOnceIn100000IsCaught) {
  const Rows rows = llm_rows(2, 300, 19);
  const auto laws = rows.laws();
  auto bad = centres(laws);
  const std::int64_t masked = 3;  // row 0's masked id
  ASSERT_EQ(laws[0].p[std::size_t(masked)], 0.0);
  bad[0][std::size_t(masked)] = 1e-5;
  FrequencySettings s;
  s.draws = 1 << 20;
  const FrequencyReport r = frequency_test(laws, rows.vocab(), draws_from(bad, 23), s);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.rows[0].failure.find("probability 0"), std::string::npos) << describe(r);
}

/// The race on grouped ids: a group of m ids of weight w races as one id
/// of weight m w whose noise is the least of m draws (Exp(1) / m); a noise
/// floor f on every draw floors that least draw at f. The winning group's
/// id is uniform within it. Exact, and m times cheaper than the row.
struct Group { std::vector<std::int64_t> ids; double w = 0; };
DrawFn race_with_floor(std::vector<std::vector<Group>> rows, double floor, double eps, std::uint64_t seed) {
  auto g = std::make_shared<std::mt19937_64>(seed);
  return [=](std::int64_t m) {
    std::exponential_distribution<double> e(1.0);
    std::vector<std::int64_t> out;
    for (const auto& groups : rows)
      for (std::int64_t j = 0; j < m; ++j) {
        double best = -1;
        std::size_t win = 0;
        for (std::size_t q = 0; q < groups.size(); ++q) {
          const double least = std::max(e(*g) / double(groups[q].ids.size()), floor);
          const double key = groups[q].w / (least + eps);
          if (key > best) best = key, win = q;
        }
        const auto& ids = groups[win].ids;
        out.push_back(ids[std::uniform_int_distribution<std::size_t>(0, ids.size() - 1)(*g)]);
      }
    return out;
  };
}

TEST(FrequencyLaw, ANoiseFloorStarvesThePlantedFarTail) {
  // 40 head ids and 20000 planted tail ids at logit gaps 14 to 20 below the
  // max (their mass: ~3e-4 of the row). Noise floored at 2^-24 (FIELD_BUGS
  // #5) cannot let an id 16.6 units down win: the far tail's count falls to
  // 0 and the law says so; without the floor the same race passes.
  const int head = 40, tail = 20000;
  std::vector<float> x;
  for (int i = 0; i < head; ++i) x.push_back(-0.1f * float(i));
  for (int i = 0; i < tail; ++i) x.push_back(-14.0f - 6.0f * float(i % 4) / 3.0f);  // gaps 14, 16, 18, 20
  Rows rows{{x}, {1.0f}, {}};
  const auto laws = rows.laws();
  std::vector<Group> groups;
  for (int i = 0; i < head; ++i) groups.push_back({{i}, std::exp(double(x[std::size_t(i)]))});
  for (int gap = 0; gap < 4; ++gap) {
    Group gr;
    for (int i = gap; i < tail; i += 4) gr.ids.push_back(head + i);
    gr.w = std::exp(double(x[std::size_t(gr.ids[0])]));
    groups.push_back(gr);
  }
  FrequencySettings s;
  s.draws = 1 << 20;
  const double eps = double(race::kDefaultEps);
  const FrequencyReport clean = frequency_test(laws, rows.vocab(), race_with_floor({groups}, 0, eps, 29), s);
  EXPECT_TRUE(clean.passed) << describe(clean);
  const FrequencyReport floored = frequency_test(laws, rows.vocab(), race_with_floor({groups}, 0x1p-24, eps, 29), s);
  EXPECT_FALSE(floored.passed) << describe(floored);
  fmt::print("noise floored at 2^-24: {}", describe(floored));
}

TEST(FrequencyLaw, RowsSharingNoiseAreFound) {
  // Two rows with the same inputs and one noise stream between them draw
  // the same tokens; independent draws of the same law agree with
  // probability sum p^2 only.
  Rows rows = llm_rows(1, 300, 31);
  rows.x.push_back(rows.x[0]);
  rows.T.push_back(rows.T[0]);
  const auto laws = rows.laws();
  auto g = std::make_shared<std::mt19937_64>(37);
  auto pick = std::make_shared<std::discrete_distribution<std::int64_t>>(laws[0].p.begin(), laws[0].p.end());
  DrawFn shared = [g, pick](std::int64_t m) {
    std::vector<std::int64_t> one;
    for (std::int64_t j = 0; j < m; ++j) one.push_back((*pick)(*g));
    std::vector<std::int64_t> out = one;
    out.insert(out.end(), one.begin(), one.end());
    return out;
  };
  FrequencySettings s;
  s.draws = 1 << 14;
  const FrequencyReport r = frequency_test(laws, rows.vocab(), shared, s);
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.shared_noise.size(), 1u) << describe(r);
  const FrequencyReport ok = frequency_test(laws, rows.vocab(), draws_from(centres(laws), 41), s);
  EXPECT_TRUE(ok.passed) << describe(ok);
}

TEST(FrequencyLaw, PointMassRowsAndBadTokensFailExactly) {
  Rows rows = llm_rows(2, 100, 43);
  rows.T[1] = 0.0f;  // greedy
  const auto laws = rows.laws();
  ASSERT_EQ(laws[1].row_class, oracle::RowClass::greedy);
  auto ok = centres(laws);
  ok[1].assign(100, 0.0);
  ok[1][std::size_t(laws[1].point.token)] = 1;
  FrequencySettings s;
  s.draws = 1 << 12;
  EXPECT_TRUE(frequency_test(laws, rows.vocab(), draws_from(ok, 47), s).passed);
  auto bad = ok;
  bad[1][std::size_t((laws[1].point.token + 1) % 100)] = 1e-2;  // ~40 of 4096 draws
  const FrequencyReport r = frequency_test(laws, rows.vocab(), draws_from(bad, 47), s);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(r.rows[1].failed) << describe(r);
  // A sampler that returns the wrong number of tokens is an error, not a verdict.
  DrawFn short_reply = [](std::int64_t m) { return std::vector<std::int64_t>(std::size_t(m), 0); };
  EXPECT_THROW(frequency_test(laws, rows.vocab(), short_reply, s), std::runtime_error);
}

TEST(FrequencySettings, RoundTripThroughJson) {
  FrequencySettings s;
  s.alpha = 1e-9;
  s.draws = std::int64_t(1) << 33;
  s.first_look = 1000;
  s.min_expected = 40;
  s.power = 0.9;
  s.resolution = 0.01;
  EXPECT_EQ(settings_from_json(nlohmann::json::parse(to_json(s).dump())), s);
  EXPECT_EQ(settings_from_json(nlohmann::json::object()), FrequencySettings{});
  EXPECT_THROW(settings_from_json({{"alpha", 0}}), std::invalid_argument);
  EXPECT_THROW(settings_from_json({{"draws", 0}}), std::invalid_argument);
  EXPECT_THROW(settings_from_json({{"alpah", 0.1}}), std::invalid_argument);
  EXPECT_THROW(settings_from_json({{"power", "high"}}), std::invalid_argument);
}

}  // namespace
}  // namespace raceoracle::analysis
