#include "analysis/verify_step.h"

#include <fmt/format.h>

#include <climits>
#include <functional>
#include <stdexcept>

#include "protocol/contract_fields.h"
#include "protocol/dump.h"

namespace raceoracle::analysis {
namespace {

using Lookup = std::function<protocol::TensorView(const std::string&)>;
using Has = std::function<bool(const std::string&)>;

void require_shape(const protocol::TensorView& t, const char* name, std::vector<std::int64_t> shape,
                   std::vector<const char*> dtypes) {
  if (t.shape != shape)
    throw protocol::SafetensorsError(fmt::format("{} must be {}, got {}", name, protocol::shape_string(shape),
                                                 protocol::shape_string(t.shape)));
  for (const char* d : dtypes)
    if (t.dtype == d) return;
  throw protocol::SafetensorsError(fmt::format("{} dtype must be {}, got {}", name, fmt::join(dtypes, " or "), t.dtype));
}

/// An id as the judge reads it: int32, or a value no id or placeholder has.
std::vector<std::int32_t> ids_of(const protocol::TensorView& t) {
  std::vector<std::int32_t> out;
  for (std::int64_t v : t.as_i64()) out.push_back(v >= INT_MIN + 1 && v <= INT_MAX ? std::int32_t(v) : INT_MIN);
  return out;
}

VerifyStepReport judge(const Lookup& require, const Has& has, const std::map<std::string, std::string>& metadata,
                       int max_failures) {
  VerifyStepReport r;
  const protocol::TensorView x = require("target_logits");
  if (x.shape.size() != 3 || x.shape[0] < 1 || x.shape[1] < 1 || x.shape[2] < 1)
    throw protocol::SafetensorsError("target_logits must be [requests, drafts + 1, V] with each >= 1, got " +
                                     protocol::shape_string(x.shape));
  if (x.dtype != "BF16" && x.dtype != "F16" && x.dtype != "F32")
    throw protocol::SafetensorsError("target_logits dtype must be BF16, F16 or F32, got " + x.dtype);
  const std::int64_t R = x.shape[0], k = x.shape[1] - 1, V = x.shape[2];
  if (k > race::kMaxDrafts) throw protocol::SafetensorsError(fmt::format("at most {} drafts a request, got {}", race::kMaxDrafts, k));
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
  try {
    protocol::refuse_unknown_fields(metadata, {"eps", "greedy_eps", "uniform_compare"});
    r.constants = protocol::parse_race_constants(metadata);
    r.contract = protocol::parse_contract(metadata);
    protocol::require_tensor_noise_exact(r.contract);
    const auto uc = metadata.find("uniform_compare");
    if (uc != metadata.end() && uc->second != "f64" && uc->second != "f32")
      throw std::invalid_argument("'uniform_compare' must be f64 or f32, got '" + uc->second + "'");
    r.rules.uniform_f32 = uc != metadata.end() && uc->second == "f32";
  } catch (const std::invalid_argument& e) {
    throw protocol::SafetensorsError(std::string("metadata ") + e.what());
  }
  const std::vector<float> logits = x.as_f32(), R_noise = rec.as_f32(), B_noise = bon.as_f32(), T = temps.as_f32();
  const std::vector<double> uniforms = u.as_f64();
  const std::vector<std::int32_t> draft_ids = ids_of(ids), tokens = ids_of(tok);
  const std::vector<std::int64_t> written = tok.as_i64();  // what a failure names, before ids_of's marker
  const oracle::VerifyBatchView batch{logits.data(), oracle::Dtype::f32 /* widened exactly */, R, k, V, draft_ids.data(),
                                      q.empty() ? nullptr : q.data(), uniforms.data(), R_noise.data(), B_noise.data(),
                                      T.data()};
  for (std::int64_t i = 0; i < R; ++i) {
    const oracle::VerifyView v = batch.request(i);
    const oracle::VerifyVerdict verdict = oracle::decide_verify(v, r.contract, r.constants, r.rules);
    const std::int32_t* out = tokens.data() + i * (k + 1);
    oracle::VerifyJudgement j = oracle::judge_verify(verdict, v, out);
    for (std::int64_t p = 0; p <= k; ++p)  // an id past int32 is out of range; say the value written
      if (out[p] == INT_MIN && written[std::size_t(i * (k + 1) + p)] != INT_MIN) {
        j = {oracle::Outcome::out_of_range,
             fmt::format("position {} holds {}, outside [0, {})", p, written[std::size_t(i * (k + 1) + p)], V)};
        break;
      }
    r.add(j.outcome);
    if (!oracle::is_failure(j.outcome) && j.outcome != oracle::Outcome::out_of_contract)
      for (std::int64_t p = 0; p < k && out[p + 1] != race::kVerifyPlaceholder; ++p) ++r.accepted;
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
