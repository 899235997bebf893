// Shard reports joined: one run's shards merge into its unsharded report, and
// every way a set of reports is not one run's shards is refused by name.
#include "mutants/merge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace raceoracle::mutants {
namespace {

using nlohmann::json;

class MergeShards : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("raceoracle_merge_" + std::to_string(::getpid()));
  void SetUp() override {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  /// Shard `index` of 2 of a run of three units (laws at units 0, 1, 2).
  static json shard(int index, std::vector<int> units) {
    json props = json::array();
    for (int u : units)
      props.push_back({{"unit", u}, {"law", "P" + std::to_string(u)}, {"kernel", "fused-post"},
                       {"result", u == 2 ? "fail" : "pass"}});
    return {{"shard", {{"index", index}, {"count", 2}}}, {"units", 3}, {"seed", 7}, {"cases", 10},
            {"cases_per_unit", 100}, {"backend", "cpu"}, {"run", {{"kernels", {"fused-post"}}}},
            {"seconds", 1.5}, {"properties", props}, {"failures", 0}};
  }
  std::string write(const json& j, const std::string& name) {
    const std::string p = (dir / name).string();
    std::ofstream(p) << j.dump();
    return p;
  }
  void refused(const std::vector<std::string>& paths, const std::string& needle) {
    try {
      merge_shards(paths);
      ADD_FAILURE() << "merged, expected: " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
};

TEST_F(MergeShards, OneRunsShardsMergeInUnitOrder) {
  const MergedRun m = merge_shards({write(shard(1, {2, 1}), "b.json"), write(shard(0, {0}), "a.json")});
  EXPECT_EQ(m.shards, 2);
  EXPECT_EQ(m.units, 3u);
  EXPECT_EQ(m.failures, 1);  // P2 failed
  EXPECT_EQ(m.report["shard"], (json{{"index", 0}, {"count", 1}}));
  EXPECT_EQ(m.report["seconds"], 3.0);  // summed
  EXPECT_EQ(m.report["verdict"], "FAIL");
  ASSERT_EQ(m.report["properties"].size(), 3u);
  for (int u = 0; u < 3; ++u) EXPECT_EQ(m.report["properties"][std::size_t(u)]["unit"], u);
  EXPECT_TRUE(m.mutants.empty());
}

TEST_F(MergeShards, WhatIsNotOneRunsShardsIsRefusedByName) {
  const std::string a = write(shard(0, {0}), "a.json"), b = write(shard(1, {1, 2}), "b.json");
  refused({a}, "shards 1 of 2 are missing");
  refused({a, a, b}, "shard 0/2 is given twice");
  json other = shard(1, {1, 2});
  other["seed"] = 8;
  refused({a, write(other, "seed.json")}, "are not shards of one run: their seed differ (7 vs 8)");
  other = shard(1, {1, 2});
  other["run"]["kernels"] = {"baseline"};
  refused({a, write(other, "kernels.json")}, "their kernels differ");
  refused({a, write(shard(1, {0, 1, 2}), "twice.json")}, "unit 0 is in two reports");
  refused({a, write(shard(1, {1}), "short.json")}, "the reports hold 2 of the run's 3 units");
  refused({a, write(json{{"properties", json::array()}}, "junk.json")}, "junk.json: not a shard report");
  refused({}, "no reports to merge");
}

}  // namespace
}  // namespace raceoracle::mutants
