#pragma once
/// The laws of the speculative-decoding verify step (SPEC §11) on the verify
/// kernels, and the runner that draws their inputs: batches of requests from
/// fixtures/verify_requests.h, a case being the generator's seed and shape,
/// shrunk by RapidCheck towards fewer, shorter, narrower requests, then
/// narrowed to the one request that fails. The mutant gate of the verify
/// kernels runs here too: a verify mutant is the kernel launched with one
/// defect of kernels::kVerifyOnly, in this process (no verify defect writes
/// outside its rows, and the sanitizer pass runs the kernels' every path).
#include <cstdint>
#include <string>
#include <vector>

#include "fixtures/verify_requests.h"
#include "properties/run_settings.h"
#include "properties/suite.h"

namespace raceoracle::properties {

/// A verify case: the generator's seed and shape, and the one request it was
/// narrowed to (-1: every request). The same case gives the same batch.
struct VerifyCase {
  std::uint64_t seed = 0;
  fixtures::VerifyShape shape;
  std::int64_t request = -1;

  bool operator==(const VerifyCase&) const = default;
};
std::string to_json(const VerifyCase& c);
/// The inverse of to_json; std::invalid_argument naming a missing or bad field.
VerifyCase verify_case_from_json(const std::string& text);
std::string describe(const VerifyCase& c);
/// The batch of `c`, its uniforms planted under `contract`.
subject::VerifyBatch materialize(const VerifyCase& c, const race::NumericsContract& contract);

/// What the verify laws judge: a verify kernel built with `defect` (none:
/// the real one), or a verify step outside this process (`external`).
struct VerifySubject {
  const kernels::VerifyKernel* kernel = nullptr;
  kernels::Defect defect = kernels::Defect::none;
  const subject::ExternalVerifyStep* external = nullptr;

  std::string name() const;  ///< "verify-fused", "verify-fused~accept_strict", or the sampler's name
  race::NumericsContract contract() const;  ///< what it is judged by
  race::VerifyRules rules() const;          ///< how it compares a ratio with u (the kernels: in float64)
  /// How `raceoracle check` (or `mutants`, `as_mutant`) names it on a replay line.
  std::string replay_args(bool as_mutant) const;
  /// Its ids for `b`; std::runtime_error saying why none came back (a launch
  /// error, an error the sampler raised, a breakdown: take_breakdown()).
  std::vector<std::int32_t> run(const subject::VerifyBatch& b) const;
  std::string take_breakdown() const { return external ? external->take_breakdown() : std::string(); }
};
/// "verify-fused" or "verify-fused~accept_strict" (a defect of kernels::kVerifyOnly);
/// std::invalid_argument naming the known ones otherwise.
VerifySubject find_verify_subject(const std::string& name);
bool is_verify_name(const std::string& name);  ///< names a verify kernel or one of its mutants
/// Every verify mutant of the kernels named (every verify kernel when none is).
std::vector<VerifySubject> verify_mutants(const std::vector<std::string>& kernel_names);

/// What a verify law reads: the subject, the batch and the ids it wrote.
struct VerifyLawContext {
  const VerifySubject& subject;
  const subject::VerifyBatch& batch;
  const std::vector<std::int32_t>& tokens;
};
/// Empty when the law holds, else the first violation in words.
using VerifyLawCheck = std::string (*)(const VerifyLawContext&);

struct VerifyLaw {
  std::string name;  ///< PascalCase, as reports name it
  std::string statement;
  VerifyLawCheck check = nullptr;
  bool narrows = true;  ///< a failure is narrowed to one request (not for a law about several)
};
const std::vector<VerifyLaw>& verify_laws();
/// The laws a `--properties P..` list selects (empty: every one); throws
/// std::invalid_argument naming an unknown one.
std::vector<const VerifyLaw*> select_verify_laws(const std::vector<std::string>& names);

/// `law` on `s`: s.cases random cases from s.seed (a replay is the same
/// seed and count). The result as the sampling laws report theirs.
LawResult run_verify_law(const VerifyLaw& law, const VerifySubject& s, const RunSettings& settings);
/// `law` on one case (a counterexample's JSON, replayed).
std::string run_verify_case(const VerifyLaw& law, const VerifySubject& s, const VerifyCase& c);

/// One verify mutant against laws: each law's result; killed by each that failed.
struct VerifyMutantRun {
  VerifySubject mutant;
  std::vector<std::pair<const VerifyLaw*, LawResult>> results;
  std::vector<std::string> killers() const;
  bool killed() const { return !killers().empty(); }
};
VerifyMutantRun run_verify_mutant(const VerifySubject& m, const std::vector<const VerifyLaw*>& laws, const RunSettings& s);

}  // namespace raceoracle::properties
