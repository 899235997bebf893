// A divergence run's tallies (analysis/divergence_state.h): its options
// survive JSON intact, a shard's state survives its file bit for bit, N
// shards merged give the unsharded tables, and a file that is not a state, a
// missing, repeated or foreign shard are refused in words.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "analysis/divergence_state.h"
#include "io/table.h"
#include "tests/support/temp_dir.h"

namespace raceoracle::analysis {
namespace {
namespace fs = std::filesystem;

using raceoracle::test_support::TempDir;

/// A small run without kernels: rows decided lazily, a few drawn in full.
DivergenceOptions small_run() {
  DivergenceOptions o;
  o.kernels = false;
  o.rows = 600;
  o.vocab = 2048;
  o.logit_rows = 12;
  o.temperatures = {0.3f, 1.0f};
  o.normal_sigma = 5;
  return o;
}

std::string csv(const DivergenceResult& r) { return io::make_table(divergence_columns(), r.rows).csv(); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DivergenceState, OptionsSurviveJsonWithEveryFieldSet) {
  DivergenceOptions o;
  o.temperatures = {0.1f, 0.7f, 1.3f};
  o.rows = 77;
  o.vocab = 5000;
  o.batches = 3;
  o.dtype = oracle::Dtype::f32;
  o.seed = 0xfedcba9876543210ull;  // above 2^63: a seed is unsigned
  o.logits_file = "rows.safetensors";
  o.normal_sigma = 0.1f;
  o.normal_centre = 1000.5f;
  o.competitive = 0.25;
  o.top_k = 9;
  o.exp_ulp = 1024;
  o.div_ulp = 3;
  o.window = 0.05;
  o.kernels = false;
  o.logit_rows = 31;
  o.shard = {2, 5};
  const DivergenceOptions back = divergence_options_from_json(nlohmann::json::parse(to_json(o).dump()));
  EXPECT_EQ(to_json(back), to_json(o));
  EXPECT_EQ(back.temperatures, o.temperatures);
  EXPECT_EQ(back.seed, o.seed);
  EXPECT_EQ(back.exp_ulp, o.exp_ulp);
  EXPECT_EQ(back.shard.str(), "2/5");
  // Unset ulps stay unset; a missing field is refused, naming it.
  const DivergenceOptions plain = divergence_options_from_json(to_json(DivergenceOptions{}));
  EXPECT_FALSE(plain.exp_ulp.has_value());
  nlohmann::json j = to_json(o);
  j.erase("window");
  EXPECT_NE(message_of([&] { divergence_options_from_json(j); }).find("window"), std::string::npos);
  // A state is read, not trusted: values the command line refuses are refused here too.
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"window", 0.9}, {"rows", 0}, {"temperatures", {0.3, -1.0}}, {"competitive", 0.0}, {"shard", "3/3"}}) {
    nlohmann::json bad = to_json(o);
    bad[field] = value;
    EXPECT_THROW(divergence_options_from_json(bad), std::invalid_argument) << field;
  }
}

TEST(DivergenceState, AStateSurvivesItsFileBitForBit) {
  TempDir dir;
  const DivergenceState s = divergence_state(small_run());
  write_state(dir / "s.state", s);
  ASSERT_TRUE(is_state_file(dir / "s.state"));
  const DivergenceState back = read_state(dir / "s.state");
  EXPECT_EQ(to_json(back.options), to_json(s.options));
  EXPECT_EQ(back.noise.state(), s.noise.state());
  EXPECT_EQ(back.pool_rows, s.pool_rows);
  EXPECT_EQ(back.checked_rows, s.checked_rows);
  ASSERT_EQ(back.temperatures.size(), s.temperatures.size());
  for (std::size_t t = 0; t < s.temperatures.size(); ++t)
    for (int oi = 0; oi < 2; ++oi) {
      const OrderTally &a = s.temperatures[t].tally[oi], &b = back.temperatures[t].tally[oi];
      EXPECT_EQ(a.full_bounds, b.full_bounds);
      ASSERT_EQ(a.gaps.size(), b.gaps.size());
      for (std::size_t i = 0; i < a.gaps.size(); ++i)
        ASSERT_TRUE(a.gaps[i].gap == b.gaps[i].gap && a.gaps[i].threshold == b.gaps[i].threshold) << i;
      EXPECT_EQ(a.apart.size(), b.apart.size());
      EXPECT_EQ(a.base_apart.size(), b.base_apart.size());
      EXPECT_EQ(a.base_rows, b.base_rows);
      EXPECT_EQ(a.base_apart_counted, b.base_apart_counted);
      EXPECT_EQ(a.keys.squares, b.keys.squares);
    }
  EXPECT_EQ(csv(finish(back)), csv(finish(s)));
  EXPECT_EQ(finish(back).method, finish(s).method);
}

