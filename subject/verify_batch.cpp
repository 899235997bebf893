#include "subject/verify_batch.h"

#include <fmt/format.h>

#include "kernels/device_memory.h"
#include "kernels/host_api.h"
#include "subject/batch.h"

namespace raceoracle::subject {

const void* VerifyBatch::target() const {
  return dtype == race::Dtype::bf16 ? static_cast<const void*>(target_bf16.data()) : target_f32.data();
}

std::int64_t VerifyBatch::draft_count(std::int64_t r) const {
  return draft_counts.empty() ? drafts : draft_counts[std::size_t(r)];
}

oracle::VerifyView VerifyBatch::request(std::int64_t r) const {
  oracle::VerifyView v = oracle::VerifyBatchView{target(), dtype, requests, drafts, vocab, draft_ids.data(),
                                                 draft_probs.empty() ? nullptr : draft_probs.data(), uniforms.data(),
                                                 recovery_noise.data(), bonus_noise.data(), temperatures.data(),
                                                 draft_counts.empty() ? nullptr : draft_counts.data()}
                             .request(r);
  if (!filters.empty()) v.filter = &filters[std::size_t(r)];
  return v;
}

VerifyBatch requests_of(const VerifyBatch& b, const std::vector<std::int64_t>& rs) {
  VerifyBatch out;
  out.dtype = b.dtype, out.requests = std::int64_t(rs.size()), out.drafts = b.drafts, out.vocab = b.vocab;
  out.constants = b.constants;
  const std::int64_t rows = b.drafts + 1;
  // Append request r's slice of a [requests, n] array.
  auto take = [](const auto& from, auto& to, std::int64_t r, std::int64_t n) {
    to.insert(to.end(), from.begin() + r * n, from.begin() + (r + 1) * n);
  };
  for (const std::int64_t r : rs) {
    if (r < 0 || r >= b.requests) throw std::out_of_range(fmt::format("request {} of a batch of {}", r, b.requests));
    if (b.dtype == race::Dtype::bf16) take(b.target_bf16, out.target_bf16, r, rows * b.vocab);
    else take(b.target_f32, out.target_f32, r, rows * b.vocab);
    take(b.draft_ids, out.draft_ids, r, b.drafts);
    if (!b.draft_counts.empty()) take(b.draft_counts, out.draft_counts, r, 1);
    if (!b.draft_probs.empty()) take(b.draft_probs, out.draft_probs, r, b.drafts * b.vocab);
    take(b.uniforms, out.uniforms, r, b.drafts);
    take(b.recovery_noise, out.recovery_noise, r, b.vocab);
    take(b.bonus_noise, out.bonus_noise, r, b.vocab);
    take(b.temperatures, out.temperatures, r, 1);
    if (!b.filters.empty()) take(b.filters, out.filters, r, 1);
  }
  return out;
}

std::string request_name(const VerifyBatch& b, std::int64_t r) {
  const std::int64_t k = b.draft_count(r);
  return fmt::format("{} (T = {}, {} draft{}{}{})", b.requests == 1 ? std::string("the request") : fmt::format("request {}", r),
                     b.temperatures[std::size_t(r)], k, k == 1 ? "" : "s",
                     k == b.drafts ? "" : fmt::format(" of the batch's {}", b.drafts),
                     b.filters.empty() ? "" : ", " + describe(b.filters[std::size_t(r)]));
}

std::vector<std::int32_t> run_verify_kernel(const kernels::VerifyKernel& k, const VerifyBatch& b, kernels::Defect defect) {
  using kernels::DeviceArray;
  const std::int64_t rows = b.drafts + 1;
  DeviceArray<float> target_f32;
  DeviceArray<std::uint16_t> target_bf16;
  if (b.dtype == race::Dtype::bf16) target_bf16 = DeviceArray<std::uint16_t>(b.target_bf16);
  else target_f32 = DeviceArray<float>(b.target_f32);
  DeviceArray<std::int32_t> ids(b.draft_ids.empty() ? std::vector<std::int32_t>{0} : b.draft_ids);
  DeviceArray<std::int32_t> counts;
  if (!b.draft_counts.empty()) counts = DeviceArray<std::int32_t>(b.draft_counts);
  DeviceArray<float> probs;
  if (!b.draft_probs.empty()) probs = DeviceArray<float>(b.draft_probs);
  DeviceArray<double> uniforms(b.uniforms.empty() ? std::vector<double>{0.0} : b.uniforms);
  DeviceArray<float> recovery(b.recovery_noise), bonus(b.bonus_noise), temperatures(b.temperatures);
  DeviceArray<race::RowFilter> filters;
  if (!b.filters.empty()) filters = DeviceArray<race::RowFilter>(b.filters);
  DeviceArray<std::int32_t> tokens(std::size_t(b.requests * rows));
  DeviceArray<std::uint8_t> scratch(k.scratch_bytes(b.requests, b.drafts, b.vocab));
  kernels::VerifyArgs a;
  a.target = b.dtype == race::Dtype::bf16 ? static_cast<const void*>(target_bf16.get()) : target_f32.get();
  a.dtype = b.dtype;
  a.requests = b.requests, a.drafts = b.drafts, a.vocab = b.vocab, a.target_stride = b.vocab;
  a.draft_ids = ids.get();
  a.draft_counts = b.draft_counts.empty() ? nullptr : counts.get();
  a.draft_probs = b.draft_probs.empty() ? nullptr : probs.get();
  a.uniforms = uniforms.get();
  a.recovery_noise = recovery.get(), a.bonus_noise = bonus.get(), a.temperatures = temperatures.get();
  a.filters = b.filters.empty() ? nullptr : filters.get();
  a.tokens = tokens.get();
  a.eps = b.constants.eps, a.greedy_eps = b.constants.greedy_eps;
  const kernels::Status s = k.launch(a, defect, scratch.get());
  if (!s.ok) throw std::runtime_error(s.message);
  kernels::device_synchronize();
  return tokens.download();
}

VerifyTally judge_verify_batch(const VerifyBatch& b, const std::vector<std::int32_t>& tokens,
                               const race::NumericsContract& contract, const race::VerifyRules& rules) {
  VerifyTally t;
  for (std::int64_t r = 0; r < b.requests; ++r) {
    const oracle::VerifyView view = b.request(r);
    const oracle::VerifyVerdict v = oracle::decide_verify(view, contract, b.constants, rules);
    const oracle::VerifyJudgement j = oracle::judge_verify(v, view, tokens.data() + r * (b.drafts + 1), b.drafts + 1);
    t.add(j.outcome);
    if (oracle::is_failure(j.outcome) && t.first_failure.empty())
      t.first_failure = fmt::format("{}: {}", request_name(b, r), j.why);
  }
  return t;
}

}  // namespace raceoracle::subject
