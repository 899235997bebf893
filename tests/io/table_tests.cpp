// The column table: one list of columns, three renderings that agree.
#include "io/table.h"

#include <gtest/gtest.h>

namespace raceoracle::io {
namespace {

struct R {
  float t;
  std::string order;
  std::int64_t rows;
  double error;
  bool ran;
};

const std::vector<Column<R>> kColumns{
    {{"temperature", "T", "{}", "{}"}, [](const R& r) -> Cell { return r.t; }},
    {{"order", "", "{}", "{}"}, [](const R& r) -> Cell { return r.order; }},
    {{"rows", "rows", "{}", "{}"}, [](const R& r) -> Cell { return r.rows; }},
    {{"max_error", "max error", "{:.2e}", "{:.6e}"}, [](const R& r) -> Cell { return r.error; }},
    {{"kernel", "kernel", "{:.3f}", "{:.4f}"}, [](const R& r) -> Cell { return r.ran ? Cell{r.error} : Cell{}; }},
};

TEST(Table, TextAlignsNumbersRightWordsLeftAndShowsNoneAsADash) {
  const Table t = make_table(kColumns, {{0.7f, "post", 64, 1.5e-7, true}, {2, "pre, x", 1024, 2.0e-6, false}});
  EXPECT_EQ(t.text(),
            "  T  order   rows  max error  kernel\n"
            "0.7  post      64   1.50e-07   0.000\n"
            "  2  pre, x  1024   2.00e-06       -\n");
  EXPECT_EQ(t.text({"rows", "order"}),
            "rows  order\n"
            "  64  post\n"
            "1024  pre, x\n");
}

TEST(Table, CsvAndJsonCarryTheSameNamesAndValues) {
  const Table t = make_table(kColumns, {{0.7f, "post", 64, 1.5e-7, true}, {2, "pre, x", 1024, 2.0e-6, false}});
  EXPECT_EQ(t.csv(),
            "temperature,order,rows,max_error,kernel\n"
            "0.7,post,64,1.500000e-07,0.0000\n"  // a float in its shortest form, not 0.699999988
            "2,\"pre, x\",1024,2.000000e-06,\n");  // a comma quoted (RFC 4180), none left empty
  const nlohmann::json j = t.json();
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["temperature"], 0.7);  // the float's shortest form, as JSON readers would write it
  EXPECT_EQ(j[0]["order"], "post");
  EXPECT_EQ(j[0]["rows"], 64);
  EXPECT_EQ(j[0]["max_error"], 1.5e-7);  // JSON keeps the full double, not the text's digits
  EXPECT_TRUE(j[1]["kernel"].is_null());
  for (const auto& row : j) EXPECT_EQ(row.size(), kColumns.size());
}

TEST(Table, AColumnItLacksIsNamed) {
  const Table t = make_table(kColumns, std::vector<R>{});
  EXPECT_EQ(t.text(), "T  order  rows  max error  kernel\n");
  try {
    (void)t.text({"rows", "no_such"});
    ADD_FAILURE() << "an unknown column accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the table has no column 'no_such'");
  }
}

}  // namespace
}  // namespace raceoracle::io
