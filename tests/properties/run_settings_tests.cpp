// RunSettings crosses processes and shard reports as JSON: its round trip is
// exact for every field, and a settings text that is not exactly one is refused
// naming the field (as RapidCheck tests its Configuration's round trip).
#include <gtest/gtest.h>

#include <string>

#include "properties/run_settings.h"
#include "properties/suite.h"

namespace raceoracle::properties {
namespace {

TEST(RunSettings, SurvivesItsJsonRoundTripInEveryField) {
  EXPECT_EQ(run_settings_from_json(to_json(RunSettings{})), RunSettings{});
  RunSettings s;
  s.seed = 18446744073709551615ull;
  s.cases = 1;
  s.reproduce = "x\"y\\z\n\xc3\xa9";
  s.corpus_dir.clear();
  s.subject_corpus_dir = "/tmp/a b/.raceoracle/corpus/my-sampler";
  s.matrix = false;
  s.shrink_seconds = 1e-300;
  EXPECT_EQ(run_settings_from_json(to_json(s)), s);
  // Each field alone, so that one the list forgot shows by its name.
  RunSettings one;
  one.matrix = false;
  EXPECT_EQ(run_settings_from_json(to_json(one)), one);
  one = {};
  one.shrink_seconds = 3;
  EXPECT_EQ(run_settings_from_json(to_json(one)), one);
  one = {};
  one.subject_corpus_dir = "corpus";
  EXPECT_EQ(run_settings_from_json(to_json(one)), one);
}

void expect_refused(const std::string& text, const std::string& named) {
  try {
    run_settings_from_json(text);
    ADD_FAILURE() << "accepted " << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
}

TEST(RunSettings, RefusesATextThatIsNotExactlyOne) {
  const std::string good = to_json(RunSettings{});
  expect_refused("[1]", "not a JSON object");
  expect_refused("{", "not a JSON object");
  std::string s = good;
  s.replace(s.find("\"cases\""), 7, "\"kases\"");
  expect_refused(s, "'cases' is missing");
  expect_refused(good.substr(0, good.size() - 1) + ",\"extra\":1}", "unknown fields");
  s = good;
  s.replace(s.find("\"matrix\":true"), 13, "\"matrix\":1");
  expect_refused(s, "'matrix' has the wrong type");
  s = good;
  s.replace(s.find("\"cases\":100"), 11, "\"cases\":1.5");
  expect_refused(s, "'cases' has the wrong type");
  s = good;
  s.replace(s.find("\"seed\":\""), 8, "\"seed\":\"-");
  expect_refused(s, "'seed' must be a decimal string");
  s = good;
  const std::size_t at = s.find("\"seed\":\"");
  s.replace(at, s.find('"', at + 8) - at + 1, "\"seed\":20261130");
  expect_refused(s, "'seed' must be a decimal string");
}

}  // namespace
}  // namespace raceoracle::properties

namespace raceoracle::properties {
namespace {

// A run with too few cases to meet its input classes says so, and what to do.
TEST(LawResult, UncoveredAfterTooFewCasesSaysHowToMeetThem) {
  LawResult r;
  r.cases = 20;
  r.uncovered = {"T == greedy_eps"};
  EXPECT_NE(r.summary().find("fewer than the 100 the tests require"), std::string::npos) << r.summary();
  EXPECT_NE(r.summary().find("raise --cases"), std::string::npos) << r.summary();
  r.cases = 100;
  EXPECT_EQ(r.summary().find("raise --cases"), std::string::npos) << r.summary();
}

}  // namespace
}  // namespace raceoracle::properties
