// The speculative-decoding verify step (SPEC §11) as engines write it
// (vLLM's rejection sampler): two launches,
//   1. one workgroup per target row: the probabilities softmax(x / t) in
//      fp32, materialised in `scratch` (the logits divided by t, the row's
//      max, expf, the block's sum, the division), or, for a greedy request,
//      the row's greedy id;
//   2. one workgroup per request: its thread 0 walks the acceptance chain
//      (accept while Q_d > 0 and P_d / Q_d >= u in float64; greedy: while the
//      draft is the greedy id), then the block races the residual
//      max(P - Q, 0) / (R + eps) at the first rejection, or P / (B + eps) on
//      the bonus row when every draft is accepted, ties to the lowest id.
// Without draft probabilities Q is the point mass at the draft. A batch
// with filters first finds each filtered row's cuts (kernels/verify_filters.h);
// the softmax is then over the kept ids.
#include "kernels/verify_filters.h"

namespace raceoracle::kernels {
namespace {

struct VerifyLaunch {
  VerifyArgs a;
  filtered::Kept* cuts;  // [requests, drafts + 1]: each row's cuts (with filters)
  float* probs;          // [requests, drafts + 1, vocab]
  std::int32_t* greedy;  // [requests, drafts + 1]: each row's greedy id (greedy requests)
};

template <class Logit, int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void verify_softmax_kernel(VerifyLaunch l) {
  RACEORACLE_SHARED(unsigned, smem_max, 32);
  RACEORACLE_SHARED(float, smem_sum, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  device::wait_for_prior_grid();
  device::allow_next_grid();
  const VerifyArgs& a = l.a;
  const std::int64_t row = blockIdx.x, n = a.vocab;
  if (row % (a.drafts + 1) > verify::draft_count<D>(a, row / (a.drafts + 1))) return;  // past the request's bonus row
  const float T = a.temperatures[row / (a.drafts + 1)];
  const Logit* x = static_cast<const Logit*>(a.target) + row * a.target_stride;
  if (is_greedy<D>(T, a.greedy_eps)) {
    const int g = filtered::row_argmax<THREADS, D>(x, n, smem_best);
    if (threadIdx.x == 0) l.greedy[row] = g;
    return;
  }
  const float t = race::clamp_temperature(T);
  float m = -INFINITY;
  for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n, [&](std::int64_t, float v, float) { m = MaxOf<D>{}(m, v / t); });
  m = block_max<D>(m, smem_max);
  const float m_safe = m == -INFINITY ? 0.0f : m;
  float s = 0.0f;
  float* p = l.probs + row * n;
  if (verify::applies_filters<D>(a)) {  // the softmax over the kept ids
    const filtered::Kept k = l.cuts[row];
    for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n,
                         [&](std::int64_t i, float v, float) { s += verify::kept_weight<Logit>(k, i, v, t, m_safe); });
    s = block_sum<D>(s, smem_sum);
    for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n, [&](std::int64_t i, float v, float) {
      p[i] = s > 0.0f ? verify::kept_weight<Logit>(k, i, v, t, m_safe) / s : 0.0f;
    });
    return;
  }
  for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n, [&](std::int64_t, float v, float) { s += expf(v / t - m_safe); });
  s = block_sum<D>(s, smem_sum);
  for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n,
                       [&](std::int64_t i, float v, float) { p[i] = s > 0.0f ? expf(v / t - m_safe) / s : 0.0f; });
}

