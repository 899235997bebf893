// The fused filtered race (SPEC §9): one launch, one workgroup per row; each
// filter's threshold found without a sort, by a bitwise search over the
// logits' rank keys (kernels/filtered_row.h), then the race over the kept ids.
// Every pass re-reads the row (from L2 on a GPU). Per row, with B the key's
// bits (16 for bf16, 32 for fp32):
//   max:    1 pass
//   top-k:  B passes, each a count of the ids with key >= a candidate: the
//           k-th largest key, every id tied there kept (keep_all)
//   top-p:  1 pass for the reference mass S (the top-k set's: top_k_first),
//           B passes for the largest key whose mass at or above reaches
//           fl(p S), 1 for the mass above it and the ties there; the ties
//           kept lowest id first while the mass before each is < fl(p S),
//           their id bound found by a bitwise search over ids when the cut
//           falls inside them
//   min-p:  none: w >= min_p (w = exp((x - m) / t), the max's w is 1)
//   race:   1 pass
// Why each compare is the one the oracle's boundary covers, and what the
// searches cost: kernels/FILTERED.md.
#include "kernels/filtered_row.h"

namespace raceoracle::kernels {
namespace {
using namespace filtered;

template <class Logit, int THREADS, Defect D>
struct SelectRow {
  const Logit* x;
  std::int64_t n;
  float m_safe, inv_t;
  unsigned* su;
  float* sf;

  __device__ unsigned key(std::int64_t i) const { return rank_key<Logit>(load_logit(x + i)); }
  __device__ float w(std::int64_t i) const { return weight<D>(load_logit(x + i), m_safe, inv_t); }

  /// How many ids satisfy pred(i, key); every thread gets it.
  template <class P>
  __device__ unsigned count(P pred) const {
    unsigned c = 0;
    for (std::int64_t i = threadIdx.x; i < n; i += THREADS) c += pred(i, key(i)) ? 1u : 0u;
    c = block_sum<D>(c, su);
    __syncthreads();  // su is reused by the next reduction
    return c;
  }
  /// The weights of the ids that satisfy pred(i, key), summed; every thread gets it.
  template <class P>
  __device__ float mass(P pred) const {
    float s = 0.0f;
    for (std::int64_t i = threadIdx.x; i < n; i += THREADS)
      if (pred(i, key(i))) s = accumulate<D>(s, w(i));
    s = block_sum<D>(s, sf);
    __syncthreads();
    return D == Defect::mass_bf16 ? round_to_bf16(s) : s;
  }
  /// The largest key t in [0, 2^B) with holds(t) (holds(0) taken as true;
  /// holds non-increasing in t), bit by bit from the top.
  template <class H>
  __device__ unsigned largest_key(H holds) const {
    unsigned t = 0;
    for (int b = kKeyBits<Logit> - 1; b >= 0; --b)
      if (holds(t | (1u << b))) t |= 1u << b;
    return t;
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
  Kept k;
  if (f.top_k_on) {
    const unsigned need = unsigned(f.top_k);
    k.top_k.key = r.largest_key([&](unsigned c) { return r.count([&](std::int64_t, unsigned key) { return key >= c; }) >= need; });
    if (D == Defect::topk_exactly_k) {
      const unsigned above = r.count([&](std::int64_t, unsigned key) { return key > k.top_k.key; });
      k.top_k.id = r.nth_id([&](std::int64_t, unsigned key) { return key == k.top_k.key; }, need - above);
    }
  }
  if (f.top_p_on) {
    // The reference set: the top-k set (top_k_first), or the row (joint_mass).
    const Cut ref = D == Defect::joint_mass ? Cut{} : k.top_k;
    const float S = r.mass([&](std::int64_t i, unsigned key) { return ref.keeps(key, i); });
    const float thr = f.top_p * S;
    const unsigned at = r.largest_key([&](unsigned c) {
      return r.mass([&](std::int64_t i, unsigned key) { return key >= c && ref.keeps(key, i); }) >= thr;
    });
    const float ahead = r.mass([&](std::int64_t i, unsigned key) { return key > at && ref.keeps(key, i); });
    auto tie = [&](std::int64_t i, unsigned key) { return key == at && ref.keeps(key, i); };
    const unsigned ties = r.count(tie);
    // The j-th tie (from 0) has fl(ahead + fl(j w)) ahead of it: kept while that is < thr
    // (non-decreasing in j, so the kept ties are the first `keep`).
    const float wt = weight<D>(value_of<Logit>(at), r.m_safe, r.inv_t);
    auto kept_tie = [&](unsigned j) { return accumulate<D>(ahead, float(j) * wt) < thr; };
    const float guess = wt > 0.0f ? (thr - ahead) / wt : float(ties);
    unsigned keep = guess >= float(ties) ? ties : guess > 0.0f ? unsigned(guess) : 0u;  // then corrected
    while (keep < ties && kept_tie(keep)) ++keep;
    while (keep > 0 && !kept_tie(keep - 1)) --keep;
    if (D == Defect::crossing_dropped && keep > 0) --keep;  // the last kept id is the one that crosses p
    k.top_p.key = at;
    k.top_p.id = keep >= ties ? INT64_MAX : keep == 0 ? -1 : r.nth_id(tie, keep);
  }
  if (f.min_p_on) k.min_w = f.min_p;  // p_i >= min_p p_max is w_i >= min_p: the max's w is exp(0) = 1
  return k;
}

template <class Logit, int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void filtered_select_kernel(SampleArgs a) {
  RACEORACLE_SHARED(unsigned, smem_u, 32);
  RACEORACLE_SHARED(float, smem_f, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
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
  const SelectRow<Logit, THREADS, D> r{x, a.vocab, guard_max<D>(m), inverse_temperature(T), smem_u, smem_f};
  const RowFilters f = read_filters<D>(a, row);
  // A row without a finite max (fully masked, NaN) has nothing to filter.
  const Kept k = f.any() && m > -INFINITY && m < INFINITY ? select_kept(r, f) : Kept{};
  Best best = no_candidate();
  for (std::int64_t i = threadIdx.x; i < a.vocab; i += THREADS) {
    const float xi = load_logit(x + i);
    const unsigned key = rank_key<Logit>(xi);
    if (k.top_k.keeps(key, i) && k.top_p.keeps(key, i) && weight<D>(xi, r.m_safe, r.inv_t) >= k.min_w)
      best = BetterOf<D>{}(best, Best{race_key<ScalingOrder::post, D>(xi, r.m_safe, r.inv_t, e[i], a.eps), int(i)});
  }
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
