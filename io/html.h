// One self-contained HTML page (its style inline, no script, no external
// resource: a CI run publishes it as one file) and what reports build it
// from: escaped text, tables, and charts drawn as inline SVG.
#pragma once

#include <string>
#include <vector>

namespace raceoracle::io {

/// The page: `title` in <title> and as its heading; `body` is HTML (built
/// with the functions below, so every text in it is escaped).
std::string html_page(const std::string& title, const std::string& body);

/// <tag class="css_class">text</tag>, the text escaped (newlines kept: a
/// <pre> shows them).
std::string html_element(const std::string& tag, const std::string& text, const std::string& css_class = "");

struct HtmlCell {
  std::string text;
  std::string css_class;  ///< "num" right-aligns; "pass", "fail", "skip" colour the cell
  std::string title;      ///< shown on hover (the classes behind a count); empty: none
};

/// A table with a header row (none when every heading is empty); every text escaped.
std::string html_table(const std::vector<std::string>& head, const std::vector<std::vector<HtmlCell>>& rows);

struct ChartSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> lo, hi;  ///< an interval per point, drawn as a bar (empty: none)
  bool dashed = false;         ///< a bound rather than a measurement
};

struct Chart {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  std::vector<ChartSeries> series;
};

/// The chart as inline SVG: axes with ticks (decades on a log axis), a line
/// through each series' points in their order, interval bars, a legend.
/// Points an axis cannot place (not finite, or <= 0 on a log axis) are left
/// out and counted in a line under the chart, never drawn somewhere wrong.
std::string svg_chart(const Chart& c);

}  // namespace raceoracle::io
