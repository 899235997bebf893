#pragma once
/// The filters' select (SPEC §9), without a sort: a radix select over the
/// logits' rank keys (filtered_row.h), 8 bits a pass, one workgroup per row,
/// finding each filter's cut: top-k's k-th largest key, top-p's crossing key
/// and id, min-p's least weight (kernels/filtered_select.hip says the passes;
/// kernels/FILTERED.md why each compare is the one the oracle's boundary
/// covers). The fused filtered race and the verify kernels use it, each with
/// the weights of its own arithmetic.
#include "kernels/filtered_row.h"

namespace raceoracle::kernels::filtered {

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

/// The weight exp((x - m) / t) in post order (the fused filtered race's own,
/// filtered_row.h's weight); m is the row's max of scaled(x) = x.
template <Defect D>
struct PostScaleWeight {
  float m_safe, inv_t;
  __device__ float operator()(float x) const { return weight<D>(x, m_safe, inv_t); }
  __device__ float scaled(float x) const { return x; }
};

/// The top-k set, or a superset of it, gathered into shared memory (its ids
/// and logits) when it holds at most kCapacity ids: the select's remaining
/// passes walk it instead of the row, and a race may too (Kept::listed).
struct TopSet {
  static constexpr unsigned kCapacity = 1024;
  unsigned n;
  unsigned id[kCapacity];  // ids < 2^31 (race.h's int ids)
  float x[kCapacity];
};

/// A row as the select walks it; `Weight` computes an id's w from its logit,
/// in the arithmetic of the kernel whose probabilities the cuts filter (its
/// m_safe is set by select_kept, once the row's max is known).
template <class Logit, int THREADS, Defect D, class Weight = PostScaleWeight<D>>
struct SelectRow {
  const Logit* x;
  std::int64_t n;
  Weight w;
  device::SharedPtr<unsigned> su;
  device::SharedPtr<Histograms<THREADS>> h;
  Fixed fx;
  device::SharedPtr<TopSet> top;
  bool listed = false;  ///< each() walks `top`, every id the passes still need, instead of the row

  /// Calls f(id, logit, key) for every id this thread visits.
  template <class F>
  __device__ void each(F f) const {
    if (listed) {
      for (unsigned t = threadIdx.x; t < top->n; t += THREADS) {
        const float v = top->x[t];
        f(std::int64_t(top->id[t]), v, rank_key<Logit>(v));
      }
      return;
    }
    for_each_id<THREADS, kUnroll>(x, static_cast<const float*>(nullptr), n,
                                  [&](std::int64_t i, float v, float) { f(i, v, rank_key<Logit>(v)); });
  }
  /// Vectors a thread loads at once on the select's passes over the row (one
  /// workgroup walks a whole row). Not on the race's pass: its registers set
  /// the whole kernel's occupancy (bench/README.md, "The filtered kernels").
  /// Measured on NVIDIA; the cpu layer walks the same way (its tests and the
  /// mutation engine judge that walk); one on AMD, unmeasured there (it
  /// doubles hipcc's compile of each unit that includes the select, 37 -> 82 s
  /// for filtered_select.hip).
#if defined(RACEORACLE_CUDA_DEVICE) || defined(RACEORACLE_BACKEND_CPU)
  static constexpr int kUnroll = 4;
#else
  static constexpr int kUnroll = 1;
#endif
  /// The row's max of w.scaled(x), NaN ignored (over the top-k set once
  /// listed: it holds the row's max); every thread gets it.
  __device__ float max() const {
    float m = -INFINITY;
    each([&](std::int64_t, float v, unsigned) { m = MaxOf<D>{}(m, w.scaled(v)); });
    m = block_max<D>(m, su);
    __syncthreads();  // su is reused by the next reduction
    return m;
  }
  /// Gathers the ids of rank key at least `key` into `top` where they are at
  /// most `capacity` (<= TopSet::kCapacity); each() walks them from then on.
  /// `listed` says whether they were (else each() still walks the row).
  __device__ void gather(unsigned key, unsigned capacity) {
    __syncthreads();  // every thread has read what it needs of the shared memory
    if (threadIdx.x == 0) top->n = 0;
    __syncthreads();
    each([&](std::int64_t i, float v, unsigned k) {
      if (k < key) return;
      const unsigned s = atomicAdd(&top->n, 1u);
      if (s >= capacity) return;
      top->id[s] = unsigned(i);
      top->x[s] = v;
    });
    __syncthreads();
    listed = top->n <= capacity;
    __syncthreads();  // top->n is read before anyone writes it again
  }
  /// A rank key at most the row's k-th largest (1 <= k <= THREADS): the k-th
  /// largest of the threads' own largest keys, which belong to k distinct
  /// ids. Every thread gets it. One pass over the row, no atomics.
  __device__ unsigned key_below_kth(unsigned k) const {
    unsigned mine = 0;  // NaN's key, the least: a thread without ids bounds nothing
    each([&](std::int64_t, float, unsigned key) { mine = key > mine ? key : mine; });
    const device::SharedPtr<unsigned> keys = device::shared_cast<unsigned>(top);  // THREADS <= TopSet::kCapacity
    keys[threadIdx.x] = mine;
    __syncthreads();
    unsigned above = 0, at_least = 0;
    const unsigned* all = &keys[0];  // read-only until the barrier below: one preemption point on the cpu layer, not THREADS
    for (int t = 0; t < THREADS; ++t) {
      const unsigned v = all[t];
      above += v > mine ? 1u : 0u;
      at_least += v >= mine ? 1u : 0u;
    }
    __syncthreads();  // every thread has read the keys
    if (above < k && k <= at_least) su[0] = mine;  // mine is the k-th largest (its ties write the same)
    __syncthreads();
    const unsigned kth = su[0];
    __syncthreads();  // su is reused by the next reduction
    return kth;
  }
  /// A weight as the masses add it: fixed point (its bf16 rounding first under mass_bf16).
  __device__ unsigned long long fixed_w(float x) const {
    const float v = w(x);
    return fx.of(D == Defect::mass_bf16 ? round_to_bf16(v) : v);
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
    // A thread adds up a run of its ids in one bin before one atomic for the
    // run: a row's ids crowd into few bins (LLM-like rows: a few binades), so
    // that a warp's same-bin atomics would serialise. Integer sums: the same
    // bits in any grouping (a row's fixed-point total fits 64 bits, Fixed).
    int run_bin = -1;
    unsigned run_count = 0;
    unsigned long long run_mass = 0;
    auto flush = [&] {
      if (run_count == 0) return;
      atomicAdd(&h->count[warp][run_bin], run_count);
      if (MASS) atomicAdd(&h->mass[warp][run_bin], run_mass);
      run_count = 0;
      run_mass = 0;
    };
    each([&](std::int64_t i, float v, unsigned k) {
      if ((std::uint64_t(k) >> (shift + kDigitBits)) != prefix || !ref.keeps(k, i)) return;
      const int b = int((k >> shift) & (kBins - 1));
      if (b != run_bin) flush(), run_bin = b;
      ++run_count;
      if (MASS) run_mass += fixed_w(v);
    });
    flush();
    __syncthreads();
    for (int b = int(threadIdx.x); b < kBins; b += THREADS)
      for (int v = 1; v < warps; ++v) {
        h->count[0][b] += h->count[v][b];
        if (MASS) h->mass[0][b] += h->mass[v][b];
      }
    __syncthreads();
  }

