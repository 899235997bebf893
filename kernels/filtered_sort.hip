// The filtered race as engines write it (SPEC §9), the baseline of
// filtered_select.hip: one launch, one workgroup per row, which
//   1. sorts the row by logit, descending, ties by lowest id: a stable LSD
//      radix sort of (rank key, id) pairs, 4 bits a pass (4 passes for bf16,
//      8 for fp32), each thread owning a contiguous chunk of positions, in
//      `scratch` (two buffers of keys and ids, ping-pong);
//   2. takes top-k's count: the positions whose key is at least the k-th's
//      (every tied id kept);
//   3. sums the weights of the top-k set (S) and scans them in sorted order
//      (a cumulative sum: each chunk in order, the chunks' totals scanned);
//   4. masks: a position is kept within top-k's count, while the mass before
//      it is < fl(p S), and while its weight is >= min_p;
//   5. races over the kept positions.
// A row without filters (or without a finite max) skips 1-4, as engines do.
#include "kernels/filtered_row.h"

namespace raceoracle::kernels {
namespace {
using namespace filtered;

constexpr int kDigitBits = 4;
constexpr int kDigits = 1 << kDigitBits;

struct SortArgs {
  SampleArgs a;
  unsigned* scratch;  // [4][rows][vocab]: keys, ids, then the second buffer's
};

/// One stable radix pass over positions [0, n) of (keys, ids) into
/// (keys_out, ids_out) by the digit at `shift`. cnt: kDigits * THREADS
/// counters, cnt[d * THREADS + t] thread t's count of digit d, then where its
/// next id of that digit goes.
template <int THREADS>
__device__ void radix_pass(const unsigned* keys, const unsigned* ids, unsigned* keys_out, unsigned* ids_out,
                           std::int64_t n, int shift, device::SharedPtr<unsigned> cnt,
                           device::SharedPtr<unsigned> smem) {
  const int t = int(threadIdx.x);
  const std::int64_t chunk = (n + THREADS - 1) / THREADS;
  const std::int64_t lo = t * chunk < n ? t * chunk : n, hi = lo + chunk < n ? lo + chunk : n;
  auto digit = [&](unsigned k) { return int((k >> shift) & (kDigits - 1)); };
  for (int d = 0; d < kDigits; ++d) cnt[d * THREADS + t] = 0;
  for (std::int64_t j = lo; j < hi; ++j) ++cnt[digit(keys[j]) * THREADS + t];
  __syncthreads();
  // Thread t owns counters [kDigits t, kDigits (t + 1)) of the digit-major
  // order: their exclusive prefix over the whole block is where each goes.
  unsigned own = 0;
  for (int q = 0; q < kDigits; ++q) own += cnt[kDigits * t + q];
  unsigned total;
  unsigned at = block_exclusive_scan(own, smem, total);
  for (int q = 0; q < kDigits; ++q) {
    const unsigned c = cnt[kDigits * t + q];
    cnt[kDigits * t + q] = at;
    at += c;
  }
  __syncthreads();
  for (std::int64_t j = lo; j < hi; ++j) {
    const unsigned pos = cnt[digit(keys[j]) * THREADS + t]++;
    keys_out[pos] = keys[j];
    ids_out[pos] = ids[j];
  }
  __syncthreads();  // the block's global writes are visible to the block
}

template <class Logit, int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void filtered_sort_kernel(SortArgs s) {
  RACEORACLE_SHARED(unsigned, smem_u, 32);
  RACEORACLE_SHARED(float, smem_f, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  RACEORACLE_SHARED(unsigned, cnt, kDigits * THREADS);
  device::wait_for_prior_grid();
  device::allow_next_grid();
  const SampleArgs& a = s.a;
  const std::int64_t row = blockIdx.x, n = a.vocab;
  const Logit* x = row_start<D>(static_cast<const Logit*>(a.logits), row, a.logit_stride);
  const float* e = row_start<D>(a.noise, row, a.noise_stride);
  const float T = a.temperatures[row];
  if (is_greedy<D>(T, a.greedy_eps)) {
    const int token = row_argmax<THREADS, D>(x, n, smem_best);
    if (threadIdx.x == 0) a.tokens[row] = token;
    return;
  }
  const float m = row_max<THREADS, D>(x, n, smem_u);
  __syncthreads();
  const float m_safe = guard_max<D>(m), inv_t = inverse_temperature(T);
  const RowFilters f = read_filters<D>(a, row);
  Best best = no_candidate();
  if (!f.any() || !(m > -INFINITY && m < INFINITY)) {
    for_each_id<THREADS>(x, e, n, [&](std::int64_t i, float xi, float ei) {
      best = BetterOf<D>{}(best, Best{race_key<ScalingOrder::post, D>(xi, m_safe, inv_t, ei, a.eps), int(i)});
    });
  } else {
    // 1. Sort: keys descending by logit (NaN last), ids ascending within a key.
    const std::size_t plane = std::size_t(a.rows) * std::size_t(n);
    unsigned* keys = s.scratch + std::size_t(row) * std::size_t(n);
    unsigned* ids = keys + plane;
    unsigned* keys2 = ids + plane;
    unsigned* ids2 = keys2 + plane;
    constexpr unsigned kMask = kKeyBits<Logit> == 32 ? ~0u : (1u << kKeyBits<Logit>) - 1u;
    for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n, [&](std::int64_t i, float v, float) {
      keys[i] = ~rank_key<Logit>(v) & kMask;
      ids[i] = unsigned(i);
    });
    __syncthreads();
    static_assert(kKeyBits<Logit> / kDigitBits % 2 == 0, "an even number of passes leaves the result in the first buffer");
    for (int shift = 0; shift < kKeyBits<Logit>; shift += 2 * kDigitBits) {
      radix_pass<THREADS>(keys, ids, keys2, ids2, n, shift, cnt, smem_u);
      radix_pass<THREADS>(keys2, ids2, keys, ids, n, shift + kDigitBits, cnt, smem_u);
    }
    // 2. top-k's count: the positions up to the last one tied with the k-th.
    std::int64_t kept_k = n;
    if (f.top_k_on) {
      const unsigned kth = keys[f.top_k - 1];
      unsigned c = 0;
      for (std::int64_t j = threadIdx.x; j < n; j += THREADS) c += keys[j] <= kth ? 1u : 0u;
      kept_k = block_sum<D>(c, smem_u);
      __syncthreads();
    }
    // 3. The top-k set's mass, and each chunk's mass for the scan.
    const int t = int(threadIdx.x);
    const std::int64_t chunk = (n + THREADS - 1) / THREADS;
    const std::int64_t lo = t * chunk < n ? t * chunk : n, hi = lo + chunk < n ? lo + chunk : n;
    auto w = [&](std::int64_t j) { return weight<D>(load_logit(x + ids[j]), m_safe, inv_t); };
    float own = 0.0f, in_k = 0.0f;
    for (std::int64_t j = lo; j < hi; ++j) {
      const float wj = w(j);
      own += wj;
      if (j < kept_k) in_k += wj;
    }
    const float S = block_sum<D>(in_k, smem_f);
    __syncthreads();
    const float thr = f.top_p * S;
    float total;
    float ahead = block_exclusive_scan(own, smem_f, total);  // the mass before position lo
    // 4-5. Mask and race, position by position.
    for (std::int64_t j = lo; j < hi; ++j) {
      const float wj = w(j);
      const bool kept = j < kept_k && (!f.top_p_on || ahead < thr) && (!f.min_p_on || wj >= f.min_p);
      ahead += wj;
      if (kept) {
        const std::int64_t i = ids[j];
        best = BetterOf<D>{}(best, Best{race_key<ScalingOrder::post, D>(load_logit(x + i), m_safe, inv_t, e[i], a.eps), int(i)});
      }
    }
  }
  best = block_best<D>(best, smem_best);
  if (threadIdx.x == 0) a.tokens[row] = best.idx;
}

template <class Logit>
hipError_t launch_sort(const SortArgs& s) {
  return device::launch_chained(filtered_sort_kernel<Logit, kFilteredThreads, Defect::none>, dim3(unsigned(s.a.rows)),
                                dim3(kFilteredThreads), s);
}

}  // namespace

std::size_t filtered_sort_scratch_bytes(std::int64_t rows, std::int64_t vocab) {
  return 4 * sizeof(unsigned) * std::size_t(rows) * std::size_t(vocab);
}

Status sample_filtered_sort(const SampleArgs& a, void* scratch) {
  if (std::string e = check_args(a); !e.empty()) return Status::error(e);
  const SortArgs s{a, static_cast<unsigned*>(scratch)};
  const hipError_t err = a.dtype == Dtype::f32 ? launch_sort<float>(s) : launch_sort<std::uint16_t>(s);
  if (err != hipSuccess) return Status::error(std::string("sort-filtered launch: ") + hipGetErrorString(err));
  return {};
}

}  // namespace raceoracle::kernels
