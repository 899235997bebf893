// The HTML page's pieces: every text escaped, tables as given, charts that
// place each point where its value says and never draw one they cannot.
#include "io/html.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "io/table.h"

namespace raceoracle::io {
namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Html, PageIsOneDocumentWithItsTitleEscaped) {
  const std::string page = html_page("check <sampler> & co", html_element("pre", "row 3\n<x>", "fail"));
  EXPECT_EQ(page.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_NE(page.find("<title>check &lt;sampler&gt; &amp; co</title>"), std::string::npos);
  EXPECT_NE(page.find("<h1>check &lt;sampler&gt; &amp; co</h1>"), std::string::npos);
  EXPECT_NE(page.find("<pre class=\"fail\">row 3\n&lt;x&gt;</pre>"), std::string::npos);
  // self-contained: nothing fetched, nothing run
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("href="), std::string::npos);
}

TEST(Html, TableEscapesCellsAndKeepsItsShape) {
  const std::string t = html_table({"law", "cases"}, {{{"A<B", "", ""}, {"10", "num", "the classes: a, b"}},
                                                      {{"C", "fail", ""}, {"7", "num", ""}}});
  EXPECT_EQ(count(t, "<tr>"), 3);
  EXPECT_EQ(count(t, "<th>"), 2);
  EXPECT_EQ(count(t, "<td"), 4);
  EXPECT_NE(t.find("<td>A&lt;B</td>"), std::string::npos);
  EXPECT_NE(t.find("<td class=\"num\" title=\"the classes: a, b\">10</td>"), std::string::npos);
  EXPECT_NE(t.find("<td class=\"fail\">C</td>"), std::string::npos);
}

TEST(Html, ColumnTableRendersItsColumnsAsHtml) {
  Table t;
  t.columns = {{"temperature", "T", "{:g}", "{}"}, {"order"}, {"rate", "estimate", "{:.3g}", "{}"}};
  t.rows = {{0.7f, std::string("post"), 1.25e-5}, {1.0f, std::string("pre"), std::monostate{}}};
  const std::string h = t.html({"order", "rate"});
  EXPECT_NE(h.find("<th>order</th><th>estimate</th>"), std::string::npos);
  EXPECT_NE(h.find("<td>post</td><td class=\"num\">1.25e-05</td>"), std::string::npos);
  EXPECT_NE(h.find("<td>pre</td><td class=\"num\">-</td>"), std::string::npos);
  EXPECT_THROW(t.html({"nope"}), std::invalid_argument);
}

/// The (x, y) pixel pairs of the chart's circles, in order.
std::vector<std::pair<double, double>> circles(const std::string& svg) {
  std::vector<std::pair<double, double>> out;
  const std::regex circle("<circle cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it)
    out.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  return out;
}

TEST(Html, LogChartPlacesDecadesEvenlyAndLeavesOutWhatItCannotPlace) {
  Chart c{"key error <bound>", "temperature", "error", true, true, {}};
  c.series.push_back({"measured", {0.01, 0.1, 1, 10}, {1e-7, 1e-6, 1e-5, 0}, {}, {}, false});
  c.series.push_back({"bound", {0.01, 1}, {1e-6, NAN}, {}, {}, true});
  const std::string svg = svg_chart(c);
  EXPECT_NE(svg.find("key error &lt;bound&gt;"), std::string::npos);
  const auto p = circles(svg);
  ASSERT_EQ(p.size(), 3u);  // y = 0 cannot sit on a log axis; the dashed bound draws no circles
  // one decade of x and of y is the same step between each pair of points
  EXPECT_NEAR(p[1].first - p[0].first, p[2].first - p[1].first, 0.2);
  EXPECT_NEAR(p[1].second - p[0].second, p[2].second - p[1].second, 0.2);
  EXPECT_LT(p[1].second, p[0].second);  // larger values higher up
  EXPECT_NE(svg.find("2 of 6 points not drawn"), std::string::npos);
  EXPECT_NE(svg.find(">1e-07<"), std::string::npos);  // a decade tick
}

TEST(Html, LinearChartSpansItsValuesAndDrawsIntervals) {
  Chart c{"rate", "T", "share", false, false, {}};
  c.series.push_back({"estimate", {0, 1, 2}, {0.1, 0.2, 0.4}, {0.05, 0.1, 0.3}, {0.15, 0.3, 0.5}, false});
  const std::string svg = svg_chart(c);
  const auto p = circles(svg);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_NEAR(p[1].first - p[0].first, p[2].first - p[1].first, 0.2);
  EXPECT_NEAR((p[0].second - p[1].second) * 2, p[1].second - p[2].second, 0.2);  // 0.1 -> 0.2 is half of 0.2 -> 0.4
  EXPECT_EQ(count(svg, "<polyline"), 1);
  EXPECT_EQ(svg.find("not drawn"), std::string::npos);
  // the axis reaches the interval's ends, not the points' alone
  EXPECT_NE(svg.find(">0.5<"), std::string::npos);
  EXPECT_NE(svg.find(">0<"), std::string::npos);
}

TEST(Html, EmptyChartSaysSo) {
  EXPECT_NE(svg_chart(Chart{"nothing", "x", "y", true, true, {}}).find(">no data<"), std::string::npos);
}

}  // namespace
}  // namespace raceoracle::io
