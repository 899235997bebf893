// The fused filtered race (SPEC §9): one launch, one workgroup per row; each
// filter's threshold found without a sort, by a radix select over the
// logits' rank keys (kernels/filtered_row.h), 8 bits a pass, then the race
// over the kept ids. Every pass re-reads the row (from L2 on a GPU). Per row,
// with B the key's bits (16 for bf16, 32 for fp32):
//   max:    1 pass
//   top-k:  B / 8 passes, each a histogram of counts over the ids that share
//           the digits chosen so far: the k-th largest key, every id tied
//           there kept (keep_all)
//   top-p:  B / 8 passes, each a histogram of counts and masses over the
//           top-k set (top_k_first): the first gives the reference mass S,
//           then the largest key whose mass at or above reaches fl(p S); the
//           ids tied there kept lowest id first while the mass before each
//           is < fl(p S), their id bound found by a bitwise search over ids
//           when the cut falls inside them
//   min-p:  none: w >= min_p (w = exp((x - m) / t), the max's w is 1)
//   race:   1 pass
// Masses are summed in fixed point (exact integer sums, deterministic under
// any atomic order). Why each compare is the one the oracle's boundary
// covers, and what the passes cost: kernels/FILTERED.md.
#include "kernels/filtered_row.h"

namespace raceoracle::kernels {
namespace {
using namespace filtered;

constexpr int kDigitBits = 8;
constexpr int kBins = 1 << kDigitBits;

/// Per-warp histograms (at most THREADS / 32 warps), merged into warp 0's.
template <int THREADS>
struct Histograms {
  static constexpr int kWarps = THREADS / 32;
  unsigned count[kWarps][kBins];
  unsigned long long mass[kWarps][kBins];
};

/// A weight in fixed point: w (in [0, 1]) times 2^shift, truncated. With
/// shift = 63 - bits(V) a row's sum never overflows 64 bits; each term loses
/// less than 2^-shift <= 2^-32 (FILTERED.md: inside the boundary's gamma_V).
struct Fixed {
  int shift;
  float scale, inv_scale;
  __device__ explicit Fixed(std::int64_t n) {
    int bits = 0;
    while ((std::int64_t(1) << bits) <= n) ++bits;
    shift = 63 - bits;
    scale = ldexpf(1.0f, shift);
    inv_scale = ldexpf(1.0f, -shift);
  }
  __device__ unsigned long long of(float w) const { return static_cast<unsigned long long>(w * scale); }
  /// A fixed-point sum as fp32: one rounding (the scale is a power of 2).
  __device__ float to_float(unsigned long long v) const { return float(v) * inv_scale; }
};

template <class Logit, int THREADS, Defect D>
struct SelectRow {
  const Logit* x;
  std::int64_t n;
  float m_safe, inv_t;
  device::SharedPtr<unsigned> su;
  device::SharedPtr<Histograms<THREADS>> h;
  Fixed fx;

  /// Calls f(id, logit, key) for every id this thread visits.
  template <class F>
  __device__ void each(F f) const {
    for_each_id<THREADS>(x, static_cast<const float*>(nullptr), n,
                         [&](std::int64_t i, float v, float) { f(i, v, rank_key<Logit>(v)); });
  }
  /// A weight as the masses add it: fixed point (its bf16 rounding first under mass_bf16).
  __device__ unsigned long long fixed_w(float x) const {
    const float w = weight<D>(x, m_safe, inv_t);
    return fx.of(D == Defect::mass_bf16 ? round_to_bf16(w) : w);
  }
  /// A mass as the compares read it (a bf16 accumulator's under mass_bf16).
  __device__ float mass_of(unsigned long long v) const {
    const float f = fx.to_float(v);
    return D == Defect::mass_bf16 ? round_to_bf16(f) : f;
  }

  /// How many ids satisfy pred(i, key); every thread gets it.
  template <class P>
  __device__ unsigned count(P pred) const {
    unsigned c = 0;
    each([&](std::int64_t i, float, unsigned k) { c += pred(i, k) ? 1u : 0u; });
    c = block_sum<D>(c, su);
    __syncthreads();  // su is reused by the next reduction
    return c;
  }

