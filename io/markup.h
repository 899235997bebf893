// Text inside XML and HTML (JUnit reports, the HTML page): the five markup
// characters escaped, and what XML 1.0 cannot hold (most control
// characters, invalid UTF-8) written as U+FFFD, so a counterexample with an
// ANSI escape or a stray byte never makes the document unreadable.
#pragma once

#include <string>

namespace raceoracle::io {

/// `text` as an attribute value (newlines and tabs as character references,
/// which attribute normalisation would turn into spaces) or, with
/// `attribute` false, as element text (newlines and tabs kept as they are).
std::string xml_escape(const std::string& text, bool attribute = true);

}  // namespace raceoracle::io
