// Case chunks: how check splits one (subject, property) over shards (io/shard.h: the shards themselves).
#include <gtest/gtest.h>

#include <set>

#include "properties/shard.h"

namespace raceoracle::properties {
namespace {

TEST(CaseChunks, OnlyChunkZeroReplaysTheCorpusAndMeetsTheMatrix) {
  RunSettings whole;
  whole.shrink_seconds = 5;
  whole.reproduce = "r";
  const auto c = case_chunks(3000, 7, 1000);
  ASSERT_EQ(c.size(), 3u);
  for (const CaseChunk& k : c) {
    const RunSettings s = k.settings(whole);
    EXPECT_EQ(s.seed, k.seed);
    EXPECT_EQ(s.cases, k.cases);
    EXPECT_EQ(s.matrix, k.index == 0);
    EXPECT_EQ(s.corpus_dir, k.index == 0 ? whole.corpus_dir : "");
    EXPECT_EQ(s.shrink_seconds, 5);  // the rest of the run's settings, unchanged
    EXPECT_EQ(s.reproduce, "r");
  }
  whole.matrix = false;  // --random-only: no chunk runs the matrix
  whole.subject_corpus_dir = "mine";
  for (const CaseChunk& k : c) {
    EXPECT_FALSE(k.settings(whole).matrix);
    EXPECT_EQ(k.settings(whole).subject_corpus_dir, k.index == 0 ? "mine" : "");
  }
}

TEST(CaseChunks, SplitTheCasesEvenlyAndKeepTheSeedForChunkZero) {
  EXPECT_EQ(case_chunks(100, 7, 1000).size(), 1u);
  EXPECT_EQ(case_chunks(100, 7, 1000)[0].seed, 7u);
  EXPECT_EQ(case_chunks(100, 7, 1000)[0].cases, 100);
  for (int cases : {1001, 2000, 2500, 9999, 10000}) {
    const auto c = case_chunks(cases, 42, 1000);
    int total = 0;
    std::set<std::uint64_t> seeds;
    for (const CaseChunk& k : c) {
      total += k.cases;
      seeds.insert(k.seed);
      EXPECT_GE(k.cases, 500);
      EXPECT_LE(k.cases, 1000);
      EXPECT_EQ(k.of, int(c.size()));
    }
    EXPECT_EQ(total, cases);
    EXPECT_EQ(seeds.size(), c.size()) << "chunks must draw different cases";
    EXPECT_EQ(c[0].seed, 42u);
    EXPECT_EQ(case_chunks(cases, 42, 1000)[1].seed, c[1].seed) << "chunks are fixed by (seed, k)";
    EXPECT_NE(case_chunks(cases, 43, 1000)[1].seed, c[1].seed);
  }
}

}  // namespace
}  // namespace raceoracle::properties
