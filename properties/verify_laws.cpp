#include "properties/verify_laws.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>

#include "kernels/registry.h"
#include "oracle/verify.h"
#include "properties/rapidcheck_run.h"
#include "subject/batch.h"

namespace raceoracle::properties {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::int32_t kPlaceholder = race::kVerifyPlaceholder;

/// How many drafts a request's ids accept (the ids before the first
/// placeholder, less the emitted one); -1 when it emits nothing.
std::int64_t accepted_count(const std::int32_t* out, std::int64_t k) {
  std::int64_t n = 0;
  while (n <= k && out[n] != kPlaceholder) ++n;
  return n - 1;
}

std::string ids_of(const std::int32_t* out, std::int64_t k) {
  return fmt::format("[{}]", fmt::join(out, out + k + 1, ", "));
}

/// Every request of the context with its verdict under the subject's contract.
template <class F>
std::string for_each_request(const VerifyLawContext& x, F&& f) {
  const race::NumericsContract contract = x.subject.contract();
  const subject::VerifyBatch& b = x.batch;
  for (std::int64_t r = 0; r < b.requests; ++r) {
    const oracle::VerifyView view = b.request(r);
    const oracle::VerifyVerdict v = oracle::decide_verify(view, contract, b.constants, x.subject.rules());
    if (v.request_class == oracle::RowClass::invalid) continue;  // the generator makes none; the oracle law judges them
    if (std::string why = f(r, view, v, x.tokens.data() + r * (b.drafts + 1)); !why.empty())
      return fmt::format("{}: {}", subject::request_name(b, r), why);
  }
  return {};
}

std::string agrees_with_oracle(const VerifyLawContext& x) {
  return subject::judge_verify_batch(x.batch, x.tokens, x.subject.contract(), x.subject.rules()).first_failure;
}

std::string bonus_only_after_full_acceptance(const VerifyLawContext& x) {
  return for_each_request(x, [&](std::int64_t, const oracle::VerifyView& view, const oracle::VerifyVerdict& v,
                                 const std::int32_t* out) -> std::string {
    const std::int64_t k = view.drafts;
    if (k == 0 || accepted_count(out, k) != k) return {};
    for (std::size_t j = 0; j < v.acceptance.size() && std::int64_t(j) < k; ++j)
      if (v.acceptance[j] == oracle::Acceptance::reject)
        return fmt::format("ids {}: every draft accepted and the bonus {} emitted, but draft {} (id {}) is rejected "
                           "whatever fp32 computes{}",
                           ids_of(out, k), out[k], j, view.draft_ids[j],
                           j < v.ratio.size() ? fmt::format(" (P/Q = {:.9g} < u = {:.9g})", v.ratio[j], view.uniforms[j])
                                              : std::string(" (it is not the row's greedy token)"));
    return {};
  });
}

/// f(view, a, t, P, out) for each sampling request whose emitted token t
/// (after `a` accepted drafts; at a rejection only, `rejected_only`) is an
/// id in (0, V), P the target's probabilities at row a under the subject's
/// contract. Id 0 is the race's answer when every key is 0 (SPEC §11): not judged.
template <class F>
std::string for_each_emitted(const VerifyLawContext& x, bool rejected_only, F&& f) {
  const race::NumericsContract contract = x.subject.contract();
  const float eps = race::race_eps(x.batch.constants.eps, contract.conventions);
  return for_each_request(x, [&](std::int64_t, const oracle::VerifyView& view, const oracle::VerifyVerdict& v,
                                 const std::int32_t* out) -> std::string {
    const std::int64_t k = view.drafts, a = accepted_count(out, k);
    if (v.request_class != oracle::RowClass::sampling || a < 0 || (rejected_only && a >= k)) return {};
    const std::int32_t t = out[a];
    if (t <= 0 || t >= view.vocab) return {};
    return f(view, a, t, oracle::target_probabilities(view, a, contract, eps), out);
  });
}

std::string recovered_token_has_residual(const VerifyLawContext& x) {
  return for_each_emitted(x, true, [&](const oracle::VerifyView& view, std::int64_t a, std::int32_t t,
                                       const oracle::Probabilities& P, const std::int32_t* out) -> std::string {
    const double q = view.draft_prob(a, t);
    if (P.hi[std::size_t(t)] > q) return {};
    return fmt::format("ids {}: draft {} rejected and id {} emitted, whose residual max(P - Q, 0) is 0 whatever fp32 "
                       "computes (P <= {:.9g}, Q = {:.9g})",
                       ids_of(out, view.drafts), a, t, P.hi[std::size_t(t)], q);
  });
}

std::string filtered_ids_never_emitted(const VerifyLawContext& x) {
  return for_each_emitted(x, false, [&](const oracle::VerifyView& view, std::int64_t a, std::int32_t t,
                                        const oracle::Probabilities& P, const std::int32_t* out) -> std::string {
    if (P.hi[std::size_t(t)] > 0) return {};
    return fmt::format("ids {}: id {} emitted at target row {}, where it is masked or surely filtered out{}",
                       ids_of(out, view.drafts), t, a,
                       view.filter ? " (" + subject::describe(*view.filter) + ")" : std::string());
  });
}

std::string greedy_verify_is_the_argmax_chain(const VerifyLawContext& x) {
  return for_each_request(x, [&](std::int64_t, const oracle::VerifyView& view, const oracle::VerifyVerdict& v,
                                 const std::int32_t* out) -> std::string {
    if (v.request_class != oracle::RowClass::greedy) return {};
    const std::int64_t k = view.drafts;
    std::vector<std::int32_t> want(std::size_t(k + 1), kPlaceholder);
    for (std::int64_t j = 0; j < v.accepted; ++j) want[std::size_t(j)] = view.draft_ids[j];
    want[std::size_t(v.accepted)] = std::int32_t(v.token);
    if (std::equal(want.begin(), want.end(), out)) return {};
    return fmt::format("ids {}, where the greedy chain (each draft against its row's lowest-id raw maximum) is {}",
                       ids_of(out, k), ids_of(want.data(), k));
  });
}

std::string requests_are_independent(const VerifyLawContext& x) {
  const subject::VerifyBatch& b = x.batch;
  if (b.requests < 2) return {};
  std::vector<std::int64_t> reversed;
  for (std::int64_t r = b.requests - 1; r >= 0; --r) reversed.push_back(r);
  const std::vector<std::int32_t> again = x.subject.run(subject::requests_of(b, reversed));
  const race::NumericsContract contract = x.subject.contract();
  const std::int64_t n = b.drafts + 1;
  for (std::int64_t r = 0; r < b.requests; ++r) {
    const std::int32_t* one = x.tokens.data() + r * n;
    const std::int32_t* other = again.data() + (b.requests - 1 - r) * n;
    if (std::equal(one, one + n, other)) continue;
    // Ids may move with the request's place only within fp32's latitude: a
    // row's place changes its alignment, so its loads and its sums' order (an
    // acceptance with u at the ratio may then go either way). Both chains must be explained.
    const oracle::VerifyView view = b.request(r);
    const oracle::VerifyVerdict v = oracle::decide_verify(view, contract, b.constants, x.subject.rules());
    const bool one_ok = !oracle::is_failure(oracle::judge_verify(v, view, one, n).outcome);
    if (one_ok && !oracle::is_failure(oracle::judge_verify(v, view, other, n).outcome)) continue;
    return fmt::format("{}: ids {} in the batch, {} with the batch's requests in reverse order: {} not explained",
                       subject::request_name(b, r), ids_of(one, b.drafts), ids_of(other, b.drafts),
                       one_ok ? "the second" : "the first");
  }
  return {};
}

/// Vocabulary sizes: small ones, tile edges of the verify kernels
/// (kVerifyTile 1024, 256 threads), or any in [1, 3000].
rc::Gen<std::int64_t> vocab_gen() {
  static const std::vector<std::int64_t> special{1, 2, 3, 5, 64, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025, 2047, 2049, 3073};
  const int n = int(special.size());
  return rc::gen::mapcat(rc::gen::inRange(0, n + n / 3), [n](int i) {
    return i < n ? rc::gen::just(special[std::size_t(i)]) : rc::gen::inRange<std::int64_t>(1, 3000);
  });
}

rc::Gen<VerifyCase> case_gen() {
  return rc::gen::build<VerifyCase>(
      rc::gen::set(&VerifyCase::seed, rc::gen::arbitrary<std::uint64_t>()),
      rc::gen::set(&VerifyCase::shape,
                   rc::gen::build<fixtures::VerifyShape>(
                       rc::gen::set(&fixtures::VerifyShape::requests, rc::gen::inRange<std::int64_t>(1, 9)),
                       rc::gen::set(&fixtures::VerifyShape::drafts, rc::gen::inRange<std::int64_t>(0, 6)),
                       rc::gen::set(&fixtures::VerifyShape::vocab, vocab_gen()),
                       rc::gen::set(&fixtures::VerifyShape::dtype,
                                    rc::gen::map(rc::gen::inRange(0, 2), [](int i) {
                                      return i == 0 ? race::Dtype::f32 : race::Dtype::bf16;
                                    })))));
}

}  // namespace

