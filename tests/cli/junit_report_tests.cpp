// The commands' JSON reports as JUnit: a testcase per (subject, law), per
// mutant, per agreement cell, in every report schema the commands write.
#include "cli/junit_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace raceoracle::cli {
namespace {

using nlohmann::json;

bool has(const std::string& xml, const std::string& part) { return xml.find(part) != std::string::npos; }

TEST(JunitReport, ACheckReportHasACaseForEachLawChunkNotApplicableLawAndAgreementCell) {
  const json report = {
      {"backend", "cpu"}, {"seed", 7}, {"cases", 40}, {"verdict", "FAIL"},
      {"properties",
       {{{"law", "TokensInRange"}, {"kernel", "fused-post"}, {"chunk", 0}, {"chunks", 2}, {"result", "pass"},
         {"verdict", "passed"}, {"cases", 20}, {"seconds", 0.5}},
        {{"law", "TokensInRange"}, {"kernel", "fused-post"}, {"chunk", 1}, {"chunks", 2}, {"result", "fail"},
         {"verdict", "failed"}, {"cases", 3}, {"seconds", 0.25}, {"counterexample", "row 0: token 9 of V = 8"},
         {"replay", "raceoracle replay --law TokensInRange --kernel fused-post --reproduce X"}},
        {{"law", "GreedyIsExact"}, {"kernel", "fused-post"}, {"result", "fail"}, {"verdict", "passed"},
         {"cases", 20}, {"seconds", 1.0}, {"uncovered", {"negative_t"}}}}},
      {"not_applicable", {{{"law", "PartialsAreFinite"}, {"kernel", "my-sampler"}, {"why", "no stage-1 partials"}}}},
      {"agreement",
       {{{"kernel", "fused-post"}, {"mask", "none"}, {"temperature", "0.7"}, {"rows", 64}, {"unexplained", 0}, {"out_of_range", 0}},
        {{"kernel", "fused-post"}, {"mask", "tail"}, {"temperature", "1"}, {"rows", 64}, {"unexplained", 2}, {"out_of_range", 0}}}}};
  const std::string xml = junit_of_report("check", report);
  EXPECT_TRUE(has(xml, "<testsuites name=\"raceoracle check\" tests=\"6\" failures=\"3\" errors=\"0\" skipped=\"1\"")) << xml;
  EXPECT_TRUE(has(xml, "name=\"TokensInRange [1/2]\""));
  EXPECT_TRUE(has(xml, "<failure message=\"TokensInRange [2/2] on fused-post: failed after 3 cases\">row 0: token 9 of "
                       "V = 8\nreplay: raceoracle replay --law TokensInRange --kernel fused-post --reproduce X</failure>"))
      << xml;
  EXPECT_TRUE(has(xml, "GreedyIsExact on fused-post: UNCOVERED after 20 cases\">input classes never met: negative_t"));
  EXPECT_TRUE(has(xml, "<skipped message=\"n/a: no stage-1 partials\">"));
  EXPECT_TRUE(has(xml, "classname=\"agreement.fused-post\" name=\"tail T=1\""));
  EXPECT_TRUE(has(xml, "2 UNEXPLAINED and 0 OUT-OF-RANGE of 64 rows"));
  EXPECT_TRUE(has(xml, "<property name=\"verdict\" value=\"FAIL\"/>"));
}

TEST(JunitReport, AMutantFailsWhenNoLawKillsItOrAnExpectedKillerDoesNot) {
  const json report = json::parse(R"({"mutants": [
    {"mutant": "fused-post~a", "status": "Killed", "killed_by": ["PartialsAreFinite"], "seconds": 3.0,
     "pairs": [{"law": "PartialsAreFinite", "outcome": "killed", "counterexample": "row 1",
                "replay": "raceoracle replay --law PartialsAreFinite", "detail": "", "seconds": 1.0},
               {"law": "TokensInRange", "outcome": "survived", "seconds": 2.0}]},
    {"mutant": "fused-post~b", "status": "Timeout", "killed_by": [], "seconds": 9.0,
     "pairs": [{"law": "TokensInRange", "outcome": "timed out", "detail": "limit 5 s"}]}]})");
  std::string xml = junit_of_report("mutants", report);
  EXPECT_TRUE(has(xml, "tests=\"2\" failures=\"1\"")) << xml;
  EXPECT_TRUE(has(xml, "<testcase classname=\"mutant gate\" name=\"fused-post~a\" time=\"3.000\"/>"));
  EXPECT_TRUE(has(xml, "fused-post~b survived every law (Timeout)\">TokensInRange: timed out (limit 5 s)</failure>")) << xml;
  xml = junit_of_report("mutants", report, {"TokensInRange"});
  EXPECT_TRUE(has(xml, "tests=\"2\" failures=\"2\"")) << xml;
  EXPECT_TRUE(has(xml, "fused-post~a was killed by PartialsAreFinite, not by TokensInRange"));
  // The verify kernels' gate writes the same schema (cli/verify_kernels.cpp).
  const json verify = json::parse(R"({"mutants": [
    {"mutant": "verify-fused~accept_strict", "status": "Killed", "killed_by": ["VerifyAgreesWithOracle"], "seconds": 0.5,
     "pairs": [{"law": "VerifyAgreesWithOracle", "outcome": "killed", "seconds": 0.5}]}]})");
  xml = junit_of_report("mutants", verify);
  EXPECT_TRUE(has(xml, "tests=\"1\" failures=\"0\"")) << xml;
  EXPECT_TRUE(has(xml, "name=\"verify-fused~accept_strict\" time=\"0.500\"/>"));
}

TEST(JunitReport, ASamplerThatDidNotStartIsAFailedCase) {
  const std::string xml = junit_of_report("check", json{{"error", "the sampler could not be started"}, {"verdict", "FAIL"}});
  EXPECT_TRUE(has(xml, "tests=\"1\" failures=\"1\"")) << xml;
  EXPECT_TRUE(has(xml, "<failure message=\"the sampler could not be started\">"));
}

TEST(JunitReport, AJudgedFileIsOneCase) {
  std::string xml = junit_of_file_verdict("verify", "dump.safetensors", true, "", {}, 0.5);
  EXPECT_TRUE(has(xml, "<testcase classname=\"verify\" name=\"dump.safetensors\" time=\"0.500\"/>")) << xml;
  xml = junit_of_file_verdict("verify", "d.safetensors", false, "1 UNEXPLAINED, 0 OUT-OF-RANGE of 8 rows",
                              {"row 3: token 5 is not the oracle's 4", "  T = 0.7"}, 0.5);
  EXPECT_TRUE(has(xml, "<failure message=\"1 UNEXPLAINED, 0 OUT-OF-RANGE of 8 rows\">row 3: token 5 is not the "
                       "oracle&apos;s 4\n  T = 0.7</failure>"))
      << xml;
}

}  // namespace
}  // namespace raceoracle::cli
