#include "analysis/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace raceoracle::analysis {
namespace {

bool aligned(const void* p, std::size_t a) { return std::uintptr_t(p) % a == 0; }

/// Rows decided per block: about 64 MB of logits and noise.
constexpr std::int64_t kBlockBytes = std::int64_t(64) << 20;

/// Decides the dump a block of rows at a time, reading logits and noise where
/// they lie when the oracle can (BF16 or F32, aligned), else widening the
/// block into a buffer; `file`, when given, releases each block's pages.
VerifyReport verify_tensors(const protocol::DumpTensors& d, int max_failures, const protocol::SafetensorsFile* file,
                            std::int64_t block_rows = 0) {
  VerifyReport r;
  static_cast<protocol::DumpFacts&>(r) = d;
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
  NoiseTally noise;
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
    const oracle::BatchView view{x, dtype, n, V, V, e, shared_noise ? 0 : V, temperatures.data() + r0,
                                 d.filters.empty() ? nullptr : d.filters.data() + r0};
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
      if (o == oracle::Outcome::out_of_contract && oracle::is_parameter(v.reason) && r.bad_parameters++ < max_failures)
        r.bad_parameter_lines.push_back(fmt::format("row {} (T = {}): out of contract: {}", row, temperatures[std::size_t(row)], v.describe()));
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

VerifyReport verify_file(const std::string& path, int max_failures, std::int64_t block_rows) {
  return protocol::parse_file(path, [&](const protocol::SafetensorsFile& f) {
    return verify_tensors(protocol::check_dump(f), max_failures, &f, block_rows);
  });
}

VerifyReport verify_document(const protocol::Safetensors& s, int max_failures) {
  return verify_tensors(protocol::check_dump(s), max_failures, nullptr);
}

}  // namespace raceoracle::analysis
