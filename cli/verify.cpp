#include "cli/verify.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "protocol/contract_fields.h"
#include "protocol/safetensors.h"

namespace raceoracle::cli {

using protocol::SafetensorsError;
using protocol::Tensor;

oracle::BatchView Dump::view() const {
  return {logits.data(), oracle::Dtype::f32, rows,         vocab, vocab, noise.data(),
          std::int64_t(noise.size()) == vocab ? 0 : vocab, temperatures.data()};
}

const Tensor& require_logits(const protocol::Safetensors& s) {
  const Tensor& xl = s.require("logits");
  if (xl.shape.size() != 2 || xl.shape[0] < 1 || xl.shape[1] < 1)
    throw SafetensorsError("logits must be [rows, V] with rows, V >= 1, got " + protocol::shape_string(xl.shape));
  if (xl.dtype != "BF16" && xl.dtype != "F16" && xl.dtype != "F32")
    throw SafetensorsError("logits dtype must be BF16, F16 or F32, got " + xl.dtype);
  return xl;
}

Dump parse_dump(const protocol::Safetensors& s) {
  const Tensor& xl = require_logits(s);
  const Tensor& nz = s.require("noise");
  const Tensor& tt = s.require("temperatures");
  const Tensor& tk = s.require("tokens");
  const std::int64_t rows = xl.shape[0], V = xl.shape[1];
  if (nz.dtype != "F32") throw SafetensorsError("noise dtype must be F32, got " + nz.dtype);
  if (nz.shape.size() != 2 || nz.shape[1] != V || (nz.shape[0] != rows && nz.shape[0] != 1))
    throw SafetensorsError(fmt::format("noise must be [{}, {}] or [1, {}], got {}", rows, V, V, protocol::shape_string(nz.shape)));
  if (tt.dtype != "F32") throw SafetensorsError("temperatures dtype must be F32, got " + tt.dtype);
  if (tt.elements() != rows || tt.shape.size() != 1)
    throw SafetensorsError(fmt::format("temperatures must be [{}], got {}", rows, protocol::shape_string(tt.shape)));
  if (tk.dtype != "I32" && tk.dtype != "I64") throw SafetensorsError("tokens dtype must be I32 or I64, got " + tk.dtype);
  if (tk.elements() != rows || tk.shape.size() != 1)
    throw SafetensorsError(fmt::format("tokens must be [{}], got {}", rows, protocol::shape_string(tk.shape)));
  Dump d;
  d.rows = rows;
  d.vocab = V;
  d.logits_dtype = xl.dtype;
  try {
    d.constants = protocol::parse_race_constants(s.metadata);
    d.contract = protocol::parse_contract(s.metadata);
  } catch (const std::invalid_argument& e) {
    throw SafetensorsError(std::string("metadata ") + e.what());
  }
  d.logits = xl.as_f32();
  d.noise = nz.as_f32();
  d.temperatures = tt.as_f32();
  d.tokens = tk.as_i64();
  return d;
}

Dump read_dump(const std::string& path) { return parse_file(path, parse_dump); }

nlohmann::json noise_json(const analysis::NoiseReport& n) {
  return {{"draws", n.draws}, {"zeros", n.zeros}, {"infinite", n.infinite}, {"nan_or_negative", n.invalid},
          {"min_positive", n.min_positive}, {"max_finite", n.max_finite}, {"expected_max", n.expected_max},
          {"chi_squared", n.chi_squared}, {"dof", n.dof}, {"p_value", n.p_value}, {"worst_bin", n.worst_bin}};
}

VerifyReport verify_file(const std::string& path, int max_failures) {
  return parse_file(path, [&](const protocol::Safetensors& s) { return verify_document(s, max_failures); });
}

VerifyReport verify_document(const protocol::Safetensors& s, int max_failures) {
  const Dump d = parse_dump(s);
  VerifyReport r;
  r.rows = d.rows;
  r.vocab = d.vocab;
  r.logits_dtype = d.logits_dtype;
  r.constants = d.constants;
  r.contract = d.contract;
  analysis::NoiseTally noise;
  noise.add(d.noise.data(), std::int64_t(d.noise.size()));
  r.noise = noise.finish();
  const auto verdicts = oracle::decide_batch(d.view(), r.contract, r.constants);
  for (std::int64_t row = 0; row < d.rows; ++row) {
    const auto& v = verdicts[std::size_t(row)];
    const std::int64_t t = d.tokens[std::size_t(row)];
    const oracle::Outcome o = oracle::judge(v, t, d.vocab);
    switch (o) {
      case oracle::Outcome::identical: ++r.identical; break;
      case oracle::Outcome::explained: ++r.explained; break;
      case oracle::Outcome::out_of_contract: ++r.out_of_contract; break;
      case oracle::Outcome::unexplained: ++r.unexplained; break;
      case oracle::Outcome::out_of_range: ++r.out_of_range; break;
    }
    if (oracle::is_failure(o) && int(r.failures.size()) < max_failures)
      r.failures.push_back(fmt::format("row {}: token {} is {}; oracle: {}", row, t, oracle::to_string(o), v.describe()));
  }
  return r;
}

int verify(const VerifyOptions& o) {
  VerifyReport r;
  try {
    r = verify_file(o.file, o.show);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "raceoracle verify: %s\n", e.what());
    return 2;
  }
  std::printf("verify %s: %lld rows x %lld ids, logits %s, %s-scale contract (exp %.1f ulp, div %.1f ulp), eps %g, greedy_eps %g\n",
              o.file.c_str(), static_cast<long long>(r.rows), static_cast<long long>(r.vocab), r.logits_dtype.c_str(),
              oracle::to_string(r.contract.order), r.contract.exp_ulp, r.contract.div_ulp, r.constants.eps,
              r.constants.greedy_eps);
  std::printf("%10s %10s %16s %12s %13s %14s %11s\n", "identical", "explained", "out-of-contract", "UNEXPLAINED",
              "OUT-OF-RANGE", "invalid-noise", "zero-noise");
  std::printf("%10lld %10lld %16lld %12lld %13lld %14lld %11lld\n", static_cast<long long>(r.identical),
              static_cast<long long>(r.explained), static_cast<long long>(r.out_of_contract),
              static_cast<long long>(r.unexplained), static_cast<long long>(r.out_of_range),
              static_cast<long long>(r.invalid_noise()), static_cast<long long>(r.zero_noise()));
  for (const auto& f : r.failures) std::printf("  %s\n", f.c_str());
  if (r.invalid_noise())
    std::printf("  %lld noise draws are negative, NaN or infinite: not Exp(1) draws\n",
                static_cast<long long>(r.invalid_noise()));
  std::printf("%s", r.noise.describe().c_str());
  if (!o.json.empty()) {
    nlohmann::json j{{"file", o.file}, {"rows", r.rows}, {"vocab", r.vocab}, {"identical", r.identical},
                     {"explained", r.explained}, {"out_of_contract", r.out_of_contract}, {"unexplained", r.unexplained},
                     {"out_of_range", r.out_of_range}, {"invalid_noise", r.invalid_noise()}, {"zero_noise", r.zero_noise()},
                     {"failures", r.failures}, {"noise", noise_json(r.noise)}, {"verdict", r.ok() ? "PASS" : "FAIL"}};
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  std::printf("verdict: %s\n", r.ok() ? "PASS" : "FAIL");
  return r.ok() ? 0 : 1;
}

}  // namespace raceoracle::cli