TEST(DivergenceState, AKernelRunsStateKeepsTheBaselinesPairs) {
  TempDir dir;
  DivergenceOptions o;
  o.temperatures = {0.01f};
  o.rows = 64;
  o.batches = 2;
  o.vocab = 256;
  o.dtype = oracle::Dtype::f32;
  o.normal_sigma = 0.01f;
  o.normal_centre = 10000;
  const DivergenceState s = divergence_state(o);
  const OrderTally& a = s.temperatures[0].tally[1];
  ASSERT_EQ(a.base_rows, 128);
  ASSERT_GT(a.base_apart.size(), 0u);
  write_state(dir / "k.state", s);
  const DivergenceState back = read_state(dir / "k.state");
  const OrderTally& b = back.temperatures[0].tally[1];
  EXPECT_EQ(b.base_rows, a.base_rows);
  EXPECT_EQ(b.base_apart_counted, a.base_apart_counted);
  ASSERT_EQ(b.base_apart.size(), a.base_apart.size());
  for (std::size_t i = 0; i < a.base_apart.size(); ++i)
    ASSERT_TRUE(a.base_apart[i].gap == b.base_apart[i].gap && a.base_apart[i].threshold == b.base_apart[i].threshold) << i;
  EXPECT_EQ(csv(finish(back)), csv(finish(s)));
}

TEST(DivergenceState, ShardsMergedGiveTheUnshardedTables) {
  TempDir dir;
  const DivergenceOptions whole = small_run();
  const DivergenceResult unsharded = run_divergence(whole);
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    DivergenceOptions o = whole;
    o.shard = {i, 3};
    paths.push_back(dir / ("s" + std::to_string(i) + ".state"));
    write_state(paths.back(), divergence_state(o));
  }
  const DivergenceResult merged = finish(merge_states({paths[2], paths[0], paths[1]}));
  EXPECT_EQ(csv(merged), csv(unsharded));
  EXPECT_EQ(merged.method, unsharded.method);
  EXPECT_EQ(merged.noise.describe(), unsharded.noise.describe());
  ASSERT_EQ(merged.rows.size(), unsharded.rows.size());
  for (std::size_t r = 0; r < merged.rows.size(); ++r) {
    EXPECT_EQ(merged.rows[r].rows, unsharded.rows[r].rows);
    EXPECT_EQ(merged.rows[r].rate.in_window, unsharded.rows[r].rate.in_window);
    EXPECT_DOUBLE_EQ(merged.rows[r].rate.rate, unsharded.rows[r].rate.rate);
    EXPECT_EQ(merged.rows[r].median_full_bound, unsharded.rows[r].median_full_bound);
    EXPECT_EQ(merged.rows[r].apart_counted, unsharded.rows[r].apart_counted);
  }

  // Refused, in words: a shard missing, one given twice, one of another run, a file that is no state.
  EXPECT_NE(message_of([&] { merge_states({paths[0], paths[2]}); }).find("shard 1/3 missing"), std::string::npos);
  EXPECT_NE(message_of([&] { merge_states({paths[0], paths[1], paths[1], paths[2]}); }).find("both shard 1/3"),
            std::string::npos);
  DivergenceOptions other = whole;
  other.seed += 1;
  other.shard = {1, 3};
  write_state(dir / "other.state", divergence_state(other));
  const std::string foreign = message_of([&] { merge_states({paths[0], dir / "other.state", paths[2]}); });
  EXPECT_NE(foreign.find("not a shard of the run"), std::string::npos) << foreign;
  EXPECT_NE(foreign.find("seed"), std::string::npos) << foreign;
  std::ofstream(dir / "junk.state") << "not safetensors";
  EXPECT_FALSE(is_state_file(dir / "junk.state"));
  EXPECT_THROW(read_state(dir / "junk.state"), std::exception);
  // A state cut short is refused by the reader, never read past its end.
  fs::copy_file(paths[0], dir / "cut.state");
  fs::resize_file(dir / "cut.state", fs::file_size(paths[0]) - 9);
  EXPECT_THROW(read_state(dir / "cut.state"), std::exception);
}

}  // namespace
}  // namespace raceoracle::analysis
