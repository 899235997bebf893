#pragma once
/// The property suite: every law of SPEC §5 with the inputs it draws (SPEC
/// §4), the input classes it must meet (coverage is a requirement), and a
/// runner over RapidCheck with per-call seed, case count and replay.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fixtures/coverage.h"
#include "fixtures/generators.h"
#include "fixtures/matrix.h"
#include "fixtures/sweep.h"
#include "subject/subject.h"
#include "properties/laws.h"
#include "properties/run_settings.h"

namespace raceoracle::properties {

/// What a law reads of its subject.
enum class Needs : std::uint8_t {
  tokens,    ///< tokens only: any subject, an external sampler included
  kernel,    ///< a compiled-in kernel (it lays out device memory itself)
  partials,  ///< a fused kernel's stage-1 partials
  nan_as_masked,  ///< tokens, from a subject that treats a NaN logit as masked (the definition's convention)
  filters,        ///< tokens, from a subject that applies row filters (SPEC §9)
  masked_row_zero,  ///< tokens, from a subject whose fully masked row gives id 0 (the definition's convention)
};

/// Why a law does not apply to every subject; "" for Needs::tokens.
const char* needs_note(Needs n);

struct Law {
  std::string name;  ///< PascalCase, as tests and reports name it
  std::string statement;
  LawCheck check = nullptr;
  fixtures::gen::CaseOptions inputs;
  std::vector<fixtures::Cover> must_cover;
  /// The row class x edge cells it must meet (matrix.h); its matrix cases
  /// run after the corpus and before the random search.
  fixtures::MatrixRequirement matrix;
  /// More cases built by construction (the id sweep, sweep.h; fixtures/reach.h), run with the matrix cases, for the subject.
  std::vector<fixtures::CaseSpec> (*built)(const subject::Subject&) = nullptr;
  Needs needs = Needs::tokens;
  int case_divisor = 1;  ///< expensive properties run cases / case_divisor

  bool applies_to(const subject::Subject& s) const;
  /// The input classes required of `s`: must_cover less the memory-layout
  /// classes when `s` is outside the process (the protocol sends rows packed).
  std::vector<fixtures::Cover> required_coverage(const subject::Subject& s) const;
};

const std::vector<Law>& laws();
const Law* find_law(const std::string& name);
/// The laws a `--properties P..` list selects (empty: every one); throws
/// std::invalid_argument naming an unknown one.
std::function<bool(const Law&)> law_selection(const std::vector<std::string>& names);

struct LawResult {
  /// error: the property could not be judged (a bad reproduce string, a
  /// sampler that crashed, hung or broke the protocol); never a pass.
  enum class Verdict { passed, failed, gave_up, error } verdict = Verdict::passed;
  int cases = 0;
  std::string counterexample;  ///< readable, shrunk
  std::string case_json;       ///< the shrunk CaseSpec, for the regression corpus
  std::string reproduce;       ///< RapidCheck reproduce string
  std::vector<std::string> required;   ///< the input classes it had to meet (none judged on a replay, a failure, an error)
  std::vector<std::string> uncovered;  ///< those of them never met
  double seconds = 0;
  bool ok() const { return verdict == Verdict::passed && uncovered.empty(); }
  std::string summary() const;
};
const char* to_string(LawResult::Verdict v);

LawResult run_law(const Law& p, const subject::Subject& k, const RunSettings& s);
/// Why `reproduce` cannot replay law `p` on `k` (malformed, or printed for
/// another law or kernel), in words; empty when it can.
std::string reproduce_problem(const Law& p, const subject::Subject& k, const std::string& reproduce);

/// The fewest rows of a failing `spec`, in their order, that still fail law
/// `p` (ddmin): how a built case, thousands of rows, is reported.
fixtures::CaseSpec fewest_failing_rows(const Law& p, const subject::Subject& k, fixtures::CaseSpec spec);

/// Runs one saved case through one law (the regression corpus).
std::string run_case(const Law& p, const subject::Subject& k, const fixtures::CaseSpec& spec);

/// The command that replays a failure.
std::string replay_command(const Law& p, const subject::Subject& k, const LawResult& r);

/// The regression corpus: failing cases found once, replayed first.
struct CorpusEntry {
  std::string law;
  std::string note;
  fixtures::CaseSpec spec;
};
/// Reads every *.json under `dir` (one entry per file); throws on a bad file.
std::vector<CorpusEntry> load_corpus(const std::string& dir);
/// Writes a new entry; returns its path.
std::string save_to_corpus(const std::string& dir, const std::string& property, const std::string& note,
                           const std::string& case_json);

}  // namespace raceoracle::properties
