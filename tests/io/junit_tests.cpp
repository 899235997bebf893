// JUnit XML: counts that add up, text any XML reader accepts.
#include "io/junit.h"

#include <gtest/gtest.h>

namespace raceoracle::io {
namespace {

TEST(Junit, CountsTestsFailuresAndSkipsPerSuiteAndInAll) {
  JunitSuite laws{"raceoracle check: laws", {{"seed", "20261130"}}, {}};
  laws.cases.push_back({"fused-post", "AgreesWithOracle", 1.5, std::nullopt, std::nullopt});
  laws.cases.push_back({"fused-post", "GreedyIsExact", 0.25, JunitOutcome{"GreedyIsExact on fused-post: FAILED",
                                                                          "row 0: token 7\nreplay: raceoracle replay"},
                        std::nullopt});
  laws.cases.push_back({"sampler", "PartialsAreFinite", 0, std::nullopt, JunitOutcome{"n/a: no partials", ""}});
  JunitSuite gate{"raceoracle check: mutant gate", {}, {{"mutant gate", "fused-post~x", 2, std::nullopt, std::nullopt}}};
  EXPECT_EQ(laws.failures(), 1);
  EXPECT_EQ(laws.skipped(), 1);
  EXPECT_DOUBLE_EQ(laws.seconds(), 1.75);
  const std::string xml = junit_xml("raceoracle check", {laws, gate});
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"raceoracle check\" tests=\"4\" "
                      "failures=\"1\" errors=\"0\" skipped=\"1\" time=\"3.750\">",
                      0),
            0u)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"raceoracle check: laws\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" "
                     "time=\"1.750\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<property name=\"seed\" value=\"20261130\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"GreedyIsExact on fused-post: FAILED\">row 0: token 7\nreplay: raceoracle "
                     "replay</failure>"),
            std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"n/a: no partials\"></skipped>"), std::string::npos);
  EXPECT_NE(xml.find("<testcase classname=\"mutant gate\" name=\"fused-post~x\" time=\"2.000\"/>"), std::string::npos);
  const std::string end = "  </testsuite>\n</testsuites>\n";
  EXPECT_EQ(xml.substr(xml.size() - end.size()), end);
}

// An interrupted run's case in error: counted as an error, never as a pass.
TEST(Junit, ACaseInErrorIsCountedAndWritten) {
  JunitSuite run{"raceoracle check: run", {}, {{"run", "interrupted", 0, std::nullopt, std::nullopt}}};
  run.cases[0].error = JunitOutcome{"the run was interrupted", "3 units ended"};
  EXPECT_EQ(run.errors(), 1);
  EXPECT_EQ(run.failures(), 0);
  const std::string xml = junit_xml("raceoracle check", {run});
  EXPECT_NE(xml.find("tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"the run was interrupted\">3 units ended</error>"), std::string::npos) << xml;
}

}  // namespace
}  // namespace raceoracle::io