  /// The histogram, by the digit at `shift`, of the ids in `ref` whose key
  /// has the digits above `shift` equal to `prefix`: counts, and masses when
  /// MASS. The merged bins are warp 0's; every thread reads them until the
  /// next histogram (which begins with a barrier).
  template <bool MASS>
  __device__ void histogram(int shift, unsigned prefix, const Cut& ref) const {
    const int w = device::warp_size(), warp = int(threadIdx.x) / w, warps = (THREADS + w - 1) / w;
    __syncthreads();  // every thread has read the previous histogram
    for (int b = int(threadIdx.x) % w; b < kBins; b += w) {
      h->count[warp][b] = 0;
      if (MASS) h->mass[warp][b] = 0;
    }
    __syncthreads();
    each([&](std::int64_t i, float v, unsigned k) {
      if ((std::uint64_t(k) >> (shift + kDigitBits)) != prefix || !ref.keeps(k, i)) return;
      const int b = int((k >> shift) & (kBins - 1));
      atomicAdd(&h->count[warp][b], 1u);
      if (MASS) atomicAdd(&h->mass[warp][b], fixed_w(v));
    });
    __syncthreads();
    for (int b = int(threadIdx.x); b < kBins; b += THREADS)
      for (int v = 1; v < warps; ++v) {
        h->count[0][b] += h->count[v][b];
        if (MASS) h->mass[0][b] += h->mass[v][b];
      }
    __syncthreads();
  }

