// JUnit XML, the report CI systems read (GitHub Actions' test reporters,
// GitLab, Jenkins, pytest's --junitxml): test suites of test cases, each
// passed, failed (a message and the text: the counterexample, the replay
// line), in error (it could not run to its end) or skipped. The schema is the
// one pytest writes (testsuites > testsuite > testcase > failure | error |
// skipped, times in seconds).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace raceoracle::io {

struct JunitOutcome {
  std::string message;  ///< one line: the attribute CI systems show first
  std::string text;     ///< the body: counterexample, replay command, details
};

struct JunitCase {
  std::string classname;  ///< the group: "fused-post" (the subject), "mutant gate"
  std::string name;       ///< "AgreesWithOracle", "fused-post~no_m_safe"
  double seconds = 0;
  std::optional<JunitOutcome> failure;  ///< set: the case failed
  std::optional<JunitOutcome> skipped;  ///< set: the case did not apply
  std::optional<JunitOutcome> error;    ///< set: the case could not run to its end (an interrupted run)
};

struct JunitSuite {
  std::string name;  ///< "raceoracle check: laws"
  std::vector<std::pair<std::string, std::string>> properties;  ///< seed, backend, ...
  std::vector<JunitCase> cases;
  int failures() const;
  int skipped() const;
  int errors() const;
  double seconds() const;
};

/// The document: <testsuites name=...> with every suite, text escaped
/// (characters XML 1.0 cannot hold, such as most control characters,
/// written as U+FFFD; invalid UTF-8 bytes likewise).
std::string junit_xml(const std::string& name, const std::vector<JunitSuite>& suites);

}  // namespace raceoracle::io
