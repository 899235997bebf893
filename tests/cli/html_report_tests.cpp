// The commands' reports as one HTML page: every law with its coverage, every
// failure with its replay command, the kill matrix with the verdicts the
// JUnit report gives, and the divergence study's charts from its table.
#include "cli/html_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace raceoracle::cli {
namespace {

using nlohmann::json;

bool has(const std::string& page, const std::string& part) { return page.find(part) != std::string::npos; }

TEST(HtmlReport, ACheckPageShowsCoverageFailuresReplayLinesAndWhatDidNotApply) {
  const json report = {
      {"backend", "cpu"}, {"seed", 7}, {"cases", 40}, {"verdict", "FAIL"},
      {"run", {{"version", "0.1.0"}, {"kernels", {"fused-post"}}}},
      {"properties",
       {{{"law", "TokensInRange"}, {"kernel", "fused-post"}, {"result", "pass"}, {"verdict", "passed"},
         {"cases", 20}, {"seconds", 0.5}, {"required", {"a", "b", "c"}}, {"uncovered", json::array()}},
        {{"law", "AgreesWithOracle"}, {"kernel", "fused-post"}, {"result", "fail"}, {"verdict", "failed"},
         {"cases", 3}, {"counterexample", "row 0: token <9>"},
         {"replay", "raceoracle replay --law AgreesWithOracle --kernel fused-post --reproduce X"}},
        {{"law", "GreedyIsExact"}, {"kernel", "fused-post"}, {"result", "fail"}, {"verdict", "passed"},
         {"cases", 20}, {"required", {"negative_t", "ties"}}, {"uncovered", {"negative_t"}}}}},
      {"not_applicable", {{{"law", "PartialsAreFinite"}, {"kernel", "my-sampler"}, {"why", "no stage-1 partials"}}}},
      {"agreement", {{{"kernel", "fused-post"}, {"mask", "tail"}, {"temperature", "1"}, {"rows", 64}, {"identical", 60},
                      {"explained", 2}, {"unexplained", 2}, {"out_of_range", 0}}}}};
  const std::string page = html_of_report("check", report);
  EXPECT_TRUE(has(page, "<span class=\"verdict fail\">FAIL</span>")) << page;
  EXPECT_TRUE(has(page, "title=\"a, b, c\">3 of 3</td>")) << page;
  EXPECT_TRUE(has(page, "<td class=\"num fail\" title=\"negative_t, ties\">1 of 2</td>")) << page;
  EXPECT_TRUE(has(page, "<td class=\"fail\">UNCOVERED</td>"));
  EXPECT_TRUE(has(page, "<h3>AgreesWithOracle on fused-post: failed</h3>"));
  EXPECT_TRUE(has(page, "<pre>row 0: token &lt;9&gt;</pre>"));
  EXPECT_TRUE(has(page, "<pre class=\"replay\">raceoracle replay --law AgreesWithOracle --kernel fused-post --reproduce X</pre>"));
  EXPECT_TRUE(has(page, "input classes never met: negative_t"));
  EXPECT_TRUE(has(page, "<td class=\"skip\">n/a: no stage-1 partials</td>"));
  EXPECT_TRUE(has(page, "<td class=\"num fail\">2</td>"));  // the unexplained agreement rows
  EXPECT_TRUE(has(page, "<td>fused-post</td></tr>"));       // the subjects the run named
}

TEST(HtmlReport, TheKillMatrixFailsAMutantAsTheJunitReportDoes) {
  const json report = json::parse(R"({"mutants": [
    {"mutant": "fused-post~a", "killed_by": ["PartialsAreFinite"],
     "pairs": [{"law": "PartialsAreFinite", "outcome": "killed"}, {"law": "TokensInRange", "outcome": "survived"}]},
    {"mutant": "fused-post~b", "killed_by": [],
     "pairs": [{"law": "TokensInRange", "outcome": "timed out", "detail": "limit 5 s"}]}]})");
  std::string page = html_of_report("mutants", report);
  EXPECT_TRUE(has(page, "<span class=\"verdict fail\">FAIL</span>")) << page;
  EXPECT_TRUE(has(page, "<th>mutant</th><th>verdict</th><th>PartialsAreFinite</th><th>TokensInRange</th>")) << page;
  EXPECT_TRUE(has(page, "<td>fused-post~a</td><td class=\"pass\">killed</td><td class=\"pass\">killed</td>"
                        "<td class=\"skip\">survived</td>"))
      << page;
  EXPECT_TRUE(has(page, "<td>fused-post~b</td><td class=\"fail\">SURVIVED</td><td class=\"skip\">-</td>")) << page;
  EXPECT_TRUE(has(page, "TokensInRange: timed out (limit 5 s)"));
  page = html_of_report("mutants", json::parse(R"({"mutants": [{"mutant": "m", "killed_by": ["A"], "pairs": []}]})"));
  EXPECT_TRUE(has(page, "verdict pass\">PASS<"));
  page = html_of_report("mutants", json::parse(R"({"mutants": [{"mutant": "m", "killed_by": ["A"], "pairs": []}]})"), {"B"});
  EXPECT_TRUE(has(page, "<td class=\"fail\">not killed by B</td>")) << page;
  EXPECT_TRUE(has(html_of_report("check", json{{"partial", true}, {"verdict", "INTERRUPTED"}}), "verdict skip\">INTERRUPTED<"));
}

