// The fused filtered race (SPEC §9): one launch, one workgroup per row; each
// filter's threshold found without a sort, by a radix select over the
// logits' rank keys (kernels/filtered_row.h), 8 bits a pass, then the race
// over the kept ids. Every pass re-reads the row (from L2 on a GPU). Per row,
// with B the key's bits (16 for bf16, 32 for fp32):
//   top-k:  B / 8 passes, each a histogram of counts over the ids that share
//           the digits chosen so far: the k-th largest key, every id tied
//           there kept (keep_all); then, where the top-k set holds at most
//           TopSet::kCapacity ids, one pass gathers it into shared memory and
//           every step below walks it instead of the row (no more passes)
//   max:    1 pass
//   top-p:  B / 8 passes, each a histogram of counts and masses over the
//           top-k set (top_k_first): the first gives the reference mass S,
//           then the largest key whose mass at or above reaches fl(p S); the
//           ids tied there kept lowest id first while the mass before each
//           is < fl(p S), their id bound found by one gathering pass (or a
//           bitwise search over ids) when the cut falls inside them
//   min-p:  none: w >= min_p (w = exp((x - m) / t), the max's w is 1)
//   race:   1 pass, reading the noise (the gathered ids' alone)
// Masses are summed in fixed point (exact integer sums, deterministic under
// any atomic order). Why each compare is the one the oracle's boundary
// covers, and what the passes cost: kernels/FILTERED.md.
#include "kernels/filtered_select.h"

namespace raceoracle::kernels {
namespace {
using namespace filtered;

template <class Logit, int THREADS, Defect D>
__global__ __launch_bounds__(THREADS) void filtered_select_kernel(SampleArgs a) {
  RACEORACLE_SHARED(unsigned, smem_u, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  RACEORACLE_SHARED(Histograms<THREADS>, hist, 1);
  RACEORACLE_SHARED(TopSet, top, 1);
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
  const RowFilters f = read_filters<D>(a, row);
  // The filters' probabilities: softmax(x / T) (the mutant: softmax(x)).
  const float filter_inv_t = D == Defect::untempered_filter ? 1.0f : inverse_temperature(T);
  // A row without a finite max (fully masked, NaN) has nothing to filter: Kept{}.
  const Selected s = f.any() ? select_kept(SelectRow<Logit, THREADS, D>{x, a.vocab, {0.0f, filter_inv_t}, smem_u,
                                                                         hist, Fixed(a.vocab), top},
                                           f)
                             : Selected{Kept{}, row_max<THREADS, D>(x, a.vocab, smem_u)};
  const Kept& k = s.kept;
  const PostScaleWeight<D> w{guard_max<D>(s.m), inverse_temperature(T)}, filter_w{w.m_safe, filter_inv_t};
  Best best = no_candidate();
  auto race = [&](std::int64_t i, float xi, float ei) {
    const unsigned key = rank_key<Logit>(xi);
    if (k.ranks(key, i) && filter_w(xi) >= k.min_w)
      best = BetterOf<D>{}(best, Best{race_key<ScalingOrder::post, D>(xi, w.m_safe, w.inv_t, ei, a.eps), int(i)});
  };
  if (k.listed)  // every kept id is in the top-k set: race it, reading the noise of those ids alone
    for (unsigned t = threadIdx.x; t < top->n; t += THREADS) race(top->id[t], top->x[t], e[top->id[t]]);
  else
    for_each_id<THREADS>(x, e, a.vocab, race);
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
