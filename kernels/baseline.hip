// The baseline (SPEC §2): the unfused pipeline the fused kernel replaces, as
// main's path runs it (aiter's mixed_sample_outer_exponential, then the greedy
// override launches):
//   1. race:          one workgroup of 1024 threads per row walks the vocab
//                     once: pre-scale x * (1/T), a per-thread online max with a
//                     rescaled running best and sum, then the block-level
//                     rescale, sum and division -> sampled
//   2. argmax chunks: per (greedy row, chunk of ids) max of the raw logits
//   3. argmax final:  per greedy row, best chunk -> greedy
//   4. mask:          T <= greedy_eps
//   5. where:         tokens = mask ? greedy : sampled
// Its contract (kernels/registry.cpp) declares the online max's rescales and
// the normalisation (oracle/ERROR_MODEL.md "An online max"). Launches 1 and 2
// read 16-byte vectors (for_each_vector); launches 2 and 3 skip the rows that
// launch 5 takes from the race (is_greedy, the mask's own test, so that the
// strict_greedy mutant skips as its mask selects), as SPEC §2's select runs
// for greedy rows: only a greedy row's logits are read twice. The figures:
// bench/README.md.
#include "kernels/race.h"

namespace raceoracle::kernels {
namespace {

constexpr int kThreads = 256;      // the argmax, mask and where launches
constexpr int kRaceThreads = kBaselineRaceThreads;
static_assert(kThreads % kBlockMultiple == 0 && kRaceThreads % kBlockMultiple == 0, "every warp full (race.h)");
constexpr int kChunk = 4096;  // ids per program of the top-1 select

/// A thread's online race: the running max of its scaled logits, its best
/// key and its sum of exp, both relative to that max.
struct Online {
  float m;
  Best best;
  float sum;
};

/// Folds `n` consecutive ids into `s`: when their max exceeds the running
/// one, the best key and the sum are rescaled by exp(m_old - m_new) (once
/// per load, as aiter does); each id's key is exp(xs - m) / (E + eps). A NaN
/// logit's key is NaN, never a winner, and adds nothing to the sum. A key
/// whose weight underflowed to 0 is +0 without the division (the same bits,
/// 0 / d = +0 for d > 0): CUDA's IEEE division takes its slow path for a 0
/// numerator, and a greedy row at T = 0 (x * 1e5) has one for nearly every
/// id: 1.26x to 1.40x on LLM-like rows (bench/README.md).
template <Defect D>
__device__ __forceinline__ void online_fold(Online& s, std::int64_t id0, int n, const float* x, const float* e,
                                            float inv_t, float eps) {
  float xs[16], load_max = -INFINITY;
  for (int j = 0; j < n; ++j) {
    xs[j] = keys::scaled(x[j], inv_t);
    load_max = MaxOf<D>{}(load_max, xs[j]);
  }
  if (load_max > s.m) {
    if (s.m != -INFINITY && D != Defect::no_rescale) {
      const float f = race_exp<D>(s.m - load_max);
      s.best.key *= f;
      s.sum *= f;
    }
    s.m = load_max;
  }
  const float m_safe = guard_max<D>(s.m);
  for (int j = 0; j < n; ++j) {
    const float w = race_exp<D>(xs[j] - m_safe);
    if (w == w) s.sum += w;
    const float d = e[j] + eps;
    const float key = w == 0.0f && d > 0.0f ? 0.0f : w / d;
    s.best = BetterOf<D>{}(s.best, Best{key, int(id0 + j)});
  }
}
struct Scratch {
  std::int32_t* sampled;
  std::int32_t* greedy;
  std::int32_t* mask;
  float* chunk_key;
  std::int32_t* chunk_idx;
};

std::int64_t chunk_count(std::int64_t vocab) { return (vocab + kChunk - 1) / kChunk; }

Scratch carve(void* p, std::int64_t rows, std::int64_t vocab) {
  auto* w = static_cast<std::int32_t*>(p);
  const std::int64_t chunks = rows * chunk_count(vocab);
  Scratch s;
  s.sampled = w;
  s.greedy = w + rows;
  s.mask = w + 2 * rows;
  s.chunk_key = reinterpret_cast<float*>(w + 3 * rows);
  s.chunk_idx = w + 3 * rows + chunks;
  return s;
}

template <class Logit, Defect D>
__global__ __launch_bounds__(kRaceThreads) void race_kernel(SampleArgs a, Scratch s) {
  RACEORACLE_SHARED(unsigned, smem_max, 32);
  RACEORACLE_SHARED(float, smem_sum, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  const std::int64_t row = blockIdx.x;
  const Logit* x = row_start<D>(static_cast<const Logit*>(a.logits), row, a.logit_stride);
  const float* e = row_start<D>(a.noise, row, D == Defect::noise_stride ? a.logit_stride : a.noise_stride);
  const float inv_t = inverse_temperature(a.temperatures[row]);
  Online o{-INFINITY, no_candidate(), 0.0f};
  for_each_vector<kRaceThreads>(x, e, a.vocab, [&](std::int64_t id0, int n, const float* v, const float* ev) {
    online_fold<D>(o, id0, n, v, ev, inv_t, a.eps);
  });
  // The block: every thread's best and sum rescaled to the row max, then divided by the row's sum.
  const float gmax = block_max<D>(o.m, smem_max);
  const float f = o.m == -INFINITY ? 0.0f : D == Defect::no_rescale ? 1.0f : race_exp<D>(o.m - guard_max<D>(gmax));
  o.best.key *= f;
  const float sum = block_sum<D>(o.sum * f, smem_sum);
  if (sum > 0) o.best.key /= sum;
  const Best best = block_best<D>(o.best, smem_best);
  if (threadIdx.x == 0) s.sampled[row] = best.idx;
}

template <class Logit, Defect D>
__global__ __launch_bounds__(kThreads) void argmax_chunk_kernel(SampleArgs a, Scratch s) {
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  const std::int64_t row = blockIdx.y, start = std::int64_t(blockIdx.x) * kChunk;
  if (!is_greedy<D>(a.temperatures[row], a.greedy_eps)) return;  // the whole block: where takes the race's token
  const std::int64_t end = a.vocab - start < kChunk ? a.vocab : start + kChunk;
  const Logit* x = row_start<D>(static_cast<const Logit*>(a.logits), row, a.logit_stride);
  Best best = no_candidate();
  for_each_id<kThreads>(x + start, static_cast<const float*>(nullptr), end - start,
                        [&](std::int64_t i, float v, float) { best = BetterOf<D>{}(best, Best{v, int(start + i)}); });
  best = block_best<D>(best, smem_best);
  if (threadIdx.x == 0) {
    const std::int64_t k = row * gridDim.x + blockIdx.x;
    s.chunk_key[k] = best.key;
    s.chunk_idx[k] = best.idx;
  }
}

template <Defect D>
__global__ __launch_bounds__(kThreads) void argmax_final_kernel(SampleArgs a, Scratch s, int chunks) {
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  const std::int64_t row = blockIdx.x;
  if (!is_greedy<D>(a.temperatures[row], a.greedy_eps)) return;  // no chunks were written (argmax_chunk_kernel)
  Best best = no_candidate();
  for (int c = int(threadIdx.x); c < chunks; c += kThreads) {
    const std::int64_t k = row * chunks + c;
    best = BetterOf<D>{}(best, Best{s.chunk_key[k], s.chunk_idx[k]});
  }
  best = block_best<D>(best, smem_best);
  if (threadIdx.x == 0) s.greedy[row] = best.idx;
}

template <Defect D>
__global__ void mask_kernel(SampleArgs a, Scratch s) {
  const std::int64_t row = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row < a.rows) s.mask[row] = is_greedy<D>(a.temperatures[row], a.greedy_eps) ? 1 : 0;
}

__global__ void where_kernel(SampleArgs a, Scratch s) {
  const std::int64_t row = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row < a.rows) a.tokens[row] = s.mask[row] ? s.greedy[row] : s.sampled[row];
}

template <class Logit, Defect D>
hipError_t run(const SampleArgs& a, const Scratch& s) {
  const int chunks = int(chunk_count(a.vocab));
  const unsigned row_blocks = unsigned((a.rows + kThreads - 1) / kThreads);
  // Each launch is checked on its own, so an error names the step it came from.
  hipError_t e;
  hipLaunchKernelGGL((race_kernel<Logit, D>), dim3(unsigned(a.rows)), dim3(kRaceThreads), 0, device::launch_stream(), a, s);
  if ((e = hipGetLastError()) != hipSuccess) return e;
  hipLaunchKernelGGL((argmax_chunk_kernel<Logit, D>), dim3(unsigned(chunks), unsigned(a.rows)), dim3(kThreads), 0,
                     device::launch_stream(), a, s);
  if ((e = hipGetLastError()) != hipSuccess) return e;
  hipLaunchKernelGGL((argmax_final_kernel<D>), dim3(unsigned(a.rows)), dim3(kThreads), 0, device::launch_stream(), a, s, chunks);
  if ((e = hipGetLastError()) != hipSuccess) return e;
  hipLaunchKernelGGL((mask_kernel<D>), dim3(row_blocks), dim3(kThreads), 0, device::launch_stream(), a, s);
  if ((e = hipGetLastError()) != hipSuccess) return e;
  hipLaunchKernelGGL(where_kernel, dim3(row_blocks), dim3(kThreads), 0, device::launch_stream(), a, s);
  return hipGetLastError();
}

}  // namespace

std::size_t baseline_scratch_bytes(std::int64_t rows, std::int64_t vocab) {
  return std::size_t(3 * rows + 2 * rows * chunk_count(vocab)) * 4;
}

Status sample_baseline(const SampleArgs& a, Defect d, void* scratch) {
  if (std::string e = check_args(a); !e.empty()) return Status::error(e);
  if (!scratch) return Status::error("baseline scratch pointer is null");
  if (a.rows > 65535) return Status::error("baseline supports at most 65535 rows per launch");
  const Scratch s = carve(scratch, a.rows, a.vocab);
  if (!BaselineDefects::contains(d)) return Status::error(std::string("the baseline has no mutant ") + to_string(d));
  const bool bf16 = a.dtype == Dtype::bf16;
  const hipError_t e = visit_defect(
      BaselineDefects{}, d,
      [&](auto D) {
        return bf16 ? run<std::uint16_t, decltype(D)::value>(a, s) : run<float, decltype(D)::value>(a, s);
      },
      hipErrorInvalidValue);
  if (e != hipSuccess) return Status::error(std::string("baseline: ") + hipGetErrorString(e));
  return {};
}

}  // namespace raceoracle::kernels
