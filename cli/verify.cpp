#include "cli/verify.h"

#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "analysis/verify.h"
#include "analysis/verify_step.h"
#include "cli/command_support.h"
#include "cli/html_report.h"
#include "cli/junit_report.h"
#include "io/table.h"
#include "protocol/contract_fields.h"

namespace raceoracle::cli {

namespace {

using R = analysis::VerifyReport;
/// The row counts, in the text table and the JSON report alike.
const std::vector<io::Column<R>> kCounts{
    {{"identical"}, [](const R& r) { return r.identical; }},
    {{"explained"}, [](const R& r) { return r.explained; }},
    {{"out_of_contract", "out-of-contract"}, [](const R& r) { return r.out_of_contract; }},
    {{"unexplained", "UNEXPLAINED"}, [](const R& r) { return r.unexplained; }},
    {{"out_of_range", "OUT-OF-RANGE"}, [](const R& r) { return r.out_of_range; }},
    {{"invalid_noise", "invalid-noise"}, [](const R& r) { return r.invalid_noise(); }},
    {{"zero_noise", "zero-noise"}, [](const R& r) { return r.zero_noise(); }},
};

/// The rows (or requests) out of contract for their parameters, printed, with
/// what to do when they fail the run; empty when there are none.
void print_bad_parameters(std::int64_t n, const std::vector<std::string>& lines, bool allowed, const char* what) {
  if (n == 0) return;
  for (const std::string& line : lines) std::printf("  %s\n", line.c_str());
  std::printf("  %lld %s out of contract for their parameters (outside SPEC's domain): judged only for ids in range, "
              "so the file checks less than it seems%s\n",
              static_cast<long long>(n), what,
              allowed ? " (allowed: --allow-out-of-contract)"
                      : "; fix the inputs, or pass --allow-out-of-contract if they are there on purpose");
}

/// What a JUnit or HTML verdict lists: the failures, then the rows out of
/// contract for their parameters when they fail the run.
std::vector<std::string> failure_lines(std::vector<std::string> failures, const std::vector<std::string>& bad, bool allowed) {
  if (!allowed) failures.insert(failures.end(), bad.begin(), bad.end());
  return failures;
}

/// The deviations a file declares, as the text report prints them.
std::vector<std::string> deviation_lines(const std::vector<std::string>& deviations) {
  std::vector<std::string> out;
  for (const std::string& d : deviations) out.push_back("deviation from SPEC §1: " + d);
  return out;
}

}  // namespace

int verify(const VerifyOptions& o) {
  const auto start = Clock::now();
  analysis::VerifyReport r;
  try {
    r = analysis::verify_file(o.file, o.show);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raceoracle verify: %s\n", e.what());
    return 2;
  }
  // What was read, in the text report and on the HTML page alike.
  const std::string heading =
      fmt::format("{}: {} rows x {} ids, logits {}{}, {}-scale contract (exp {:.1f} ulp, div {:.1f} ulp), eps {:g}, greedy_eps {:g}",
                  o.file, r.rows, r.vocab, r.logits_dtype, r.filtered ? ", filtered rows" : "", oracle::to_string(r.contract.order),
                  r.contract.exp_ulp, r.contract.div_ulp, r.constants.eps, r.constants.greedy_eps);
  std::printf("verify %s\n", heading.c_str());
  const std::vector<std::string> deviations = protocol::describe_deviations(r.contract.conventions);  // CONVENTIONS.md
  for (const std::string& d : deviation_lines(deviations)) std::printf("%s\n", d.c_str());
  if (r.contract.noise_ulp > 0)
    std::printf("noise drawn from each row's seed and offset (Philox-4x32-10, docs/DRAWN_NOISE.md); the sampler's E "
                "within %.1f ulp of it\n", r.contract.noise_ulp);
  const io::Table counts = io::make_table(kCounts, std::vector<R>{r});
  std::printf("%s", counts.text().c_str());
  r.parameters_allowed = o.allow_out_of_contract;
  for (const auto& f : r.failures) std::printf("  %s\n", f.c_str());
  print_bad_parameters(r.bad_parameters, r.bad_parameter_lines, r.parameters_allowed, "rows are");
  if (r.invalid_noise())
    std::printf("  %lld noise draws are negative, NaN or infinite: not Exp(1) draws\n",
                static_cast<long long>(r.invalid_noise()));
  std::printf("%s", r.noise.describe().c_str());
  std::printf("verdict: %s\n", r.ok() ? "PASS" : "FAIL");  // printed first: a failed write keeps it
  if (!o.json.empty()) {
    nlohmann::json j = counts.json()[0];
    j.update({{"file", o.file}, {"rows", r.rows}, {"vocab", r.vocab}, {"filtered", r.filtered}, {"failures", r.failures}, {"deviations", deviations},
              {"bad_parameters", r.bad_parameters}, {"out_of_contract_rows", r.bad_parameter_lines},
              {"out_of_contract_allowed", r.parameters_allowed}, {"noise", analysis::to_json(r.noise)},
              {"verdict", r.ok() ? "PASS" : "FAIL"}});
    write_file(o.json, j.dump(2) + "\n");
  }
  const std::vector<std::string> failed = failure_lines(r.failures, r.bad_parameter_lines, r.parameters_allowed);
  if (!o.junit.empty())
    write_file(o.junit, junit_of_file_verdict("verify", o.file, r.ok(),
                                              fmt::format("{} UNEXPLAINED, {} OUT-OF-RANGE, {} out of contract for their "
                                                          "parameters of {} rows", r.unexplained, r.out_of_range,
                                                          r.bad_parameters, r.rows),
                                              failed, since(start)));
  if (!o.html.empty()) {
    std::vector<std::string> notes = deviation_lines(deviations);
    notes.push_back(r.noise.describe());
    write_file(o.html, html_of_file_verdict("verify", heading, counts, failed, notes, r.ok()));
  }
  return r.ok() ? 0 : 1;
}

namespace {
using S = analysis::VerifyStepReport;
const std::vector<io::Column<S>> kStepCounts{
    {{"identical"}, [](const S& r) { return r.identical; }},
    {{"explained"}, [](const S& r) { return r.explained; }},
    {{"out_of_contract", "out-of-contract"}, [](const S& r) { return r.out_of_contract; }},
    {{"unexplained", "UNEXPLAINED"}, [](const S& r) { return r.unexplained; }},
    {{"out_of_range", "OUT-OF-RANGE"}, [](const S& r) { return r.out_of_range; }},
    {{"drafts_accepted", "drafts accepted"}, [](const S& r) { return r.accepted; }},
};
}  // namespace

int verify_step(const VerifyOptions& o) {
  const auto start = Clock::now();
  S r;
  try {
    r = analysis::verify_step_file(o.file, o.show);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raceoracle verify-step: %s\n", e.what());
    return 2;
  }
  // What was read, in the text report and on the HTML page alike.
  const std::string heading = fmt::format(
      "{}: {} requests x {} drafts x {} ids, logits {}, {} drafts{}, {}, eps {:g}, greedy_eps {:g}, uniforms compared in {}",
      o.file, r.requests, r.drafts, r.vocab, r.logits_dtype, r.draft_probs ? "stochastic" : "deterministic",
      r.filtered ? ", filtered requests" : "", protocol::describe_contract(r.contract), r.constants.eps,
      r.constants.greedy_eps, r.rules.uniform_f32 ? "fp32" : "float64");
  std::printf("verify-step %s\n", heading.c_str());
  const std::vector<std::string> deviations = protocol::describe_deviations(r.contract.conventions);  // CONVENTIONS.md
  for (const std::string& d : deviation_lines(deviations)) std::printf("%s\n", d.c_str());
  r.parameters_allowed = o.allow_out_of_contract;
  const io::Table counts = io::make_table(kStepCounts, std::vector<S>{r});
  std::printf("%s", counts.text().c_str());
  for (const auto& f : r.failures) std::printf("  %s\n", f.c_str());
  print_bad_parameters(r.bad_parameters, r.bad_parameter_lines, r.parameters_allowed, "requests are");
  std::printf("verdict: %s\n", r.ok() ? "PASS" : "FAIL");  // printed first: a failed write keeps it
  if (!o.json.empty()) {
    nlohmann::json j = counts.json()[0];
    j.update({{"file", o.file}, {"requests", r.requests}, {"drafts", r.drafts}, {"vocab", r.vocab}, {"filtered", r.filtered},
              {"failures", r.failures}, {"deviations", deviations}, {"bad_parameters", r.bad_parameters},
              {"out_of_contract_requests", r.bad_parameter_lines}, {"out_of_contract_allowed", r.parameters_allowed},
              {"verdict", r.ok() ? "PASS" : "FAIL"}});
    write_file(o.json, j.dump(2) + "\n");
  }
  const std::vector<std::string> failed = failure_lines(r.failures, r.bad_parameter_lines, r.parameters_allowed);
  if (!o.junit.empty())
    write_file(o.junit, junit_of_file_verdict("verify-step", o.file, r.ok(),
                                              fmt::format("{} UNEXPLAINED, {} OUT-OF-RANGE, {} out of contract for "
                                                          "their parameters of {} requests", r.unexplained,
                                                          r.out_of_range, r.bad_parameters, r.requests),
                                              failed, since(start)));
  if (!o.html.empty())
    write_file(o.html, html_of_file_verdict("verify-step", heading, counts, failed, deviation_lines(deviations), r.ok()));
  return r.ok() ? 0 : 1;
}

}  // namespace raceoracle::cli