  /// The id of the need-th (from 1) id in id order among those with
  /// tie(i, key); need >= 1 and at most their count.
  template <class P>
  __device__ std::int64_t nth_id(P tie, unsigned need) const {
    std::int64_t t = 0;  // the largest t with fewer than `need` ties below it
    int bits = 0;
    while ((std::int64_t(1) << bits) < n) ++bits;
    for (int b = bits - 1; b >= 0; --b) {
      const std::int64_t c = t | (std::int64_t(1) << b);
      if (c <= n && count([&](std::int64_t i, unsigned k) { return i < c && tie(i, k); }) < need) t = c;
    }
    return t;
  }
};

/// The kept set of a sampling row whose max is finite: a top-k cut, a top-p
/// cut and min-p's least weight.
struct Kept {
  Cut top_k, top_p;
  float min_w = 0.0f;
};

template <class Logit, int THREADS, Defect D>
__device__ Kept select_kept(const SelectRow<Logit, THREADS, D>& r, const RowFilters& f) {
  constexpr int B = kKeyBits<Logit>;
  Kept k;
  if (f.top_k_on) {
    // The k-th largest key: digit by digit, the highest bin whose count,
    // with the bins above it, reaches the ids still needed.
    unsigned prefix = 0, need = unsigned(f.top_k), above = 0;
    for (int shift = B - kDigitBits; shift >= 0; shift -= kDigitBits) {
      r.template histogram<false>(shift, prefix, Cut{});
      unsigned acc = 0;
      int b = kBins - 1;
      for (; b > 0 && acc + r.h->count[0][b] < need; --b) acc += r.h->count[0][b];
      need -= acc;
      above += acc;
      prefix = (prefix << kDigitBits) | unsigned(b);
    }
    k.top_k.key = prefix;
    if (D == Defect::topk_exactly_k)
      k.top_k.id = r.nth_id([&](std::int64_t, unsigned key) { return key == prefix; }, unsigned(f.top_k) - above);
  }
  if (f.top_p_on) {
    // The reference set: the top-k set (top_k_first), or the row (joint_mass).
    const Cut ref = D == Defect::joint_mass ? Cut{} : k.top_k;
    // The largest key `at` whose mass at or above reaches thr: digit by
    // digit, the highest bin whose mass, with everything above it, does.
    // Integer sums: exact, so the masses compared are monotone in the key.
    unsigned prefix = 0, ties = 0;
    unsigned long long above = 0;
    float thr = 0.0f;
    for (int shift = B - kDigitBits; shift >= 0; shift -= kDigitBits) {
      r.template histogram<true>(shift, prefix, ref);
      if (shift == B - kDigitBits) {  // the first histogram holds the whole reference set
        unsigned long long S = 0;
        for (int b = 0; b < kBins; ++b) S += r.h->mass[0][b];
        thr = f.top_p * r.mass_of(S);
      }
      unsigned long long acc = 0;
      int b = kBins - 1;
      for (; b > 0 && !(r.mass_of(above + acc + r.h->mass[0][b]) >= thr); --b) acc += r.h->mass[0][b];
      above += acc;
      prefix = (prefix << kDigitBits) | unsigned(b);
      ties = r.h->count[0][b];
    }
    const unsigned at = prefix;
    // `above` is the mass ranked above `at` (tested < thr on the way down);
    // the j-th tie (from 0) has fl(F + fl(j w)) ahead of it: kept while that
    // is < thr (non-decreasing in j, so the kept ties are the first `keep`).
    const float F = r.mass_of(above);
    const float wt = weight<D>(value_of<Logit>(at), r.m_safe, r.inv_t);
    auto kept_tie = [&](unsigned j) { return accumulate<D>(F, float(j) * wt) < thr; };
    const float guess = wt > 0.0f ? (thr - F) / wt : float(ties);
    unsigned keep = guess >= float(ties) ? ties : guess > 0.0f ? unsigned(guess) : 0u;  // then corrected
    while (keep < ties && kept_tie(keep)) ++keep;
    while (keep > 0 && !kept_tie(keep - 1)) --keep;
    if (D == Defect::crossing_dropped && keep > 0) --keep;  // the last kept id is the one that crosses p
    auto tie = [&](std::int64_t i, unsigned key) { return key == at && ref.keeps(key, i); };
    k.top_p.key = at;
    k.top_p.id = keep >= ties ? INT64_MAX : keep == 0 ? -1 : r.nth_id(tie, keep);
  }
  if (f.min_p_on) k.min_w = f.min_p;  // p_i >= min_p p_max is w_i >= min_p: the max's w is exp(0) = 1
  return k;
}

template <class Logit, int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void filtered_select_kernel(SampleArgs a) {
  RACEORACLE_SHARED(unsigned, smem_u, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  RACEORACLE_SHARED(Histograms<THREADS>, hist, 1);
  device::wait_for_prior_grid();
  device::allow_next_grid();
  const std::int64_t row = blockIdx.x;
  const Logit* x = row_start<D>(static_cast<const Logit*>(a.logits), row, a.logit_stride);
  const float* e = row_start<D>(a.noise, row, a.noise_stride);
  const float T = a.temperatures[row];
  if (is_greedy<D>(T, a.greedy_eps)) {  // greedy rows ignore filters
    const int token = row_argmax<THREADS, D>(x, a.vocab, smem_best);
    if (threadIdx.x == 0) a.tokens[row] = token;
    return;
  }
  const float m = row_max<THREADS, D>(x, a.vocab, smem_u);
  __syncthreads();  // smem_u is reused
  const SelectRow<Logit, THREADS, D> r{x, a.vocab, guard_max<D>(m), inverse_temperature(T), smem_u, hist, Fixed(a.vocab)};
  const RowFilters f = read_filters<D>(a, row);
  // A row without a finite max (fully masked, NaN) has nothing to filter.
  const Kept k = f.any() && m > -INFINITY && m < INFINITY ? select_kept(r, f) : Kept{};
  Best best = no_candidate();
  for_each_id<THREADS>(x, e, a.vocab, [&](std::int64_t i, float xi, float ei) {
    const unsigned key = rank_key<Logit>(xi);
    if (k.top_k.keeps(key, i) && k.top_p.keeps(key, i) && weight<D>(xi, r.m_safe, r.inv_t) >= k.min_w)
      best = BetterOf<D>{}(best, Best{race_key<ScalingOrder::post, D>(xi, r.m_safe, r.inv_t, ei, a.eps), int(i)});
  });
  best = block_best<D>(best, smem_best);
  if (threadIdx.x == 0) a.tokens[row] = best.idx;
}

template <class Logit>
hipError_t launch_select(const SampleArgs& a, Defect d) {
  return visit_defect(
      FilteredDefects{}, d,
      [&](auto D) {
        return device::launch_chained(filtered_select_kernel<Logit, kFilteredThreads, decltype(D)::value>,
                                      dim3(unsigned(a.rows)), dim3(kFilteredThreads), a);
      },
      hipErrorInvalidValue);
}

}  // namespace

Status sample_filtered_select(const SampleArgs& a, Defect d) {
  if (std::string e = check_args(a); !e.empty()) return Status::error(e);
  if (!FilteredDefects::contains(d)) return Status::error(std::string("fused-filtered is not built with ") + to_string(d));
  const hipError_t err = a.dtype == Dtype::f32 ? launch_select<float>(a, d) : launch_select<std::uint16_t>(a, d);
  if (err != hipSuccess) return Status::error(std::string("fused-filtered launch: ") + hipGetErrorString(err));
  return {};
}

}  // namespace raceoracle::kernels
