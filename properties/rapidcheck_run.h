#pragma once
/// What the laws' runners (suite.cpp, verify_laws.cpp) share of RapidCheck's
/// per-call API: a listener that prints nothing, and the outcomes that are
/// neither a pass nor a failure.
#include <rapidcheck/detail/Property.h>
#include <rapidcheck/detail/TestListener.h>

#include "properties/suite.h"

namespace raceoracle::properties {

/// RapidCheck calls back here for each case and shrink; nothing to print.
class QuietListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

/// A run that gave up or erred: its verdict and RapidCheck's words in `out`; false for a pass or a failure.
inline bool gave_up_or_error(const rc::detail::TestResult& result, LawResult& out) {
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (result.match(gave_up)) {
    out.verdict = LawResult::Verdict::gave_up;
    out.counterexample = gave_up.description;
    return true;
  }
  if (result.match(error)) {
    out.verdict = LawResult::Verdict::error;
    out.counterexample = error.description;
    return true;
  }
  return false;
}

}  // namespace raceoracle::properties