std::string to_json(const VerifyCase& c) {
  return nlohmann::json{{"seed", std::to_string(c.seed)},
                        {"requests", c.shape.requests},
                        {"drafts", c.shape.drafts},
                        {"vocab", c.shape.vocab},
                        {"dtype", race::to_string(c.shape.dtype)},
                        {"request", c.request}}
      .dump();
}

VerifyCase verify_case_from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("a verify case is a JSON object: ") + e.what());
  }
  auto field = [&](const char* name) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(name)) throw std::invalid_argument(std::string("a verify case needs '") + name + "'");
    return j.at(name);
  };
  VerifyCase c;
  try {
    c.seed = std::stoull(field("seed").get<std::string>());
    c.shape.requests = field("requests").get<std::int64_t>();
    c.shape.drafts = field("drafts").get<std::int64_t>();
    c.shape.vocab = field("vocab").get<std::int64_t>();
    const std::string dtype = field("dtype").get<std::string>();
    if (dtype != "f32" && dtype != "bf16") throw std::invalid_argument("dtype '" + dtype + "' (f32 or bf16)");
    c.shape.dtype = dtype == "bf16" ? race::Dtype::bf16 : race::Dtype::f32;
    c.request = field("request").get<std::int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("a verify case field has the wrong type: ") + e.what());
  } catch (const std::logic_error& e) {
    throw std::invalid_argument(std::string("a bad verify case: ") + e.what());
  }
  if (c.shape.requests < 1 || c.shape.drafts < 0 || c.shape.drafts > race::kMaxDrafts || c.shape.vocab < 1 ||
      c.request < -1 || c.request >= c.shape.requests)
    throw std::invalid_argument(fmt::format("a verify case out of range: {} requests, {} drafts, V = {}, request {}",
                                            c.shape.requests, c.shape.drafts, c.shape.vocab, c.request));
  return c;
}

