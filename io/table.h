// One column table renders a report four ways: a text table for people,
// CSV and JSON for machines, an HTML table for a published page, from one list of columns (a name, a heading, a
// format, a getter), so a column is written once and the three never drift.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace raceoracle::io {

/// One cell: none (not measured: "-" in text, empty in CSV, null in JSON),
/// a count, a number (a float prints in its own shortest form: 0.7, not
/// 0.699999988) or a word.
using Cell = std::variant<std::monostate, std::int64_t, double, float, std::string>;

/// How a column is shown; its name is the CSV header and the JSON key.
struct ColumnFormat {
  std::string name;     ///< "max_actual_rel_error"
  std::string heading;  ///< "max error" (the text table's; the name when empty)
  std::string text = "{}";  ///< fmt spec for a number in the text table, "{:.3e}"
  std::string csv = "{}";   ///< fmt spec for a number in CSV, "{:.6e}"
};

/// Cells in rows, and the columns that name them. Text cells are
/// right-aligned (words left-aligned) to the widest of heading and cells.
struct Table {
  std::vector<ColumnFormat> columns;
  std::vector<std::vector<Cell>> rows;
  /// The text table over `names` (every column when empty); throws
  /// std::invalid_argument naming a column the table lacks.
  std::string text(const std::vector<std::string>& names = {}) const;
  std::string csv() const;                ///< a header line, then one line a row
  nlohmann::json json() const;            ///< an array of objects, one a row, keys the names
  /// An HTML table (io/html.h) over `names` as text() shows them, numbers right-aligned.
  std::string html(const std::vector<std::string>& names = {}) const;
};

template <class Row>
struct Column {
  ColumnFormat format;
  std::function<Cell(const Row&)> get;
};

template <class Row>
Table make_table(const std::vector<Column<Row>>& columns, const std::vector<Row>& rows) {
  Table t;
  for (const auto& c : columns) t.columns.push_back(c.format);
  for (const Row& r : rows) {
    std::vector<Cell> cells;
    cells.reserve(columns.size());
    for (const auto& c : columns) cells.push_back(c.get(r));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

}  // namespace raceoracle::io
