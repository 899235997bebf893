#include "analysis/verify_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "analysis/verify_file.h"
#include "protocol/dump.h"

namespace raceoracle::analysis {
namespace {

using verify_files::Has;
using verify_files::Lookup;
using verify_files::ids_of;
using verify_files::require_shape;

/// The values behind a request's parameter reason, as a failure line names them.
std::string parameter_values(const oracle::VerifyVerdict& verdict, const oracle::VerifyView& v, std::int64_t count,
                             std::int64_t k) {
  switch (verdict.reason) {
    case oracle::InvalidReason::bad_filter:
      return v.filter ? fmt::format(": top_k {}, top_p {}, min_p {}", v.filter->top_k, v.filter->top_p, v.filter->min_p) : "";
    case oracle::InvalidReason::bad_draft_count: return fmt::format(": its draft count {}, k = {}", count, k);
    default: return "";
  }
}

VerifyStepReport judge(const Lookup& require, const Has& has, const std::map<std::string, std::string>& metadata,
                       int max_failures) {
  VerifyStepReport r;
  verify_files::Targets x = verify_files::read_targets(require);
  const std::int64_t R = x.requests, k = x.drafts, V = x.vocab;
  r.requests = R, r.drafts = k, r.vocab = V, r.logits_dtype = x.dtype;
  const protocol::TensorView ids = require("draft_ids"), u = require("uniforms"), rec = require("recovery_noise"),
                             bon = require("bonus_noise"), temps = require("temperatures"), tok = require("tokens");
  require_shape(ids, "draft_ids", {R, k}, {"I32", "I64"});
  require_shape(u, "uniforms", {R, k}, {"F64", "F32"});
  require_shape(rec, "recovery_noise", {R, V}, {"F32"});
  require_shape(bon, "bonus_noise", {R, V}, {"F32"});
  require_shape(temps, "temperatures", {R}, {"F32"});
  require_shape(tok, "tokens", {R, k + 1}, {"I32", "I64"});
  std::vector<float> q;
  if (has("draft_probs")) {
    const protocol::TensorView qv = require("draft_probs");
    require_shape(qv, "draft_probs", {R, k, V}, {"F32"});
    q = qv.as_f32();
    r.draft_probs = true;
  }
  std::vector<std::int32_t> counts;  // each request's own k_r (SPEC §11), when given
  if (has("draft_counts")) {
    const protocol::TensorView c = require("draft_counts");
    require_shape(c, "draft_counts", {R}, {"I32", "I64"});
    counts = ids_of(c);
  }
  // Each request's filters (SPEC §9, applied to every target row of a sampling request), when given.
  const std::vector<race::RowFilter> filters = protocol::read_row_filters(require, has, R);
  r.filtered = !filters.empty();
  const verify_files::Metadata m = verify_files::read_metadata(metadata, true);
  r.contract = m.contract, r.constants = m.constants, r.rules = m.rules;
  protocol::require_declared_filters(r.contract.filters.applied, r.filtered);
  const std::vector<float>& logits = x.logits;
  const std::vector<float> R_noise = rec.as_f32(), B_noise = bon.as_f32(), T = temps.as_f32();
  const std::vector<double> uniforms = u.as_f64();
  const std::vector<std::int32_t> draft_ids = ids_of(ids), tokens = ids_of(tok);
  const std::vector<std::int64_t> written = tok.as_i64();  // what a failure names, before ids_of's marker
  const oracle::VerifyBatchView batch{logits.data(), oracle::Dtype::f32 /* widened exactly */, R, k, V, draft_ids.data(),
                                      q.empty() ? nullptr : q.data(), uniforms.data(), R_noise.data(), B_noise.data(),
                                      T.data(), counts.empty() ? nullptr : counts.data()};
  for (std::int64_t i = 0; i < R; ++i) {
    oracle::VerifyView v = batch.request(i);
    if (!filters.empty()) v.filter = &filters[std::size_t(i)];
    const oracle::VerifyVerdict verdict = oracle::decide_verify(v, r.contract, r.constants, r.rules);
    const std::int32_t* out = tokens.data() + i * (k + 1);
    oracle::VerifyJudgement j = oracle::judge_verify(verdict, v, out, k + 1);
    for (std::int64_t p = 0; p <= k; ++p)  // an id past int32 is out of range; say the value written
      if (out[p] == INT_MIN && written[std::size_t(i * (k + 1) + p)] != INT_MIN) {
        j = {oracle::Outcome::out_of_range,
             fmt::format("position {} holds {}, outside [0, {})", p, written[std::size_t(i * (k + 1) + p)], V)};
        break;
      }
    r.add(j.outcome);
    if (!oracle::is_failure(j.outcome) && j.outcome != oracle::Outcome::out_of_contract)
      for (std::int64_t p = 0; p < v.drafts && out[p + 1] != race::kVerifyPlaceholder; ++p) ++r.accepted;
    if (j.outcome == oracle::Outcome::out_of_contract && oracle::is_parameter(verdict.reason) &&
        r.bad_parameters++ < max_failures)
      r.bad_parameter_lines.push_back(fmt::format("request {} (T = {}): out of contract: {}{}", i, T[std::size_t(i)],
                                              verdict.describe(),
                                              parameter_values(verdict, v, counts.empty() ? k : counts[std::size_t(i)], k)));
    if (oracle::is_failure(j.outcome) && int(r.failures.size()) < max_failures)
      r.failures.push_back(fmt::format("request {} (T = {}): {}: {}", i, T[std::size_t(i)], oracle::to_string(j.outcome), j.why));
  }
  return r;
}

}  // namespace

VerifyStepReport verify_step_file(const std::string& path, int max_failures) {
  return protocol::parse_file(path, [&](const protocol::SafetensorsFile& f) {
    return judge([&](const std::string& n) { return f.require(n); }, [&](const std::string& n) { return f.has(n); },
                 f.metadata(), max_failures);
  });
}

VerifyStepReport verify_step_document(const protocol::Safetensors& s, int max_failures) {
  return judge([&](const std::string& n) { return s.require(n).view(); }, [&](const std::string& n) { return s.has(n); },
               s.metadata, max_failures);
}

}  // namespace raceoracle::analysis
