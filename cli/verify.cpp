#include "cli/verify.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/safetensors.h"

namespace raceoracle::cli {
namespace {

float metadata_float(const Safetensors& s, const std::string& key, float fallback) {
  auto it = s.metadata.find(key);
  if (it == s.metadata.end()) return fallback;
  try {
    std::size_t used = 0;
    const float v = std::stof(it->second, &used);
    if (used != it->second.size()) throw std::invalid_argument("trailing text");
    return v;
  } catch (const std::exception&) {
    throw SafetensorsError("metadata '" + key + "' = '" + it->second + "' is not a decimal number");
  }
}

std::string shape_of(const Tensor& t) {
  std::string s = "[";
  for (std::size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

}  // namespace

VerifyReport verify_file(const std::string& path, int max_failures) {
  const Safetensors s = read_safetensors(path);
  const Tensor& xl = s.require("logits");
  const Tensor& nz = s.require("noise");
  const Tensor& tt = s.require("temperatures");
  const Tensor& tk = s.require("tokens");
  if (xl.shape.size() != 2 || xl.shape[0] < 1 || xl.shape[1] < 1)
    throw SafetensorsError("logits must be [rows, V] with rows, V >= 1, got " + shape_of(xl));
  const std::int64_t rows = xl.shape[0], V = xl.shape[1];
  if (xl.dtype != "BF16" && xl.dtype != "F16" && xl.dtype != "F32")
    throw SafetensorsError("logits dtype must be BF16, F16 or F32, got " + xl.dtype);
  if (nz.dtype != "F32") throw SafetensorsError("noise dtype must be F32, got " + nz.dtype);
  if (nz.shape.size() != 2 || nz.shape[1] != V || (nz.shape[0] != rows && nz.shape[0] != 1))
    throw SafetensorsError(fmt::format("noise must be [{}, {}] or [1, {}], got {}", rows, V, V, shape_of(nz)));
  if (tt.dtype != "F32") throw SafetensorsError("temperatures dtype must be F32, got " + tt.dtype);
  if (tt.elements() != rows || tt.shape.size() != 1)
    throw SafetensorsError(fmt::format("temperatures must be [{}], got {}", rows, shape_of(tt)));
  if (tk.dtype != "I32" && tk.dtype != "I64") throw SafetensorsError("tokens dtype must be I32 or I64, got " + tk.dtype);
  if (tk.elements() != rows || tk.shape.size() != 1)
    throw SafetensorsError(fmt::format("tokens must be [{}], got {}", rows, shape_of(tk)));

  VerifyReport r;
  r.rows = rows;
  r.vocab = V;
  r.logits_dtype = xl.dtype;
  r.constants.eps = metadata_float(s, "eps", 1e-10f);
  r.constants.greedy_eps = metadata_float(s, "greedy_eps", 1e-10f);
  const auto order = s.metadata.count("scaling_order") ? s.metadata.at("scaling_order") : std::string("post");
  if (order != "post" && order != "pre") throw SafetensorsError("metadata scaling_order must be 'post' or 'pre', got '" + order + "'");
  r.contract.order = order == "pre" ? oracle::ScalingOrder::pre : oracle::ScalingOrder::post;
  r.contract.exp_ulp = r.contract.rescale_ulp = metadata_float(s, "exp_ulp", 2.0f);
  r.contract.div_ulp = metadata_float(s, "div_ulp", 2.0f);
  if (!(r.contract.exp_ulp >= 0) || !(r.contract.div_ulp >= 0)) throw SafetensorsError("exp_ulp and div_ulp must be >= 0");
  // "stages": 2 (default) for a fused sampler's stage-2 rescale, the looser
  // bound that covers both; 1 for an unfused sampler such as a PyTorch reference.
  const auto stages = s.metadata.count("stages") ? s.metadata.at("stages") : std::string("2");
  if (stages != "1" && stages != "2") throw SafetensorsError("metadata stages must be '1' or '2', got '" + stages + "'");
  r.contract.two_stage = stages == "2";

  const std::vector<float> logits = xl.as_f32(), noise = nz.as_f32(), temps = tt.as_f32();
  const std::vector<std::int64_t> tokens = tk.as_i64();
  for (float e : noise) {
    if (!(e >= 0.0f) || std::isinf(e)) ++r.invalid_noise;
    else if (e == 0.0f) ++r.zero_noise;
  }
  oracle::BatchView b{logits.data(), oracle::Dtype::f32, rows, V, V, noise.data(), nz.shape[0] == 1 ? 0 : V, temps.data()};
  const auto verdicts = oracle::decide_batch(b, r.contract, r.constants);
  for (std::int64_t row = 0; row < rows; ++row) {
    const auto& v = verdicts[std::size_t(row)];
    const std::int64_t t = tokens[std::size_t(row)];
    const oracle::Outcome o = oracle::judge(v, t, V);
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
              static_cast<long long>(r.invalid_noise), static_cast<long long>(r.zero_noise));
  for (const auto& f : r.failures) std::printf("  %s\n", f.c_str());
  if (r.invalid_noise) std::printf("  %lld noise draws are negative, NaN or infinite: not Exp(1) draws\n", static_cast<long long>(r.invalid_noise));
  if (!o.json.empty()) {
    nlohmann::json j{{"file", o.file}, {"rows", r.rows}, {"vocab", r.vocab}, {"identical", r.identical},
                     {"explained", r.explained}, {"out_of_contract", r.out_of_contract}, {"unexplained", r.unexplained},
                     {"out_of_range", r.out_of_range}, {"invalid_noise", r.invalid_noise}, {"zero_noise", r.zero_noise},
                     {"failures", r.failures}, {"verdict", r.ok() ? "PASS" : "FAIL"}};
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  std::printf("verdict: %s\n", r.ok() ? "PASS" : "FAIL");
  return r.ok() ? 0 : 1;
}

}  // namespace raceoracle::cli