TEST(HtmlReport, AFilesVerdictPageHoldsItsCountsFailuresAndNotesEscaped) {
  io::Table counts;
  counts.columns = {{"identical"}, {"unexplained", "UNEXPLAINED"}};
  counts.rows = {{std::int64_t(7), std::int64_t(1)}};
  const std::string page = html_of_file_verdict("verify-step", "<run>.safetensors: 8 requests", counts,
                                                {"request 3 (T = 1): UNEXPLAINED: emitted 5 & not 6"},
                                                {"deviation from SPEC §1: greedy when T == 0"}, false);
  EXPECT_TRUE(has(page, "verdict fail\">FAIL<")) << page;
  EXPECT_TRUE(has(page, "&lt;run&gt;.safetensors: 8 requests"));
  EXPECT_TRUE(has(page, "UNEXPLAINED</th>")) << page;
  EXPECT_TRUE(has(page, "emitted 5 &amp; not 6"));
  EXPECT_TRUE(has(page, "greedy when T == 0"));
  EXPECT_FALSE(has(html_of_file_verdict("verify", "f", counts, {}, {}, true), "Failures"));
}

TEST(HtmlReport, DivergenceChartsTakeEachOrdersColumnsFromTheTable) {
  io::Table t;
  t.columns = {{"temperature"}, {"order"}, {"max_actual_rel_error"}, {"max_bound"}, {"rate"}, {"rate_lo"}, {"rate_hi"}};
  t.rows = {{0.3f, std::string("post"), 1e-7, 1e-6, 0.0, 0.0, 2e-5},
            {1.0f, std::string("post"), 2e-7, 3e-6, 1e-4, 5e-5, 2e-4},
            {0.3f, std::string("pre"), 3e-7, 4e-5, std::monostate{}, std::monostate{}, std::monostate{}}};
  const DivergenceCharts c = divergence_charts(t, "top-8 keys");
  ASSERT_EQ(c.error.series.size(), 4u);
  EXPECT_EQ(c.error.series[0].name, "post-scale: measured");
  EXPECT_EQ(c.error.series[0].x, (std::vector<double>{0.3, 1.0}));  // a float temperature as it reads, 0.3
  EXPECT_EQ(c.error.series[1].y, (std::vector<double>{1e-6, 3e-6}));
  EXPECT_TRUE(c.error.series[1].dashed);
  EXPECT_EQ(c.error.series[2].y, (std::vector<double>{3e-7}));
  ASSERT_EQ(c.rate.series.size(), 4u);
  EXPECT_EQ(c.rate.series[0].hi, (std::vector<double>{2e-5, 2e-4}));
  EXPECT_EQ(c.rate.series[1].y, (std::vector<double>{2e-5, 2e-4}));  // the upper end, drawn where the estimate is 0
  EXPECT_TRUE(std::isnan(c.rate.series[2].y[0]));                     // not measured: not drawn
  EXPECT_TRUE(has(c.error.title, "top-8 keys"));
}

}  // namespace
}  // namespace raceoracle::cli
