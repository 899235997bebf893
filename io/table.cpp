#include "io/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "io/html.h"

namespace raceoracle::io {
namespace {

std::string render(const Cell& c, const std::string& spec, const char* none) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) return none;
        else if constexpr (std::is_same_v<V, std::string>) return v;
        else if constexpr (std::is_same_v<V, std::int64_t>) return fmt::format("{}", v);
        else return fmt::format(fmt::runtime(spec), v);
      },
      c);
}

/// A CSV field quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

/// The indices of `names` in `columns` (every column when empty); throws naming one the table lacks.
std::vector<std::size_t> shown_columns(const std::vector<ColumnFormat>& columns, const std::vector<std::string>& names) {
  std::vector<std::size_t> shown;
  if (names.empty())
    for (std::size_t i = 0; i < columns.size(); ++i) shown.push_back(i);
  for (const auto& n : names) {
    const auto it = std::find_if(columns.begin(), columns.end(), [&](const ColumnFormat& c) { return c.name == n; });
    if (it == columns.end()) throw std::invalid_argument("the table has no column '" + n + "'");
    shown.push_back(std::size_t(it - columns.begin()));
  }
  return shown;
}

const std::string& heading(const ColumnFormat& c) { return c.heading.empty() ? c.name : c.heading; }

}  // namespace

std::string Table::text(const std::vector<std::string>& names) const {
  const std::vector<std::size_t> shown = shown_columns(columns, names);
  std::vector<std::vector<std::string>> cells(rows.size());
  std::vector<std::size_t> width;
  std::vector<bool> left;
  for (std::size_t i : shown) {
    const ColumnFormat& c = columns[i];
    width.push_back(heading(c).size());
    left.push_back(!rows.empty() && std::all_of(rows.begin(), rows.end(), [&](const auto& r) {
                     return std::holds_alternative<std::string>(r[i]) || std::holds_alternative<std::monostate>(r[i]);
                   }));
  }
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t k = 0; k < shown.size(); ++k) {
      cells[r].push_back(render(rows[r][shown[k]], columns[shown[k]].text, "-"));
      width[k] = std::max(width[k], cells[r].back().size());
    }
  std::string out;
  const auto line = [&](const auto& field) {
    std::string l;
    for (std::size_t k = 0; k < shown.size(); ++k) {
      const std::string s = field(k);
      const std::string pad(width[k] - std::min(width[k], s.size()), ' ');
      l += (k ? "  " : "") + (left[k] ? s + pad : pad + s);
    }
    l.erase(l.find_last_not_of(' ') + 1);
    out += l + "\n";
  };
  line([&](std::size_t k) { return heading(columns[shown[k]]); });
  for (const auto& r : cells) line([&](std::size_t k) { return r[k]; });
  return out;
}

std::string Table::csv() const {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_field(columns[i].name);
  out += "\n";
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_field(render(r[i], columns[i].csv, ""));
    out += "\n";
  }
  return out;
}

nlohmann::json Table::json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json o = nlohmann::json::object();
    for (std::size_t i = 0; i < columns.size(); ++i)
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::monostate>) o[columns[i].name] = nullptr;
            else if constexpr (std::is_same_v<V, float>) o[columns[i].name] = std::stod(fmt::format("{}", v));  // 0.7, not 0.699999988079071
            else o[columns[i].name] = v;
          },
          r[i]);
    out.push_back(std::move(o));
  }
  return out;
}

std::string Table::html(const std::vector<std::string>& names) const {
  const std::vector<std::size_t> shown = shown_columns(columns, names);
  std::vector<std::string> head;
  for (std::size_t i : shown) head.push_back(heading(columns[i]));
  std::vector<std::vector<HtmlCell>> cells;
  for (const auto& r : rows) {
    cells.emplace_back();
    for (std::size_t i : shown)
      cells.back().push_back({render(r[i], columns[i].text, "-"), std::holds_alternative<std::string>(r[i]) ? "" : "num", ""});
  }
  return html_table(head, cells);
}

}  // namespace raceoracle::io
