// Shards: I/N parsed, and every unit owned by exactly one shard (io/shard.h).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "io/shard.h"

namespace raceoracle::io {
namespace {

TEST(Shard, ParsesIOverNAndRefusesTheRest) {
  const Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.str(), "2/5");
  for (const char* bad : {"", "3", "5/5", "-1/4", "1/0", "1/-2", "a/b", "1/2/3", "1 /2", "1/2x", "0.5/2"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(Shard, EveryUnitBelongsToExactlyOneShard) {
  for (int n = 1; n <= 7; ++n)
    for (std::size_t u = 0; u < 100; ++u) {
      int owners = 0;
      for (int i = 0; i < n; ++i) owners += Shard{i, n}.owns(u);
      EXPECT_EQ(owners, 1) << "unit " << u << " of " << n << " shards";
    }
}

}  // namespace
}  // namespace raceoracle::io
