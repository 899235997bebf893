// The one place a report's old key is read (io/report_keys.h).
#include "io/report_keys.h"

#include <gtest/gtest.h>

namespace raceoracle::io {
namespace {

TEST(ReportKeys, ALawIsReadUnderItsKeyAndTheKeyBeforeIt) {
  EXPECT_EQ(law_of({{"law", "GreedyIsExact"}}), "GreedyIsExact");
  EXPECT_EQ(law_of({{"property", "GreedyIsExact"}}), "GreedyIsExact");  // written before 2026-12-07
  EXPECT_EQ(law_of({{"law", "TokensInRange"}, {"property", "GreedyIsExact"}}), "TokensInRange");
  EXPECT_EQ(law_of({{"kernel", "fused-post"}}), "");
  EXPECT_EQ(law_of({{"law", 3}}), "");
}

}  // namespace
}  // namespace raceoracle::io