  /// The id of the need-th (from 1) id in id order among the `ties` ids
  /// with tie(i, key); 1 <= need <= ties. Up to kGathered ties, one pass
  /// gathers them into the histograms' memory (free once the cut's
  /// histograms are read) and the one with need - 1 smaller ids is the
  /// answer (ids are distinct: the gather's order does not matter); more, a
  /// bitwise search over ids, a count a bit (bits(V) passes).
  template <class P>
  __device__ std::int64_t nth_id(P tie, unsigned need, unsigned ties) const {
    if (ties <= kGathered) {
      const device::SharedPtr<unsigned> ids = device::shared_cast<unsigned>(h);  // ids < 2^31 (race.h's int ids)
      __syncthreads();  // every thread has read the histograms
      if (threadIdx.x == 0) su[1] = 0;  // the count gathered
      __syncthreads();
      each([&](std::int64_t i, float, unsigned k) {
        if (tie(i, k)) ids[atomicAdd(&su[1], 1u)] = unsigned(i);
      });
      __syncthreads();
      for (unsigned t = threadIdx.x; t < ties; t += THREADS) {
        unsigned below = 0;
        for (unsigned j = 0; j < ties; ++j) below += ids[j] < ids[t] ? 1u : 0u;
        if (below == need - 1) su[0] = ids[t];
      }
      __syncthreads();
      const std::int64_t found = su[0];
      __syncthreads();  // su is reused by the next reduction
      return found;
    }
    std::int64_t t = 0;  // the largest t with fewer than `need` ties below it
    int bits = 0;
    while ((std::int64_t(1) << bits) < n) ++bits;
    for (int b = bits - 1; b >= 0; --b) {
      const std::int64_t c = t | (std::int64_t(1) << b);
      if (c <= n && count([&](std::int64_t i, unsigned k) { return i < c && tie(i, k); }) < need) t = c;
    }
    return t;
  }
  static constexpr unsigned kGathered = unsigned(sizeof(Histograms<THREADS>) / sizeof(unsigned));
};

/// The kept set of a sampling row whose max is finite: a top-k cut, a top-p
/// cut and min-p's least weight.
struct Kept {
  Cut top_k, top_p;
  float min_w = 0.0f;
  bool listed = false;  ///< every kept id is in the TopSet the select was given
  /// Whether the cuts keep the id of rank key `key` (min-p aside).
  __device__ bool ranks(unsigned key, std::int64_t i) const { return top_k.keeps(key, i) && top_p.keeps(key, i); }
  /// Whether the id of rank key `key` and weight `w` is kept (the default keeps every id).
  __device__ bool keeps(unsigned key, std::int64_t i, float w) const { return ranks(key, i) && w >= min_w; }
};

/// A select's result: the kept set (every id where the row has no finite
/// max: nothing to filter) and the row's max of the weight's scaled(x).
struct Selected {
  Kept kept;
  float m;
};

/// A row's cuts under filters f (at least one on). With top-k on, its radix
/// select comes first (on rank keys, no weight). Where the top-k set, or a
/// superset of it found in one pass (k <= THREADS: key_below_kth), holds at
/// most `capacity` ids (TopSet::kCapacity; 0: never), one more pass gathers
/// it and the rest walks it instead of the row: the radix select itself when
/// the superset came first, the max (the row's max is in it: k >= 1),
/// top-p's passes (their reference set is the top-k set, top_k_first) and
/// min-p. The same ids in any order give the same bits: counts and
/// fixed-point masses are integer sums, the max a max. A superset's ids
/// outside the top-k set move no cut: they rank below its k-th key, so the
/// superset's k-th largest key is the row's, and top-p counts the top-k set
/// alone.
template <class Logit, int THREADS, Defect D, class Weight>
__device__ Selected select_kept(SelectRow<Logit, THREADS, D, Weight> r, const RowFilters& f,
                                unsigned capacity = TopSet::kCapacity) {
  static_assert(THREADS <= int(TopSet::kCapacity), "key_below_kth lays the threads' keys in the TopSet");
  constexpr int B = kKeyBits<Logit>;
  // joint_mass's top-p measures the whole row: it needs the row.
  const bool gathers = D != Defect::joint_mass && capacity > 0;
  Kept k;
  if (f.top_k_on) {
    // For k <= THREADS, first a superset of the top-k set (every id of rank
    // key at least a bound of the k-th), gathered where it fits: the radix
    // select below then walks it instead of the row.
    if (gathers && f.top_k <= THREADS) r.gather(r.key_below_kth(unsigned(f.top_k)), capacity);
    // The k-th largest key: digit by digit, the highest bin whose count,
    // with the bins above it, reaches the ids still needed.
    unsigned prefix = 0, need = unsigned(f.top_k), above = 0, ties = 0;
    for (int shift = B - kDigitBits; shift >= 0; shift -= kDigitBits) {
      r.template histogram<false>(shift, prefix, Cut{});
      unsigned acc = 0;
      int b = kBins - 1;
      for (; b > 0 && acc + r.h->count[0][b] < need; --b) acc += r.h->count[0][b];
      need -= acc;
      above += acc;
      prefix = (prefix << kDigitBits) | unsigned(b);
      ties = r.h->count[0][b];
    }
    k.top_k.key = prefix;
    if (D == Defect::topk_exactly_k)
      k.top_k.id = r.nth_id([&](std::int64_t, unsigned key) { return key == prefix; }, unsigned(f.top_k) - above, ties);
    if (gathers && !r.listed && above + ties <= capacity) r.gather(prefix, capacity);
  }
  const float m = r.max();
  if (!(m > -INFINITY && m < INFINITY)) return {Kept{}, m};
  r.w.m_safe = m;  // finite: the guarded max is m itself
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
    const float wt = r.w(value_of<Logit>(at));
    auto kept_tie = [&](unsigned j) { return accumulate<D>(F, float(j) * wt) < thr; };
    const float guess = wt > 0.0f ? (thr - F) / wt : float(ties);
    unsigned keep = guess >= float(ties) ? ties : guess > 0.0f ? unsigned(guess) : 0u;  // then corrected
    while (keep < ties && kept_tie(keep)) ++keep;
    while (keep > 0 && !kept_tie(keep - 1)) --keep;
    if (D == Defect::crossing_dropped && keep > 0) --keep;  // the last kept id is the one that crosses p
    auto tie = [&](std::int64_t i, unsigned key) { return key == at && ref.keeps(key, i); };
    k.top_p.key = at;
    k.top_p.id = keep >= ties ? INT64_MAX : keep == 0 ? -1 : r.nth_id(tie, keep, ties);
  }
  if (f.min_p_on) k.min_w = f.min_p;  // p_i >= min_p p_max is w_i >= min_p: the max's w is exp(0) = 1
  k.listed = r.listed;
  return {k, m};
}

}  // namespace raceoracle::kernels::filtered
