#include "io/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/markup.h"

namespace raceoracle::io {
namespace {

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; padding: 0 1em; color: #1b1b1b; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #d0d0d0; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { background: #e3f4e3; } .fail { background: #fbe0e0; font-weight: bold; } .skip { background: #f3f3f3; color: #666; }
.verdict { display: inline-block; padding: 0.2em 0.8em; border-radius: 0.3em; font-weight: bold; }
pre { background: #f7f7f7; border: 1px solid #e0e0e0; padding: 0.5em; overflow-x: auto; font-size: 0.85em; white-space: pre-wrap; }
p.note { color: #555; font-size: 0.9em; }
svg text { font-family: sans-serif; }
)";

std::string attr(const std::string& name, const std::string& value) {
  return value.empty() ? "" : fmt::format(" {}=\"{}\"", name, xml_escape(value));
}

const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

/// One axis: a data range mapped onto pixels, linear or by decades.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;  ///< in the axis' own units (log10 of the value on a log axis)
  double px0 = 0, px1 = 1;
  std::vector<double> ticks;  ///< values, not units

  bool placeable(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double unit(double v) const { return log ? std::log10(v) : v; }
  double px(double v) const { return px0 + (unit(v) - lo) / (hi - lo) * (px1 - px0); }

  /// Spans the values: whole decades on a log axis, steps of 1, 2 or 5 times a power of ten otherwise.
  void fit(const std::vector<double>& values) {
    double mn = std::numeric_limits<double>::infinity(), mx = -mn;
    for (double v : values) {
      mn = std::min(mn, unit(v));
      mx = std::max(mx, unit(v));
    }
    if (!(mn <= mx)) mn = 0, mx = 1;  // nothing to place
    if (log) {
      lo = std::floor(mn);
      hi = std::max(std::ceil(mx), lo + 1);
      const int step = int(std::ceil((hi - lo) / 8));
      for (double d = lo; d <= hi + 1e-9; d += step) ticks.push_back(std::pow(10.0, d));
      return;
    }
    if (mx - mn < 1e-300) {
      const double pad = mn == 0 ? 1 : std::fabs(mn) * 0.1;
      mn -= pad, mx += pad;
    }
    const double raw = (mx - mn) / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = mag * (raw / mag <= 1 ? 1 : raw / mag <= 2 ? 2 : raw / mag <= 5 ? 5 : 10);
    lo = std::floor(mn / step) * step;
    hi = std::ceil(mx / step) * step;
    for (double t = lo; t <= hi + step * 1e-9; t += step) ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  }
};

std::string tick_label(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::string html_page(const std::string& title, const std::string& body) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n"
                     "<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n{2}</body>\n</html>\n",
                     xml_escape(title, false), kStyle, body);
}

std::string html_element(const std::string& tag, const std::string& text, const std::string& css_class) {
  return fmt::format("<{0}{1}>{2}</{0}>\n", tag, attr("class", css_class), xml_escape(text, false));
}

std::string html_table(const std::vector<std::string>& head, const std::vector<std::vector<HtmlCell>>& rows) {
  std::string out = "<table>\n";
  if (std::any_of(head.begin(), head.end(), [](const std::string& h) { return !h.empty(); })) {
    out += "<thead><tr>";
    for (const std::string& h : head) out += "<th>" + xml_escape(h, false) + "</th>";
    out += "</tr></thead>\n";
  }
  out += "<tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const HtmlCell& c : row)
      out += fmt::format("<td{}{}>{}</td>", attr("class", c.css_class), attr("title", c.title), xml_escape(c.text, false));
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string svg_chart(const Chart& c) {
  constexpr double kWidth = 760, kHeight = 430, kLeft = 80, kRight = 740, kTop = 50, kBottom = 370;
  Axis x{c.log_x, 0, 1, kLeft, kRight, {}}, y{c.log_y, 0, 1, kBottom, kTop, {}};
  std::vector<double> xs, ys;
  std::size_t left_out = 0, points = 0;
  const auto usable = [&](const ChartSeries& s, std::size_t i) { return x.placeable(s.x[i]) && y.placeable(s.y[i]); };
  for (const ChartSeries& s : c.series)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      ++points;
      if (!usable(s, i)) {
        ++left_out;
        continue;
      }
      xs.push_back(s.x[i]);
      ys.push_back(s.y[i]);
      if (i < s.lo.size() && y.placeable(s.lo[i])) ys.push_back(s.lo[i]);
      if (i < s.hi.size() && y.placeable(s.hi[i])) ys.push_back(s.hi[i]);
    }
  x.fit(xs);
  y.fit(ys);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\">\n"
      "<title>{2}</title>\n<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{2}</text>\n",
      kWidth, kHeight, xml_escape(c.title, false), (kLeft + kRight) / 2);
  for (double t : x.ticks)
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"11\">{4}</text>\n",
                       x.px(t), kTop, kBottom, kBottom + 16, tick_label(t));
  for (double t : y.ticks)
    out += fmt::format("<line x1=\"{0}\" y1=\"{2:.1f}\" x2=\"{1}\" y2=\"{2:.1f}\" stroke=\"#e4e4e4\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\" font-size=\"11\">{5}</text>\n",
                       kLeft, kRight, y.px(t), kLeft - 6, y.px(t) + 4, tick_label(t));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#555\"/>\n", kLeft, kTop,
                     kRight - kLeft, kBottom - kTop);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n", (kLeft + kRight) / 2,
                     kBottom + 36, xml_escape(c.x_label, false));
  out += fmt::format("<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 18 {0})\">{1}</text>\n",
                     (kTop + kBottom) / 2, xml_escape(c.y_label, false));
  std::string legend;  // drawn last, over a white box, so no line crosses it
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const ChartSeries& s = c.series[k];
    const char* colour = kColours[k % std::size(kColours)];
    const std::string dash = s.dashed ? " stroke-dasharray=\"6 4\"" : "";
    std::string line;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!usable(s, i)) continue;
      const double px = x.px(s.x[i]), py = y.px(s.y[i]);
      line += fmt::format("{:.1f},{:.1f} ", px, py);
      if (!s.dashed) out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px, py, colour);
      if (i < s.lo.size() && i < s.hi.size() && y.placeable(s.lo[i]) && y.placeable(s.hi[i]))
        out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>\n", px,
                           y.px(s.lo[i]), y.px(s.hi[i]), colour);
    }
    if (!line.empty())
      out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{}/>\n", line, colour, dash);
    const double ly = kTop + 14 + 16 * double(k);
    legend += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
                       "<text x=\"{5}\" y=\"{6:.1f}\" font-size=\"12\">{7}</text>\n",
                       kLeft + 10, ly, kLeft + 34, colour, dash, kLeft + 40, ly + 4, xml_escape(s.name, false));
  }
  std::size_t longest = 0;
  for (const ChartSeries& s : c.series) longest = std::max(longest, s.name.size());
  if (!c.series.empty())
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.0f}\" height=\"{}\" fill=\"white\" fill-opacity=\"0.85\"/>\n{}",
                       kLeft + 4, kTop + 4, 42 + 6.5 * double(longest), 16 * c.series.size() + 4, legend);
  if (points == 0)
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">no data</text>\n",
                       (kLeft + kRight) / 2, (kTop + kBottom) / 2);
  else if (left_out > 0)
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555\">{} of {} points not drawn: not finite{}</text>\n",
                       kLeft, kHeight - 6, left_out, points, c.log_x || c.log_y ? ", or not positive on a log axis" : "");
  return out + "</svg>\n";
}

}  // namespace raceoracle::io