template <int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void verify_chain_kernel(VerifyLaunch l) {
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  RACEORACLE_SHARED(OrderedBest, smem_bonus, 32);
  RACEORACLE_SHARED(int, smem_accepted, 1);
  device::wait_for_prior_grid();
  device::allow_next_grid();
  const VerifyArgs& a = l.a;
  const std::int64_t req = blockIdx.x, k = verify::draft_count<D>(a, blockIdx.x), n = a.vocab, rows = a.drafts + 1;
  const std::int32_t* d = a.draft_ids + req * a.drafts;
  std::int32_t* out = a.tokens + req * rows;
  const bool greedy = is_greedy<D>(a.temperatures[req], a.greedy_eps);
  if (threadIdx.x == 0) {
    std::int64_t j = 0;
    for (; j < k; ++j) {
      const std::int32_t dj = d[j];
      if (!verify::in_row(dj, n)) break;
      if (greedy) {
        if (dj != l.greedy[req * rows + j]) break;
        continue;
      }
      const float* q = verify::draft_row<D>(a, req, j);
      if (!verify::accepts<D>(l.probs[(req * rows + j) * n + dj], q ? q[dj] : 1.0f, a.uniforms[req * a.drafts + j])) break;
    }
    smem_accepted[0] = int(j);
  }
  __syncthreads();
  const std::int64_t acc = smem_accepted[0];
  int token;
  if (greedy) {
    token = l.greedy[req * rows + acc];
  } else {
    const float* p = l.probs + (req * rows + acc) * n;
    if (acc == k) {
      token = verify::race_row<THREADS, D>(n, a.bonus_noise + req * n, a.eps, [&](std::int64_t i) { return p[i]; }, smem_best);
    } else {
      const float* q = verify::draft_row<D>(a, req, acc);
      const std::int32_t dj = d[acc];
      token = verify::race_row<THREADS, D>(n, a.recovery_noise + req * n, a.eps,
                                    [&](std::int64_t i) { return verify::residual<D>(p[i], q, i, dj); }, smem_best);
    }
  }
  int bonus = race::kVerifyPlaceholder;
  if constexpr (D == Defect::bonus_after_reject) {
    if (!greedy && acc < k) {
      const float* pk = l.probs + (req * rows + k) * n;
      bonus = verify::race_row<THREADS, D>(n, a.bonus_noise + req * n, a.eps, [&](std::int64_t i) { return pk[i]; }, smem_bonus);
    }
  }
  if (threadIdx.x == 0) verify::write_chain(out, d, rows, acc, token, bonus);
}

template <class Logit, Defect D>
hipError_t launch_verify(const VerifyLaunch& l) {
  const unsigned rows = unsigned(l.a.requests * (l.a.drafts + 1));
  hipError_t e = hipSuccess;
  if (verify::applies_filters<D>(l.a))
    e = device::launch_chained(verify::select_kernel<Logit, kVerifyThreads, D>, dim3(rows), dim3(kVerifyThreads), l.a, l.cuts);
  if (e != hipSuccess) return e;
  e = device::launch_chained(verify_softmax_kernel<Logit, kVerifyThreads, D>, dim3(rows), dim3(kVerifyThreads), l);
  if (e != hipSuccess) return e;
  return device::launch_chained(verify_chain_kernel<kVerifyRequestThreads, D>, dim3(unsigned(l.a.requests)),
                                dim3(kVerifyRequestThreads), l);
}

}  // namespace

std::size_t verify_scratch_bytes(std::int64_t requests, std::int64_t drafts, std::int64_t vocab) {
  const std::size_t rows = std::size_t(requests) * std::size_t(drafts + 1);
  return rows * sizeof(filtered::Kept) + rows * std::size_t(vocab) * sizeof(float) + rows * sizeof(std::int32_t);
}

Status verify_probs(const VerifyArgs& a, Defect d, void* scratch) {
  if (std::string e = check_verify_args(a); !e.empty()) return Status::error(e);
  const std::size_t rows = std::size_t(a.requests) * std::size_t(a.drafts + 1);
  auto* cuts = static_cast<filtered::Kept*>(scratch);  // first: the widest alignment
  float* probs = reinterpret_cast<float*>(cuts + rows);
  const VerifyLaunch l{a, cuts, probs, reinterpret_cast<std::int32_t*>(probs + rows * std::size_t(a.vocab))};
  if (!VerifyDefects::contains(d)) return Status::error(std::string("the verify kernel is not built with defect ") + to_string(d));
  const hipError_t err = visit_defect(VerifyDefects{}, d, [&](auto D) {
    return a.dtype == Dtype::f32 ? launch_verify<float, D()>(l) : launch_verify<std::uint16_t, D()>(l);
  }, hipErrorInvalidValue);
  if (err != hipSuccess) return Status::error(std::string("verify launch: ") + hipGetErrorString(err));
  return {};
}

}  // namespace raceoracle::kernels
