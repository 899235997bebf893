// Text any XML or HTML reader accepts, whatever a counterexample holds.
#include "io/markup.h"

#include <gtest/gtest.h>

namespace raceoracle::io {
namespace {

TEST(Markup, EscapesMarkupAndKeepsNewlines) {
  EXPECT_EQ(xml_escape("a<b & c>\"d\" 'e'"), "a&lt;b &amp; c&gt;&quot;d&quot; &apos;e&apos;");
  EXPECT_EQ(xml_escape("row 3\nreplay: x\t y"), "row 3&#10;replay: x&#9; y");         // an attribute's
  EXPECT_EQ(xml_escape("row 3\nreplay: <x>\t y", false), "row 3\nreplay: &lt;x&gt;\t y");  // element text
  EXPECT_EQ(xml_escape("T = 0.7 ≤ 1, §11, 🙂"), "T = 0.7 ≤ 1, §11, 🙂");  // valid UTF-8 passes unchanged
}

TEST(Markup, WritesWhatXmlCannotHoldAsTheReplacementCharacter) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(xml_escape(std::string("a\0b", 3)), "a" + r + "b");        // NUL
  EXPECT_EQ(xml_escape("\x1b[31mred"), r + "[31mred");                // an ANSI escape
  EXPECT_EQ(xml_escape("\xff\xfe"), r + r);                            // not UTF-8
  EXPECT_EQ(xml_escape("\xC0\xAF"), r + r);                            // overlong '/'
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), r + r + r);                    // a UTF-16 surrogate
  EXPECT_EQ(xml_escape("\xEF\xBF\xBE"), r + r + r);                    // U+FFFE
  EXPECT_EQ(xml_escape("\xF4\x90\x80\x80"), r + r + r + r);            // past U+10FFFF
  EXPECT_EQ(xml_escape("ab\xE2\x89"), "ab" + r + r);                   // cut mid-character
}

}  // namespace
}  // namespace raceoracle::io
