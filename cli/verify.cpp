#include "cli/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/command_support.h"
#include "oracle/drawn_noise.h"
#include "protocol/contract_fields.h"
#include "protocol/safetensors.h"
#include "race/noise.h"

namespace raceoracle::cli {

using protocol::SafetensorsError;
using protocol::Tensor;

namespace {

using Lookup = std::function<protocol::TensorView(const std::string&)>;
using Has = std::function<bool(const std::string&)>;

protocol::TensorView check_logits(const protocol::TensorView& xl) {
  if (xl.shape.size() != 2 || xl.shape[0] < 1 || xl.shape[1] < 1)
    throw SafetensorsError("logits must be [rows, V] with rows, V >= 1, got " + protocol::shape_string(xl.shape));
  if (xl.dtype != "BF16" && xl.dtype != "F16" && xl.dtype != "F32")
    throw SafetensorsError("logits dtype must be BF16, F16 or F32, got " + xl.dtype);
  return xl;
}

/// `seeds` or `offsets` of drawn noise: [rows] of U64 or I64.
std::vector<std::uint64_t> check_seeds(const protocol::TensorView& t, const char* name, std::int64_t rows) {
  if (t.dtype != "U64" && t.dtype != "I64") throw SafetensorsError(fmt::format("{} dtype must be U64 or I64, got {}", name, t.dtype));
  if (t.shape.size() != 1 || t.shape[0] != rows)
    throw SafetensorsError(fmt::format("{} must be [{}], got {}", name, rows, protocol::shape_string(t.shape)));
  return t.as_u64();
}

DumpTensors check(const Lookup& require, const Has& has, const std::map<std::string, std::string>& metadata) {
  DumpTensors d;
  d.logits = check_logits(require("logits"));
  const std::int64_t rows = d.logits.shape[0], V = d.logits.shape[1];
  const bool drawn = !has("noise") && (has("seeds") || has("offsets"));
  if (drawn) {
    d.seeds = check_seeds(require("seeds"), "seeds", rows);
    d.offsets = check_seeds(require("offsets"), "offsets", rows);
    if (rows > std::int64_t(UINT32_MAX)) throw SafetensorsError("drawn noise numbers rows in 32 bits: too many rows");
  } else {
    d.noise = require("noise");
  }
  d.temperatures = require("temperatures");
  d.tokens = require("tokens");
  const protocol::TensorView &nz = d.noise, &tt = d.temperatures, &tk = d.tokens;
  if (!drawn && nz.dtype != "F32") throw SafetensorsError("noise dtype must be F32, got " + nz.dtype);
  if (!drawn && (nz.shape.size() != 2 || nz.shape[1] != V || (nz.shape[0] != rows && nz.shape[0] != 1)))
    throw SafetensorsError(fmt::format("noise must be [{}, {}] or [1, {}], got {}", rows, V, V, protocol::shape_string(nz.shape)));
  if (tt.dtype != "F32") throw SafetensorsError("temperatures dtype must be F32, got " + tt.dtype);
  if (tt.elements() != rows || tt.shape.size() != 1)
    throw SafetensorsError(fmt::format("temperatures must be [{}], got {}", rows, protocol::shape_string(tt.shape)));
  if (tk.dtype != "I32" && tk.dtype != "I64") throw SafetensorsError("tokens dtype must be I32 or I64, got " + tk.dtype);
  if (tk.elements() != rows || tk.shape.size() != 1)
    throw SafetensorsError(fmt::format("tokens must be [{}], got {}", rows, protocol::shape_string(tk.shape)));
  d.rows = rows;
  d.vocab = V;
  d.logits_dtype = d.logits.dtype;
  try {
    d.constants = protocol::parse_race_constants(metadata);
    oracle::NumericsContract defaults = protocol::default_sampler_contract();
    if (drawn) defaults.noise_ulp = race::kDrawnNoiseUlp;
    d.contract = protocol::parse_contract(metadata, defaults);
    if (!drawn) protocol::require_tensor_noise_exact(d.contract);
  } catch (const std::invalid_argument& e) {
    throw SafetensorsError(std::string("metadata ") + e.what());
  }
  return d;
}

bool aligned(const void* p, std::size_t a) { return std::uintptr_t(p) % a == 0; }

}  // namespace

void DumpTensors::draw_rows(std::int64_t r0, std::int64_t n, float* out) const {
  for (std::int64_t i = 0; i < n; ++i)
    oracle::drawn_noise_row(seeds[std::size_t(r0 + i)], offsets[std::size_t(r0 + i)], std::uint32_t(r0 + i), vocab,
                            out + i * vocab);
}

namespace {

/// Rows decided per block: about 64 MB of logits and noise.
constexpr std::int64_t kBlockBytes = std::int64_t(64) << 20;

/// Decides the dump a block of rows at a time, reading logits and noise where
/// they lie when the oracle can (BF16 or F32, aligned), else widening the
/// block into a buffer; `file`, when given, releases each block's pages.
VerifyReport verify_tensors(const DumpTensors& d, int max_failures, const protocol::SafetensorsFile* file,
                            std::int64_t block_rows = 0) {
  VerifyReport r;
  static_cast<DumpFacts&>(r) = d;
  const std::int64_t V = d.vocab;
  const std::vector<float> temperatures = d.temperatures.as_f32();
  const std::vector<std::int64_t> tokens = d.tokens.as_i64();
  const std::size_t logit_size = protocol::dtype_size(d.logits.dtype);
  const bool direct_logits = (d.logits.dtype == "BF16" && aligned(d.logits.data, 2)) ||
                             (d.logits.dtype == "F32" && aligned(d.logits.data, 4));
  const oracle::Dtype dtype = direct_logits && d.logits.dtype == "BF16" ? oracle::Dtype::bf16 : oracle::Dtype::f32;
  const bool shared_noise = !d.drawn() && d.noise.shape[0] != d.rows;  // [1, V] for every row
  const bool direct_noise = !d.drawn() && aligned(d.noise.data, 4);
  const std::int64_t block = std::clamp<std::int64_t>(
      block_rows > 0 ? block_rows : kBlockBytes / (V * std::int64_t(logit_size + 4)), 1, d.rows);
  std::vector<float> logit_buffer(direct_logits ? 0 : std::size_t(block * V));
  std::vector<float> noise_buffer(direct_noise ? 0 : std::size_t((shared_noise ? 1 : block) * V));
  analysis::NoiseTally noise;
  const float* shared = nullptr;
  if (shared_noise) {
    shared = direct_noise ? reinterpret_cast<const float*>(d.noise.data) : noise_buffer.data();
    if (!direct_noise) d.noise.widen_f32(0, V, noise_buffer.data());
    noise.add(shared, V);
  }
  for (std::int64_t r0 = 0; r0 < d.rows; r0 += block) {
    const std::int64_t n = std::min(block, d.rows - r0);
    const void* x = d.logits.data + std::size_t(r0 * V) * logit_size;
    if (!direct_logits) d.logits.widen_f32(r0 * V, n * V, logit_buffer.data()), x = logit_buffer.data();
    const float* e = shared;
    if (d.drawn()) {
      d.draw_rows(r0, n, noise_buffer.data());
      e = noise_buffer.data();
      noise.add(e, n * V);
    } else if (!shared_noise) {
      e = reinterpret_cast<const float*>(d.noise.data) + r0 * V;
      if (!direct_noise) d.noise.widen_f32(r0 * V, n * V, noise_buffer.data()), e = noise_buffer.data();
      noise.add(e, n * V);
    }
    const oracle::BatchView view{x, dtype, n, V, V, e, shared_noise ? 0 : V, temperatures.data() + r0};
    const std::vector<oracle::Verdict> verdicts = oracle::decide_batch(view, r.contract, r.constants);
    for (std::int64_t i = 0; i < n; ++i) {
      const oracle::Verdict& v = verdicts[std::size_t(i)];
      const std::int64_t row = r0 + i, t = tokens[std::size_t(row)];
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
    if (file) {
      file->release(d.logits.data + std::size_t(r0 * V) * logit_size, std::size_t(n * V) * logit_size);
      if (!shared_noise && !d.drawn()) file->release(d.noise.data + std::size_t(r0 * V) * 4, std::size_t(n * V) * 4);
    }
  }
  r.noise = noise.finish();
  return r;
}

}  // namespace

DumpTensors check_dump(const protocol::SafetensorsFile& f) {
  return check([&](const std::string& name) { return f.require(name); }, [&](const std::string& name) { return f.has(name); },
               f.metadata());
}

DumpTensors check_dump(const protocol::Safetensors& s) {
  return check([&](const std::string& name) { return s.require(name).view(); },
               [&](const std::string& name) { return s.has(name); }, s.metadata);
}

oracle::BatchView Dump::view() const {
  return {logits.data(), oracle::Dtype::f32, rows,         vocab, vocab, noise.data(),
          std::int64_t(noise.size()) == vocab ? 0 : vocab, temperatures.data()};
}

protocol::TensorView require_logits(const protocol::SafetensorsFile& f) { return check_logits(f.require("logits")); }

Dump read_dump(const std::string& path) {
  return parse_file(path, [](const protocol::SafetensorsFile& f) {
    const DumpTensors t = check_dump(f);
    Dump d;
    static_cast<DumpFacts&>(d) = t;
    d.logits = t.logits.as_f32();
    if (t.drawn()) {
      d.noise.resize(std::size_t(t.rows * t.vocab));
      t.draw_rows(0, t.rows, d.noise.data());
    } else {
      d.noise = t.noise.as_f32();
    }
    d.temperatures = t.temperatures.as_f32();
    d.tokens = t.tokens.as_i64();
    return d;
  });
}

nlohmann::json noise_json(const analysis::NoiseReport& n) {
  return {{"draws", n.draws}, {"zeros", n.zeros}, {"infinite", n.infinite}, {"nan_or_negative", n.invalid},
          {"min_positive", n.min_positive}, {"max_finite", n.max_finite}, {"expected_max", n.expected_max},
          {"chi_squared", n.chi_squared}, {"dof", n.dof}, {"p_value", n.p_value}, {"worst_bin", n.worst_bin}};
}

VerifyReport verify_file(const std::string& path, int max_failures, std::int64_t block_rows) {
  return parse_file(path, [&](const protocol::SafetensorsFile& f) {
    return verify_tensors(check_dump(f), max_failures, &f, block_rows);
  });
}

VerifyReport verify_document(const protocol::Safetensors& s, int max_failures) {
  return verify_tensors(check_dump(s), max_failures, nullptr);
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
  if (r.contract.noise_ulp > 0)
    std::printf("noise drawn from each row's seed and offset (Philox-4x32-10, docs/DRAWN_NOISE.md); the sampler's E "
                "within %.1f ulp of it\n", r.contract.noise_ulp);
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
    std::printf("verdict: %s\n", r.ok() ? "PASS" : "FAIL");  // printed first: a failed write keeps it
    write_file(o.json, j.dump(2) + "\n");
    return r.ok() ? 0 : 1;
  }
  std::printf("verdict: %s\n", r.ok() ? "PASS" : "FAIL");
  return r.ok() ? 0 : 1;
}

}  // namespace raceoracle::cli