std::string describe(const VerifyCase& c) {
  return fmt::format("seed {}, {} request{} of {} draft{}, V = {}, {}{}", c.seed, c.shape.requests,
                     c.shape.requests == 1 ? "" : "s", c.shape.drafts, c.shape.drafts == 1 ? "" : "s", c.shape.vocab,
                     race::to_string(c.shape.dtype), c.request >= 0 ? fmt::format(", request {} alone", c.request) : "");
}

subject::VerifyBatch materialize(const VerifyCase& c, const race::NumericsContract& contract) {
  subject::VerifyBatch b = fixtures::random_verify_batch(c.seed, c.shape, contract);
  return c.request >= 0 ? subject::requests_of(b, {c.request}) : b;
}

std::string VerifySubject::name() const {
  if (external) return external->name();
  const std::string k(kernel->name);
  return defect == kernels::Defect::none ? k : k + "~" + kernels::to_string(defect);
}

race::NumericsContract VerifySubject::contract() const { return external ? external->contract() : kernel->contract(); }

race::VerifyRules VerifySubject::rules() const { return external ? external->verify_rules() : race::VerifyRules{}; }

std::string VerifySubject::replay_args(bool as_mutant) const {
  if (external) return external->replay_args();
  return (as_mutant ? "--mutants " : "--kernels ") + name();
}

