#include "io/junit.h"

#include <fmt/format.h>

#include "io/markup.h"

namespace raceoracle::io {

int JunitSuite::failures() const {
  int n = 0;
  for (const JunitCase& c : cases) n += c.failure.has_value();
  return n;
}

int JunitSuite::skipped() const {
  int n = 0;
  for (const JunitCase& c : cases) n += c.skipped.has_value() && !c.failure.has_value() && !c.error.has_value();
  return n;
}

int JunitSuite::errors() const {
  int n = 0;
  for (const JunitCase& c : cases) n += c.error.has_value() && !c.failure.has_value();
  return n;
}

double JunitSuite::seconds() const {
  double s = 0;
  for (const JunitCase& c : cases) s += c.seconds;
  return s;
}

std::string junit_xml(const std::string& name, const std::vector<JunitSuite>& suites) {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  for (const JunitSuite& s : suites) {
    tests += int(s.cases.size());
    failures += s.failures();
    errors += s.errors();
    skipped += s.skipped();
    seconds += s.seconds();
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                     xml_escape(name), tests, failures, errors, skipped, seconds);
  for (const JunitSuite& s : suites) {
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                       xml_escape(s.name), s.cases.size(), s.failures(), s.errors(), s.skipped(), s.seconds());
    if (!s.properties.empty()) {
      out += "    <properties>\n";
      for (const auto& [k, v] : s.properties)
        out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k), xml_escape(v));
      out += "    </properties>\n";
    }
    for (const JunitCase& c : s.cases) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(c.classname),
                         xml_escape(c.name), c.seconds);
      if (!c.failure && !c.error && !c.skipped) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (c.failure)
        out += fmt::format("      <failure message=\"{}\">{}</failure>\n", xml_escape(c.failure->message),
                           xml_escape(c.failure->text, false));
      else if (c.error)
        out += fmt::format("      <error message=\"{}\">{}</error>\n", xml_escape(c.error->message),
                           xml_escape(c.error->text, false));
      else
        out += fmt::format("      <skipped message=\"{}\">{}</skipped>\n", xml_escape(c.skipped->message),
                           xml_escape(c.skipped->text, false));
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace raceoracle::io
