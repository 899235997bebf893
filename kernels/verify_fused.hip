// The speculative-decoding verify step fused (SPEC §11), vocab-tiled like the
// fused sampler, two launches:
//   1. one program per (target row, tile of kVerifyTile ids): the tile's max
//      m_t of fl(x / t) and its sum s_t = sum expf(fl(x / t) - m_t); for a
//      greedy request, the tile's raw max and its lowest id;
//   2. one workgroup per request: per draft position, the row's max M and sum
//      S = sum_t s_t expf(m_t - M) from the partials, then the draft's
//      P = expf(fl(x_d / t) - M) / S against u, until a rejection; then the
//      residual race max(P - Q, 0) / (R + eps), or the bonus race P / (B + eps),
//      over the row, P recomputed from the logits.
// It never writes the probabilities: (k + 2) V logits, V draft probabilities
// and V noise read, against the baseline's (k + 1) V logits and (k + 1) V
// probabilities written and read again (kernels/verify.hip). A batch with
// filters first finds each filtered row's cuts (kernels/verify_filters.h),
// one workgroup a row; the tiles' sums and P are then over the kept ids.
#include "kernels/verify_filters.h"

namespace raceoracle::kernels {
namespace {

struct FusedVerifyLaunch {
  VerifyArgs a;
  std::int64_t tiles;
  filtered::Kept* cuts;    // [requests, drafts + 1]: each row's cuts (with filters)
  float* part_m;           // [requests, drafts + 1, tiles]: the tile's max of fl(x / t) (greedy: of x)
  float* part_s;           // the tile's sum expf(fl(x / t) - m_t)
  std::int32_t* part_idx;  // greedy: the tile's lowest id of its max
};

template <class Logit>
__device__ __forceinline__ const Logit* target_row(const VerifyArgs& a, std::int64_t row) {
  return static_cast<const Logit*>(a.target) + row * a.target_stride;
}

template <class Logit, int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void verify_tile_kernel(FusedVerifyLaunch l) {
  RACEORACLE_SHARED(unsigned, smem_max, 32);
  RACEORACLE_SHARED(float, smem_sum, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  device::wait_for_prior_grid();
  device::allow_next_grid();
  const VerifyArgs& a = l.a;
  const std::int64_t row = blockIdx.y, tile = blockIdx.x, start = tile * kVerifyTile;
  const std::int64_t count = a.vocab - start < kVerifyTile ? a.vocab - start : kVerifyTile;
  const Logit* x = target_row<Logit>(a, row) + start;
  const std::int64_t slot = row * l.tiles + tile;
  if (row % (a.drafts + 1) > verify::draft_count<D>(a, row / (a.drafts + 1))) return;  // past the request's bonus row
  const float T = a.temperatures[row / (a.drafts + 1)];
  if (is_greedy<D>(T, a.greedy_eps)) {
    Best best = no_candidate();
    for_each_id<THREADS>(x, static_cast<const float*>(nullptr), count,
                         [&](std::int64_t i, float v, float) { best = BetterOf<D>{}(best, Best{v, int(start + i)}); });
    best = block_best<D>(best, smem_best);
    if (threadIdx.x == 0) l.part_m[slot] = best.key, l.part_idx[slot] = best.idx;
    return;
  }
  const float t = race::clamp_temperature(T);
  float m = -INFINITY;
  for_each_id<THREADS>(x, static_cast<const float*>(nullptr), count, [&](std::int64_t, float v, float) { m = MaxOf<D>{}(m, v / t); });
  m = block_max<D>(m, smem_max);
  const float m_safe = m == -INFINITY ? 0.0f : m;
  float s = 0.0f;
  if (verify::applies_filters<D>(a)) {  // the kept ids' sum (the tile's max is kept, or nothing of it but ties)
    const filtered::Kept k = l.cuts[row];
    for_each_id<THREADS>(x, static_cast<const float*>(nullptr), count,
                         [&](std::int64_t i, float v, float) { s += verify::kept_weight<Logit>(k, start + i, v, t, m_safe); });
  } else {
    for_each_id<THREADS>(x, static_cast<const float*>(nullptr), count, [&](std::int64_t, float v, float) { s += expf(v / t - m_safe); });
  }
  s = block_sum<D>(s, smem_sum);
  if (threadIdx.x == 0) l.part_m[slot] = m, l.part_s[slot] = s;
}

template <class Logit, int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void verify_fused_chain_kernel(FusedVerifyLaunch l) {
  RACEORACLE_SHARED(unsigned, smem_max, 32);
  RACEORACLE_SHARED(float, smem_sum, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  RACEORACLE_SHARED(OrderedBest, smem_bonus, 32);
  device::wait_for_prior_grid();
  device::allow_next_grid();
  const VerifyArgs& a = l.a;
  const std::int64_t req = blockIdx.x, k = verify::draft_count<D>(a, blockIdx.x), n = a.vocab, rows = a.drafts + 1,
                     tiles = l.tiles;
  const std::int32_t* d = a.draft_ids + req * a.drafts;
  const float T = a.temperatures[req];
  const bool greedy = is_greedy<D>(T, a.greedy_eps);
  const float t = race::clamp_temperature(T);
  // Row j's greedy id: the best tile partial (ids grow with tiles: the lowest id of the max).
  auto greedy_id = [&](std::int64_t j) {
    const std::int64_t base = (req * rows + j) * tiles;
    Best best = no_candidate();
    for (std::int64_t u = threadIdx.x; u < tiles; u += THREADS)
      best = BetterOf<D>{}(best, Best{l.part_m[base + u], l.part_idx[base + u]});
    const int g = block_best<D>(best, smem_best).idx;
    __syncthreads();  // smem_best serves the next reduction
    return g;
  };
  // Row j's max M (guarded: an all -inf row gives 0) and sum S, every thread alike.
  auto row_stats = [&](std::int64_t j, float& M, float& S) {
    const std::int64_t base = (req * rows + j) * tiles;
    float m = -INFINITY;
    for (std::int64_t u = threadIdx.x; u < tiles; u += THREADS) m = MaxOf<D>{}(m, l.part_m[base + u]);
    m = block_max<D>(m, smem_max);
    M = m == -INFINITY ? 0.0f : m;
    float s = 0.0f;
    for (std::int64_t u = threadIdx.x; u < tiles; u += THREADS) s += l.part_s[base + u] * expf(l.part_m[base + u] - M);
    S = block_sum<D>(s, smem_sum);
    __syncthreads();  // smem_max and smem_sum serve the next position's reductions
  };
  // Id i's P on row j from its logit v: 0 where the row's cuts drop it (M, S: the row's).
  const bool filters = verify::applies_filters<D>(a);
  auto cuts_of = [&](std::int64_t j) { return filters ? l.cuts[req * rows + j] : filtered::Kept{}; };
  auto prob = [&](const filtered::Kept& c, std::int64_t i, float v, float M, float S) {
    if (!(S > 0.0f)) return 0.0f;
    return (filters ? verify::kept_weight<Logit>(c, i, v, t, M) : expf(v / t - M)) / S;
  };
  // The chain, every thread walking it alike (the same values, the same branches).
  std::int64_t acc = k;
  for (std::int64_t j = 0; j < k; ++j) {
    const std::int32_t dj = d[j];
    if (!verify::in_row(dj, n)) {
      acc = j;
      break;
    }
    if (greedy) {
      if (dj != greedy_id(j)) {
        acc = j;
        break;
      }
      continue;
    }
    float M, S;
    row_stats(j, M, S);
    const float* q = verify::draft_row<D>(a, req, j);
    const float p = prob(cuts_of(j), dj, load_logit(target_row<Logit>(a, req * rows + j) + dj), M, S);
    if (!verify::accepts<D>(p, q ? q[dj] : 1.0f, a.uniforms[req * a.drafts + j])) {
      acc = j;
      break;
    }
  }
  int token, bonus = race::kVerifyPlaceholder;
  if (greedy) {
    token = greedy_id(acc);
  } else {
    float M, S;
    row_stats(acc, M, S);
    const Logit* x = target_row<Logit>(a, req * rows + acc);
    const filtered::Kept c = cuts_of(acc);
    if (acc == k) {
      token = verify::race_row<THREADS, D>(n, a.bonus_noise + req * n, a.eps,
                                           [&](std::int64_t i) { return prob(c, i, load_logit(x + i), M, S); }, smem_best);
    } else {
      const float* q = verify::draft_row<D>(a, req, acc);
      const std::int32_t dj = d[acc];
      token = verify::race_row<THREADS, D>(n, a.recovery_noise + req * n, a.eps, [&](std::int64_t i) {
        return verify::residual<D>(prob(c, i, load_logit(x + i), M, S), q, i, dj);
      }, smem_best);
      if constexpr (D == Defect::bonus_after_reject) {
        float Mk, Sk;
        row_stats(k, Mk, Sk);
        const Logit* xk = target_row<Logit>(a, req * rows + k);
        const filtered::Kept ck = cuts_of(k);
        bonus = verify::race_row<THREADS, D>(n, a.bonus_noise + req * n, a.eps,
                                             [&](std::int64_t i) { return prob(ck, i, load_logit(xk + i), Mk, Sk); }, smem_bonus);
      }
    }
  }
  if (threadIdx.x == 0) verify::write_chain(a.tokens + req * rows, d, rows, acc, token, bonus);
}

template <class Logit, Defect D>
hipError_t launch_fused_verify(const FusedVerifyLaunch& l) {
  const unsigned rows = unsigned(l.a.requests * (l.a.drafts + 1));
  hipError_t e = hipSuccess;
  if (verify::applies_filters<D>(l.a))
    e = device::launch_chained(verify::select_kernel<Logit, kVerifyThreads, D>, dim3(rows), dim3(kVerifyThreads), l.a, l.cuts);
  if (e != hipSuccess) return e;
  e = device::launch_chained(verify_tile_kernel<Logit, kVerifyThreads, D>, dim3(unsigned(l.tiles), rows),
                             dim3(kVerifyThreads), l);
  if (e != hipSuccess) return e;
  return device::launch_chained(verify_fused_chain_kernel<Logit, kVerifyRequestThreads, D>, dim3(unsigned(l.a.requests)),
                                dim3(kVerifyRequestThreads), l);
}

}  // namespace

std::size_t verify_fused_scratch_bytes(std::int64_t requests, std::int64_t drafts, std::int64_t vocab) {
  const std::size_t rows = std::size_t(requests) * std::size_t(drafts + 1);
  const std::size_t slots = rows * std::size_t((vocab + kVerifyTile - 1) / kVerifyTile);
  return rows * sizeof(filtered::Kept) + slots * (2 * sizeof(float) + sizeof(std::int32_t));
}

Status verify_fused(const VerifyArgs& a, Defect d, void* scratch) {
  if (std::string e = check_verify_args(a); !e.empty()) return Status::error(e);
  if (!VerifyDefects::contains(d)) return Status::error(std::string("the verify kernel is not built with defect ") + to_string(d));
  const std::int64_t tiles = (a.vocab + kVerifyTile - 1) / kVerifyTile;
  const std::size_t rows = std::size_t(a.requests) * std::size_t(a.drafts + 1), slots = rows * std::size_t(tiles);
  auto* cuts = static_cast<filtered::Kept*>(scratch);  // first: the widest alignment
  float* m = reinterpret_cast<float*>(cuts + rows);
  const FusedVerifyLaunch l{a, tiles, cuts, m, m + slots, reinterpret_cast<std::int32_t*>(m + 2 * slots)};
  const hipError_t err = visit_defect(VerifyDefects{}, d, [&](auto D) {
    return a.dtype == Dtype::f32 ? launch_fused_verify<float, D()>(l) : launch_fused_verify<std::uint16_t, D()>(l);
  }, hipErrorInvalidValue);
  if (err != hipSuccess) return Status::error(std::string("fused verify launch: ") + hipGetErrorString(err));
  return {};
}

}  // namespace raceoracle::kernels