std::vector<std::int32_t> VerifySubject::run(const subject::VerifyBatch& b) const {
  if (!external) return subject::run_verify_kernel(*kernel, b, defect);
  std::vector<std::int32_t> ids;
  if (const kernels::Status s = external->run_verify(b, ids); !s.ok) throw std::runtime_error(s.message);
  return ids;
}

VerifySubject find_verify_subject(const std::string& name) {
  const std::size_t tilde = name.find('~');
  const kernels::VerifyKernel* k = kernels::find_verify_kernel(name.substr(0, tilde));
  auto known = [] {
    std::vector<std::string> names;
    for (const auto& v : kernels::verify_kernels()) {
      names.emplace_back(v.name);
      for (kernels::Defect d : kernels::kVerifyOnly) names.push_back(std::string(v.name) + "~" + kernels::to_string(d));
    }
    return fmt::format("{}", fmt::join(names, ", "));
  };
  if (!k) throw std::invalid_argument("unknown verify kernel '" + name + "'; known: " + known());
  if (tilde == std::string::npos) return {k, kernels::Defect::none};
  for (kernels::Defect d : kernels::kVerifyOnly)
    if (name.substr(tilde + 1) == kernels::to_string(d)) {
      kernels::require_mutants_built();
      return {k, d};
    }
  throw std::invalid_argument("unknown verify mutant '" + name + "'; known: " + known());
}

bool is_verify_name(const std::string& name) {
  return kernels::find_verify_kernel(name.substr(0, name.find('~'))) != nullptr;
}

std::vector<VerifySubject> verify_mutants(const std::vector<std::string>& kernel_names) {
  std::vector<VerifySubject> out;
  for (const auto& k : kernels::verify_kernels()) {
    if (!kernel_names.empty() && std::find(kernel_names.begin(), kernel_names.end(), k.name) == kernel_names.end()) continue;
    for (kernels::Defect d : kernels::VerifyDefects::values)
      if (d != kernels::Defect::none) out.push_back({&k, d});
  }
  return out;
}

const std::vector<VerifyLaw>& verify_laws() {
  static const std::vector<VerifyLaw> laws = {
      {"VerifyAgreesWithOracle",
       "each request's ids are a chain fp32 may produce: the accepted drafts, then a token the oracle allows there",
       agrees_with_oracle},
      {"BonusOnlyAfterFullAcceptance", "the bonus token is emitted only when no draft is surely rejected",
       bonus_only_after_full_acceptance},
      {"RecoveredTokenHasResidual",
       "the token emitted at a rejection is id 0 or an id whose residual max(P - Q, 0) may be positive",
       recovered_token_has_residual},
      {"FilteredIdsNeverEmitted",
       "the token emitted after the accepted drafts is id 0 or an id of positive probability at its row: never a "
       "masked id, nor one the request's filters surely drop",
       filtered_ids_never_emitted},
      {"GreedyVerifyIsTheArgmaxChain",
       "a greedy request accepts while each draft is its row's lowest-id raw maximum, then emits that maximum",
       greedy_verify_is_the_argmax_chain},
      {"VerifyRequestsAreIndependent", "a request's ids do not depend on the other requests of the batch or their order, beyond fp32's latitude",
       requests_are_independent, false},
  };
  return laws;
}

std::vector<const VerifyLaw*> select_verify_laws(const std::vector<std::string>& names) {
  std::vector<const VerifyLaw*> out;
  for (const VerifyLaw& l : verify_laws())
    if (names.empty() || std::find(names.begin(), names.end(), l.name) != names.end()) out.push_back(&l);
  for (const std::string& n : names)
    if (std::none_of(verify_laws().begin(), verify_laws().end(), [&](const VerifyLaw& l) { return l.name == n; })) {
      std::vector<std::string> known;
      for (const VerifyLaw& l : verify_laws()) known.push_back(l.name);
      throw std::invalid_argument(fmt::format("unknown verify law '{}'; known: {}", n, fmt::join(known, ", ")));
    }
  return out;
}

