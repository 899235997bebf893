// A long run's progress: the counts, the time left, a line a unit in CI.
#include "io/progress.h"

#include <gtest/gtest.h>

#include <regex>

namespace raceoracle::io {
namespace {

TEST(Progress, TimeLeftIsThePaceSoFarOverWhatRemains) {
  EXPECT_EQ(time_left(10, 1, 4), "3 to go, about 30 s left");
  EXPECT_EQ(time_left(60, 2, 8), "6 to go, about 3.0 min left");
  EXPECT_EQ(time_left(5, 0, 4), "");  // no pace yet
  EXPECT_EQ(time_left(5, 4, 4), "");  // nothing left
}

TEST(Progress, InCiALineAUnitWithTheCount) {
  testing::internal::CaptureStderr();
  {
    Progress p(3, false);
    p.begin("AgreesWithOracle on fused-post");
    p.end();
    p.begin("GreedyIsExact on fused-post");
    p.end();
    EXPECT_EQ(p.done(), 2u);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(std::regex_search(err, std::regex(R"(  \[1/3\] AgreesWithOracle on fused-post \([0-9.]+ s\); 0:00 elapsed; 2 to go, about [0-9]+ s left\n)")))
      << err;
  EXPECT_TRUE(std::regex_search(err, std::regex(R"(  \[2/3\] GreedyIsExact on fused-post \([0-9.]+ s\); 0:00 elapsed; 1 to go)"))) << err;
  EXPECT_EQ(err.find('\r'), std::string::npos);  // no terminal control in a log
}

TEST(Progress, OnATerminalOneLineRedrawnAndClearedBeforeTheResult) {
  testing::internal::CaptureStderr();
  {
    Progress p(2, true);
    p.begin("AgreesWithOracle on fused-post");
    p.end();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "\r\033[K[1/2] AgreesWithOracle on fused-post, 0:00 elapsed\r\033[K");
}

}  // namespace
}  // namespace raceoracle::io
