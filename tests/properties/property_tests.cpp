// Every law of SPEC §5 against every real kernel in the registry, on the
// configured backend. CI uses the fixed seed; a deep run takes a fresh one:
//   RACEORACLE_SEED=random RACEORACLE_CASES=2000 ctest -R Properties
// RACEORACLE_COVERAGE=report prints the input classes a run did not meet
// instead of failing on them: the sanitizer run (ci/test-asan.sh) looks for
// memory errors in a few cases per law, too few to meet every class.
// A failure prints the shrunk counterexample and the command that replays it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "kernels/device_memory.h"
#include "properties/suite.h"
#include "tests/support/depth.h"

namespace raceoracle::properties {
namespace {

RunSettings settings() {
  RunSettings s;
  if (const char* seed = std::getenv("RACEORACLE_SEED")) {
    s.seed = std::string(seed) == "random" ? std::random_device{}() : std::strtoull(seed, nullptr, 10);
  }
  if (const std::optional<int> cases = test_support::requested_cases()) s.cases = *cases;
  return s;
}

bool coverage_reported_only() {
  const char* c = std::getenv("RACEORACLE_COVERAGE");
  if (!c || !*c || std::string(c) == "require") return false;
  if (std::string(c) == "report") return true;
  std::fprintf(stderr, "RACEORACLE_COVERAGE=%s: must be 'require' (the default) or 'report'\n", c);
  std::exit(2);
}

struct Pair {
  const Law* law;
  const kernels::Kernel* kernel;
};
std::vector<Pair> pairs() {
  std::vector<Pair> v;
  for (const Law& p : laws())
    for (const kernels::Kernel& k : kernels::kernels())
      if (p.applies_to(subject::subject_of(k))) v.push_back({&p, &k});
  return v;
}
void PrintTo(const Pair& p, std::ostream* os) { *os << p.law->name << " on " << p.kernel->name; }
std::string name_of(const ::testing::TestParamInfo<Pair>& i) {
  std::string n = i.param.law->name + "_" + i.param.kernel->name;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

class Properties : public ::testing::TestWithParam<Pair> {};

TEST_P(Properties, Holds) {
  if (kernels::device_count() == 0) GTEST_SKIP() << "no " << kernels::backend_name() << " device found";
  const auto& [p, k] = GetParam();
  const RunSettings s = settings();
  const subject::Subject& subject = subject::subject_of(*k);
  const LawResult r = run_law(*p, subject, s);
  std::printf("[property] %s on %s: %s (seed %llu)\n", p->name.c_str(), k->name.c_str(), r.summary().c_str(),
              static_cast<unsigned long long>(s.seed));
  EXPECT_EQ(r.verdict, LawResult::Verdict::passed)
      << r.counterexample << "\n  replay: " << replay_command(*p, subject, r);
  if (!coverage_reported_only())
    EXPECT_TRUE(r.uncovered.empty()) << "input classes this property must meet but did not: "
                                     << ::testing::PrintToString(r.uncovered);
  if (p->name == "KeyErrorWithinBound")
    std::printf("[tightness] worst stage-1 key error / certified bound so far: %.3f\n", worst_key_error_ratio());
}

INSTANTIATE_TEST_SUITE_P(Suite, Properties, ::testing::ValuesIn(pairs()), name_of);

// fewest_failing_rows (ddmin over rows) on a made-up law that fails while
// two given forced ids are both present: it keeps those two rows, in order.
std::string needs_ids_7_and_300(const LawContext& c) {
  bool seen7 = false, seen300 = false;
  for (std::int64_t r = 0; r < c.batch.rows; ++r) {
    seen7 |= std::isfinite(c.batch.x(r, 7));
    seen300 |= std::isfinite(c.batch.x(r, 300));
  }
  return seen7 && seen300 ? "ids 7 and 300 both forced" : "";
}

TEST(FewestFailingRows, KeepsExactlyTheRowsTheFailureNeedsInTheirOrder) {
  Law p{.name = "MadeUp", .statement = "", .check = needs_ids_7_and_300};
  fixtures::CaseSpec spec;
  spec.vocab = 512;
  for (int id = 0; id < 400; ++id) {
    fixtures::RowSpec r;
    r.kind = fixtures::RowKind::forced;
    r.where = fixtures::kPositions + id;
    spec.rows.push_back(r);
  }
  const subject::Subject& any = subject::subject_of(kernels::kernels().front());
  const fixtures::CaseSpec fewest = fewest_failing_rows(p, any, spec);
  ASSERT_EQ(fewest.rows.size(), 2u);
  EXPECT_EQ(fewest.rows[0].where, fixtures::kPositions + 7);
  EXPECT_EQ(fewest.rows[1].where, fixtures::kPositions + 300);
  // One row is as few as it gets: it comes back as it is.
  spec.rows.resize(1);
  EXPECT_EQ(fewest_failing_rows(p, any, spec).rows.size(), 1u);
}

// A shrink stops at its budget (RunSettings::shrink_seconds) and says so; a
// shrink within budget runs to the end. A made-up law: 50 ids or more fail.
std::string fails_from_50_ids(const LawContext& c) { return c.batch.vocab >= 50 ? "50 ids or more" : ""; }

TEST(Shrink, StopsAtItsBudgetAndSaysSo) {
  Law p{.name = "MadeUp", .statement = "", .check = fails_from_50_ids};
  RunSettings s;
  s.matrix = false;
  s.corpus_dir.clear();
  const subject::Subject& any = subject::subject_of(kernels::kernels().front());
  s.shrink_seconds = 0;
  const LawResult cut = run_law(p, any, s);
  ASSERT_EQ(cut.verdict, LawResult::Verdict::failed);
  EXPECT_NE(cut.counterexample.find("shrinking stopped after 0 s"), std::string::npos) << cut.counterexample;
  s.shrink_seconds = 600;
  const LawResult full = run_law(p, any, s);
  ASSERT_EQ(full.verdict, LawResult::Verdict::failed);
  EXPECT_EQ(full.counterexample.find("shrinking stopped"), std::string::npos) << full.counterexample;
  // The whole shrink ends smaller than the first failure, which the cut one reports as found.
  EXPECT_LT(full.case_json.size(), cut.case_json.size()) << full.case_json << "\n" << cut.case_json;
}

TEST(Corpus, SavedCounterexamplesStillPass) {
  // Failing cases found once are kept in properties/corpus and replayed first.
  if (kernels::device_count() == 0) GTEST_SKIP() << "no device found";
  const auto corpus = load_corpus(default_corpus_dir());
  for (const CorpusEntry& e : corpus) {
    const Law* p = find_law(e.law);
    ASSERT_NE(p, nullptr) << "corpus names an unknown law " << e.law;
    for (const kernels::Kernel& k : kernels::kernels())
      if (p->applies_to(subject::subject_of(k))) EXPECT_EQ(run_case(*p, subject::subject_of(k), e.spec), "") << e.law << " on " << k.name << ": " << e.note;
  }
  std::printf("[corpus] %zu saved cases replayed\n", corpus.size());
}

TEST(Corpus, ADamagedEntryRefusesTheRunWithItsRepair) {
  // An entry saved and read back; then one cut in half, as a disk could leave it.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("raceoracle-corpus-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto kept = load_corpus(default_corpus_dir());
  ASSERT_FALSE(kept.empty());
  save_to_corpus(dir.string(), "TokensInRange", "a note", fixtures::to_json(kept.front().spec));
  ASSERT_EQ(load_corpus(dir.string()).size(), 1u);
  { std::ofstream(dir / "TokensInRange-half.json") << "{\"property\": \"Tok"; }
  try {
    load_corpus(dir.string());
    ADD_FAILURE() << "a damaged entry was loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("TokensInRange-half.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("git checkout --"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace raceoracle::properties