std::string run_verify_case(const VerifyLaw& law, const VerifySubject& s, const VerifyCase& c) {
  const subject::VerifyBatch b = materialize(c, s.contract());
  const char* what = s.external ? "the sampler gave no ids: " : "the kernel did not run: ";
  try {
    const std::vector<std::int32_t> tokens = s.run(b);
    return law.check(VerifyLawContext{s, b, tokens});  // a law may run it again (VerifyRequestsAreIndependent)
  } catch (const std::exception& e) {
    return what + std::string(e.what());
  }
}

LawResult run_verify_law(const VerifyLaw& law, const VerifySubject& s, const RunSettings& settings) {
  const auto start = Clock::now();
  LawResult out;
  if (!settings.reproduce.empty()) {
    out.verdict = LawResult::Verdict::error;
    out.counterexample = "a verify law is replayed by its seed and case count, not a reproduce string";
    return out;
  }
  const auto gen = case_gen();
  std::optional<VerifyCase> last;
  std::string last_failure, breakdown;
  std::optional<Clock::time_point> first_failure;
  bool shrink_stopped = false;
  int cases = 0;
  auto testable = [&] {
    const VerifyCase c = *gen;
    if (!breakdown.empty()) return;  // the sampler broke down: the rest is not judged (verdict error below)
    if (first_failure &&
        std::chrono::duration<double>(Clock::now() - *first_failure).count() > settings.shrink_seconds) {
      shrink_stopped = true;
      return;
    }
    ++cases;
    const std::string failure = run_verify_case(law, s, c);
    if (failure.empty()) return;
    if (std::string why = s.take_breakdown(); !why.empty()) {  // not an answer about this case: no shrinking on it
      breakdown = fmt::format("{} on {}\n  case: {}\n  {}", law.name, s.name(), describe(c), why);
      return;
    }
    if (!first_failure) first_failure = Clock::now();
    last = c, last_failure = failure;
    RC_FAIL(failure);
  };
  rc::detail::TestParams params;
  params.seed = settings.seed;
  params.maxSuccess = std::max(1, settings.cases);
  params.maxSize = 100;  // Debian's RapidCheck: sizes above 100 are undefined behaviour
  QuietListener listener;
  const rc::detail::TestResult result = rc::detail::checkProperty(
      rc::detail::toProperty(testable), rc::detail::TestMetadata{law.name + "/" + s.name(), law.statement}, params,
      listener, {});
  out.cases = cases;
  rc::detail::FailureResult failure;
  if (!breakdown.empty()) {
    out.verdict = LawResult::Verdict::error;
    out.counterexample = breakdown;
  } else if (gave_up_or_error(result, out)) {
  } else if (result.match(failure) && last) {
    // The one request that fails, when the law is about requests one at a time.
    if (law.narrows && last->request < 0 && last->shape.requests > 1)
      for (std::int64_t r = 0; r < last->shape.requests; ++r) {
        VerifyCase one = *last;
        one.request = r;
        if (std::string f = run_verify_case(law, s, one); !f.empty()) {
          last = one, last_failure = f;
          break;
        }
      }
    out.verdict = LawResult::Verdict::failed;
    out.counterexample = fmt::format("{} on {}\n  case: {}\n  {}", law.name, s.name(), describe(*last), last_failure);
    if (shrink_stopped)
      out.counterexample += fmt::format("\n  (shrinking stopped after {:g} s: this case may not be the smallest)",
                                        settings.shrink_seconds);
    out.case_json = to_json(*last);
  } else if (result.match(failure)) {
    out.verdict = LawResult::Verdict::failed;
    out.counterexample = failure.description;
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

std::vector<std::string> VerifyMutantRun::killers() const {
  std::vector<std::string> out;
  for (const auto& [law, r] : results)
    if (r.verdict == LawResult::Verdict::failed) out.push_back(law->name);
  return out;
}

VerifyMutantRun run_verify_mutant(const VerifySubject& m, const std::vector<const VerifyLaw*>& laws, const RunSettings& s) {
  VerifyMutantRun run{m, {}};
  for (const VerifyLaw* law : laws) run.results.emplace_back(law, run_verify_law(*law, m, s));
  return run;
}

}  // namespace raceoracle::properties
