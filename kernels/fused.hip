// The fused sampler (SPEC §2): two launches, vocab-tiled.
//   stage 1: one program per (row, tile of BLOCK_V ids) -> part_m, part_key, part_idx
//   stage 2: one program per row -> token
// The build compiles this file once per part, so that the parts compile side
// by side (kernels/CMakeLists.txt): RACEORACLE_FUSED_PART=P (0 <= P <
// RACEORACLE_FUSED_PARTS) holds the stage-1 kernels of one dtype and one
// tiling of kFusedConfigs, P = -1 the entry points and stage 2. Undefined
// (hipcc's one-unit build, the mutant schemata), one unit holds everything.
#include <cstdint>

#include "kernels/race.h"

namespace raceoracle::kernels {
namespace fused_parts {

struct Stage1Args {
  SampleArgs a;
  Partials p;
};

/// Stage 1 of the dtype `Logit` (std::uint16_t: bf16) and the tiling
/// kFusedConfigs[I], every order, noise source and defect built for it.
template <class Logit, std::size_t I>
hipError_t stage1_at(const Stage1Args& s, ScalingOrder order, NoiseSource n, Defect d);

inline constexpr std::size_t kParts = 2 * std::size(kFusedConfigs);  // bf16 tilings, then f32
#if defined(RACEORACLE_FUSED_PARTS)
static_assert(RACEORACLE_FUSED_PARTS == kParts, "kernels/CMakeLists.txt: one part a dtype and tiling");
#endif

}  // namespace fused_parts

namespace {
using fused_parts::Stage1Args;

/// A thread's best among its first `count` items by the definition: exact
/// keys folded in increasing item order (no item: the sentinel). `idx` is the
/// item index; the caller maps it to an id.
template <ScalingOrder ORDER, Defect D, int ITEMS, bool GREEDY>
__device__ __forceinline__ Best fold_items(const float (&v)[ITEMS], const float (&ev)[ITEMS], int count, float m_safe,
                                           float inv_t, float eps) {
  if (count <= 0) return no_candidate();
  auto key_of = [&](int j) {
    if (GREEDY) return D == Defect::greedy_scaled ? v[j] * inv_t : v[j];
    return race_key<ORDER, D>(v[j], m_safe, inv_t, ev[j], eps);
  };
  Best best{key_of(0), 0};
#pragma unroll
  for (int j = 1; j < ITEMS; ++j)
    if (j < count) fold_next<D>(best, key_of(j), j);
  return best;
}

/// Greedy rows: the thread's largest logit (NaN-ignoring) and the lowest item
/// holding it (highest under high_id_tie); item 0 when all are NaN. The same
/// result as fold_items, in a max and a search: no per-id NaN tests.
/// FULL: all ITEMS are present, so no per-item bound check.
template <Defect D, int ITEMS, bool FULL>
__device__ __forceinline__ Best greedy_items(const float (&v)[ITEMS], int count) {
  if (!FULL && count <= 0) return no_candidate();
  float top = v[0];
#pragma unroll
  for (int j = 1; j < ITEMS; ++j)
    if (FULL || j < count) top = fmaxf(top, v[j]);
  int c = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int j = D == Defect::high_id_tie ? k : ITEMS - 1 - k;  // the last match found wins
    if ((FULL || j < count) && v[j] == top) c = j;
  }
  return Best{top, c};
}

constexpr float kLog2e = 1.44269504f;

/// The screen's exponent in base 2, race_exponent times log2(e). Post order
/// multiplies x - m by 1/T and log2(e) folded into one factor, one multiply an
/// id fewer; the rounding this adds is in SCREEN.md's bound.
template <ScalingOrder ORDER>
__device__ __forceinline__ float screen_exponent2(float x, float m_safe, float inv_t, float inv_t_log2e) {
  if (ORDER == ScalingOrder::post) return (x - m_safe) * inv_t_log2e;
  return race_exponent<ORDER>(x, m_safe, inv_t) * kLog2e;
}

/// The screening key's numerator: exp2_approx of screen_exponent2 (the
/// fast_exp mutant's own exp, so that it races the keys it defines).
template <ScalingOrder ORDER, Defect D>
__device__ __forceinline__ float screen_numerator(float x, float m_safe, float inv_t, float inv_t_log2e) {
  if (D == Defect::fast_exp) return race_exp<D>(race_exponent<ORDER>(x, m_safe, inv_t));
  return device::exp2_approx(screen_exponent2<ORDER>(x, m_safe, inv_t, inv_t_log2e));
}

/// A thread's screen of its sampling items: the TopTwo of their screening
/// keys (top = +inf when a value lies outside the checked ranges), and the
/// item holding top with its inputs, whose exact key is computed if the
/// tile's screen decides.
struct ThreadScreen {
  TopTwo q;
  float xc, ec;
  int c;
};

/// A thread's running top two screening values (second <= top) and the item
/// holding top. Branch-free: min/max and a select. A q tying top raises
/// `second` to top (two candidates); so does a NaN q (fminf ignores it),
/// which only rows out of contract can produce.
struct ThreadTop {
  float top, second;
  int c;
  /// Item j's value q joins; whether it now holds top.
  __device__ __forceinline__ bool add(float q, int j) {
    const bool lead = q > top;
    second = fmaxf(second, fminf(top, q));
    c = lead ? j : c;
    top = fmaxf(top, q);
    return lead;
  }
};

/// Each id gets a fast screening key q, one pass, nothing kept per id. The
/// tile's ids with q >= top (1 - 2^-14) are its candidates; when there is one
/// (tile_decides), it is the tile's exact best and only its key is computed
/// exactly: one expf and one IEEE division a tile instead of one each an id.
/// The proof, and what tests it: kernels/SCREEN.md.
template <ScalingOrder ORDER, Defect D, int ITEMS>
__device__ __forceinline__ ThreadScreen screen_items(const float (&v)[ITEMS], const float (&ev)[ITEMS], float m_safe,
                                                     float inv_t, float eps) {
  ThreadTop t{0.0f, 0.0f, 0};
  float low = INFINITY, xc = 0.0f, ec = 0.0f;
  const float inv_t_log2e = inv_t * kLog2e;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const float p = screen_numerator<ORDER, D>(v[j], m_safe, inv_t, inv_t_log2e);
    const float d = ev[j] + eps;
    low = fminf(low, d);
    const bool lead = t.add(p * device::rcp_approx(d), j);
    xc = lead ? v[j] : xc;
    ec = lead ? ev[j] : ec;
  }
  if (!(low >= 0x1p-20f)) t.top = t.second = INFINITY;
  return ThreadScreen{TopTwo{t.top, t.second}, xc, ec, t.c};
}

/// The screen of a thread's sampling items when their noise is drawn and
/// held as complements r = 1 - u (DrawnAs::complement). Each id gets a bound
/// q+ = p rcp(exponential_floor(r) + eps) of its screening key, no logf; the
/// item of the largest q+ gets its E (noise_of_complement) and its screening
/// key q_c; the other items keep q+ as their screening value unless q+ reaches
/// q_c (1 - 2^-14), where they get E and q too (rare: a second pass, by the
/// whole warp if one lane needs it). One logf a thread and tile where
/// screen_items needs one an id. The values then enter the tile's top two as
/// screen_items' do. The proof: kernels/SCREEN.md, "Drawn noise".
template <Defect D, int ITEMS>
__device__ __forceinline__ ThreadScreen screen_drawn_items(const float (&v)[ITEMS], const float (&r)[ITEMS],
                                                           float m_safe, float inv_t, float eps) {
  constexpr ScalingOrder ORDER = ScalingOrder::post;  // the one order the drawn kernel is built for
  const float inv_t_log2e = inv_t * kLog2e;
  auto numerator = [&](float x) { return screen_numerator<ORDER, D>(x, m_safe, inv_t, inv_t_log2e); };
  auto bound_denominator = [&](int j) {
    return (D == Defect::floor_above_e ? r[j] * (1.0f + r[j]) : philox::exponential_floor(r[j])) + eps;
  };
  ThreadTop b{0.0f, 0.0f, -1};  // over the bounds
  float low = INFINITY;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const float d = bound_denominator(j);
    low = fminf(low, d);
    b.add(numerator(v[j]) * device::rcp_approx(d), j);
  }
  // d >= 2^-19 puts every E + eps at 2^-20 or more (SCREEN.md's range).
  if (!(low >= 0x1p-19f)) return ThreadScreen{TopTwo{INFINITY, INFINITY}, 0.0f, 0.0f, 0};
  if (b.c < 0) return ThreadScreen{TopTwo{b.top, b.second}, 0.0f, 0.0f, 0};  // no positive bound: top 0
  float xc = v[0], rc = r[0];
#pragma unroll
  for (int j = 1; j < ITEMS; ++j) xc = j == b.c ? v[j] : xc, rc = j == b.c ? r[j] : rc;
  float ec = noise_of_complement(rc);
  const float qc = numerator(xc) * device::rcp_approx(ec + eps);  // xc, not v[c]: no array indexed at run time
  const float flag = qc * (1.0f - 0x1p-14f);
  if (!(b.second >= flag)) return ThreadScreen{TopTwo{qc, b.second}, xc, ec, b.c};  // every other q+ below: none can lead
  ThreadTop t{0.0f, 0.0f, b.c};
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const float p = numerator(v[j]);
    float q = p * device::rcp_approx(bound_denominator(j)), e = 0.0f;
    if (j == b.c || q >= flag) {
      e = noise_of_complement(r[j]);
      q = p * device::rcp_approx(e + eps);
    }
    const bool lead = t.add(q, j);
    xc = lead ? v[j] : xc;
    ec = lead ? e : ec;
  }
  return ThreadScreen{TopTwo{t.top, t.second}, xc, ec, t.c};
}

/// Whether the tile's screen names its exact best: exactly one candidate, and
/// top in the proof's range [2^-75, inf) (SCREEN.md). Block-uniform.
__device__ __forceinline__ bool tile_decides(TopTwo t) {
  return t.top < INFINITY && t.top >= 0x1p-75f && t.second < t.top * (1.0f - 0x1p-14f);
}

/// One tile of stage 1: where its ids lie and how they are read. A full
/// tile whose rows start 16-byte aligned is read in rounds of 4 ids a
/// thread, thread t's round r being ids 4 (r THREADS + t) + 0..3 of the tile,
/// so that each load a warp issues covers consecutive bytes (8 a thread for
/// bf16, 16 for fp32 and the noise); otherwise (the tail tile, odd strides)
/// each thread reads ids t, t + THREADS, ... Either way a thread's items are
/// in increasing id order, and the reduction is a total order with lowest-id
/// ties, so both layouts give the same partials bit for bit. Greedy rows
/// never read noise.
template <class Logit, NoiseSource NOISE, int BLOCK_V, int THREADS, Defect D>
struct Stage1Tile {
  static constexpr int ITEMS = BLOCK_V / THREADS;
  static constexpr bool DRAWN = NOISE == NoiseSource::drawn;
  // Rounds are whole Philox calls too: 4 ids from a multiple of 4.
  static constexpr bool VECTORIZABLE = ITEMS % 4 == 0;

  std::int64_t row, start;
  int n;
  const Logit* x;
  const float* e;
  float T;
  bool greedy, vector;

  __device__ Stage1Tile(const SampleArgs& a, std::int64_t row_, int tile)
      : row(row_), start(std::int64_t(tile) * BLOCK_V), T(a.temperatures[row_]) {
    n = D == Defect::tail_unmasked ? BLOCK_V : int(a.vocab - start < BLOCK_V ? a.vocab - start : BLOCK_V);
    x = row_start<D>(static_cast<const Logit*>(a.logits), row, a.logit_stride) + start;
    greedy = is_greedy<D>(T, greedy_eps_of<D>(a));
    const std::int64_t noise_stride = D == Defect::noise_stride ? a.logit_stride : a.noise_stride;
    e = DRAWN ? nullptr : row_start<D>(a.noise, row, noise_stride) + start;
    vector = VECTORIZABLE && n == BLOCK_V && aligned16(x) && (greedy || DRAWN || aligned16(e));
  }

  /// The id, within the tile, of this thread's item j.
  __device__ int offset_of(int j) const {
    return vector ? 4 * ((j / 4) * THREADS + int(threadIdx.x)) + j % 4 : int(threadIdx.x) + j * THREADS;
  }
  /// How many of this thread's items are ids of the tile.
  __device__ int count() const {
    const int t = int(threadIdx.x);
    return vector ? ITEMS : (t < n ? (n - t + THREADS - 1) / THREADS : 0);
  }

  /// The items as fp32 (masked ids: logit -inf, noise 1; greedy rows: no
  /// noise). Drawn noise comes as AS says: E, or its complement (masked: 1).
  template <DrawnAs AS = DrawnAs::noise>
  __device__ void load(const SampleArgs& a, float (&v)[ITEMS], float (&ev)[ITEMS]) const {
    const std::uint64_t seed = DRAWN ? a.seeds[row] : 0, offset = DRAWN ? a.offsets[row] : 0;
    if constexpr (VECTORIZABLE) {
      if (vector) {
#pragma unroll
        for (int r = 0; r < ITEMS / 4; ++r) load_quad(x + offset_of(4 * r), v + 4 * r);
        if (greedy) return;
#pragma unroll
        for (int r = 0; r < ITEMS / 4; ++r) {
          if constexpr (DRAWN) {
            float q[race::kIdsPerPhiloxCall];
            draw_quad<D, AS>(seed, offset, std::uint32_t(row), std::uint32_t(start + offset_of(4 * r)), q);
#pragma unroll
            for (int k = 0; k < 4; ++k) ev[4 * r + k] = q[k];
          } else {
            load_quad(e + offset_of(4 * r), ev + 4 * r);
          }
        }
        return;
      }
    }
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const int i = offset_of(j);
      v[j] = i < n ? load_logit(x + i) : -INFINITY;
      if constexpr (DRAWN) ev[j] = i < n && !greedy ? draw_one<D, AS>(seed, offset, std::uint32_t(row), std::uint32_t(start + i)) : 1.0f;
      else ev[j] = i < n && !greedy ? e[i] : 1.0f;
    }
  }
};

/// Stage 1 is held to 64 registers a thread on NVIDIA (4 blocks of 256 per
/// SM; nvcc alone takes about 100): 1-4% faster on the H200, bench/README.md
/// "bf16 at the f32 byte rate". HIP's second bound counts warps per
/// execution unit instead: not set there.
#if defined(RACEORACLE_CUDA_DEVICE)
#define RACEORACLE_STAGE1_BOUNDS(THREADS) __launch_bounds__(THREADS, 65536 / (64 * (THREADS)))
#else
#define RACEORACLE_STAGE1_BOUNDS(THREADS) __launch_bounds__(THREADS)
#endif

/// Stage 1, one program per (tile, row). The tile is loaded once into
/// registers, ITEMS per thread (sampling rows load their noise in the same
/// phase as the logits, so both streams are in flight together), its max
/// reduced, then greedy rows take the lowest id of that max and sampling
/// rows race: the tile is screened (screen_items, block_top_two) and, where
/// the screen decides, its one candidate's thread writes the exact key;
/// otherwise the block reduces the exact fold. Every launch is chained to the
/// grid before it (device.h).
template <class Logit, ScalingOrder ORDER, NoiseSource NOISE, int BLOCK_V, int THREADS, Defect D>
__global__ RACEORACLE_STAGE1_BOUNDS(THREADS) void fused_stage1_kernel(Stage1Args s) {
  constexpr int ITEMS = BLOCK_V / THREADS;
  static_assert(THREADS % kBlockMultiple == 0, "every warp full (race.h)");
  RACEORACLE_SHARED(unsigned, smem_max, 32);
  RACEORACLE_SHARED(TopTwoBits, smem_q, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  // shared_reuse lays the max and the screen over smem_best's bytes.
  const auto max_smem = D == Defect::shared_reuse ? device::shared_cast<unsigned>(smem_best) : smem_max;
  const auto q_smem = D == Defect::shared_reuse ? device::shared_cast<TopTwoBits>(smem_best) : smem_q;
  device::wait_for_prior_grid();  // its writes (the logits, say) are visible from here
  device::allow_next_grid();      // stage 2 may be scheduled; it waits for this grid
  const SampleArgs& a = s.a;
  const int tile = int(blockIdx.x);
  const Stage1Tile<Logit, NOISE, BLOCK_V, THREADS, D> t(a, blockIdx.y, tile);
  // Drawn noise is screened from its complements (screen_drawn_items); the exact fold reloads E.
  constexpr DrawnAs kScreenAs = NOISE == NoiseSource::drawn ? DrawnAs::complement : DrawnAs::noise;
  float v[ITEMS], ev[ITEMS];
  t.template load<kScreenAs>(a, v, ev);
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) m = MaxOf<D>{}(m, v[j]);
  m = block_max<D>(m, max_smem);

  const float inv_t = inverse_temperature(t.T);
  const float eps = eps_of<D>(a);
  const float m_safe = guard_max<D>(m);
  const int count = t.count();
  auto to_id = [&](Best b) {  // item index -> id
    if (b.idx != INT_MAX) b.idx = int(t.start) + t.offset_of(b.idx);
    return b;
  };
  auto store = [&](Best b) {  // the tile's partials
    const std::int64_t k = t.row * s.p.tiles + tile;
    s.p.m[k] = m;
    s.p.key[k] = t.greedy ? m : b.key;
    s.p.idx[k] = b.idx;
  };
  Best best;
  if (t.greedy) {
    if (D == Defect::greedy_scaled)
      best = fold_items<ORDER, D, ITEMS, true>(v, ev, count, m_safe, inv_t, eps);
    else
      best = count >= ITEMS ? greedy_items<D, ITEMS, true>(v, count) : greedy_items<D, ITEMS, false>(v, count);
  } else {
    skip_far_draws<D, kScreenAs>(v, ev, m_safe, inv_t);
    ThreadScreen sc;
    if constexpr (NOISE == NoiseSource::drawn) sc = screen_drawn_items<D, ITEMS>(v, ev, m_safe, inv_t, eps);
    else sc = screen_items<ORDER, D, ITEMS>(v, ev, m_safe, inv_t, eps);
    const TopTwo tile_q = block_top_two<D>(sc.q, q_smem);
    if (tile_decides(tile_q)) {
      // Exactly one thread holds the candidate: every other top is at most
      // tile_q.second < tile_q.top.
      if (sc.q.top == tile_q.top) store(to_id(Best{race_key<ORDER, D>(sc.xc, m_safe, inv_t, sc.ec, eps), sc.c}));
      return;
    }
    // Undecided (block-uniform, rare: masked or tiny tiles, near ties, noise
    // out of range): fold the tile exactly, reloading it rather than keeping
    // the items in registers across the reduction.
    t.load(a, v, ev);
    skip_far_draws<D, DrawnAs::noise>(v, ev, m_safe, inv_t);
    best = fold_items<ORDER, D, ITEMS, false>(v, ev, count, m_safe, inv_t, eps);
  }
  best = block_best<D>(to_id(best), smem_best);
  if (threadIdx.x == 0) store(best);
}

/// Greedy rows: the tile with the largest part_m, lowest tile on ties.
/// Sampling rows: keys part_key * exp((part_m - mm) * inv_t), best tile.
/// No clamp of the result: an escaped sentinel must show as out of range.
template <int THREADS, Defect D1>
__global__ __launch_bounds__(THREADS) void fused_stage2_kernel(Stage1Args s) {
  constexpr Defect D = D1 == Defect::tie_lane_order ? Defect::none : D1;  // stage 1's alone
  RACEORACLE_SHARED(unsigned, smem_max, 32);
  RACEORACLE_SHARED(OrderedBest, smem_best, 32);
  device::wait_for_prior_grid();  // stage 1's partials are complete and visible
  device::allow_next_grid();
  const SampleArgs& a = s.a;
  const std::int64_t row = blockIdx.x;
  const std::int64_t base = row * s.p.tiles;
  const int tiles = D == Defect::stage2_one_pass && s.p.tiles > THREADS ? THREADS : int(s.p.tiles);

  float mm = -INFINITY;
  for (int t = int(threadIdx.x); t < tiles; t += THREADS) mm = MaxOf<D>{}(mm, s.p.m[base + t]);
  mm = block_max<D>(mm, smem_max);

  const float T = a.temperatures[row];
  const bool greedy = is_greedy<D>(T, greedy_eps_of<D>(a));
  const float inv_t = inverse_temperature(T);
  const float mm_safe = guard_max<D>(mm);
  Best best = no_candidate();
  for (int t = int(threadIdx.x); t < tiles; t += THREADS) {
    const float pm = s.p.m[base + t];
    float key = pm;
    if (!greedy) {
      float scale = 1.0f;
      if (D == Defect::wrong_rescale) scale = expf(pm - mm_safe);
      else if (D == Defect::rescale_two_products) scale = expf(pm * inv_t - mm_safe * inv_t);
      else if (D != Defect::no_rescale) scale = expf(keys::rescale_exponent(pm, mm_safe, inv_t));
      key = s.p.key[base + t] * scale;
    }
    best = BetterOf<D>{}(best, Best{key, t});
  }
  best = block_best<D>(best, smem_best);
  if (threadIdx.x == 0) {
    int token = s.p.idx[base + best.idx];
    if (D == Defect::result_clamp) token = token < 0 ? 0 : token >= a.vocab ? int(a.vocab - 1) : token;
    a.tokens[row] = token;
    if (D == Defect::token_past_row && row == a.rows - 1) a.tokens[row + 1] = token;
  }
}

constexpr int kStage2Threads = 256;
static_assert(kStage2Threads % kBlockMultiple == 0, "every warp full (race.h)");

template <class Logit, ScalingOrder ORDER, NoiseSource NOISE, int BLOCK_V, int THREADS, Defect D>
hipError_t launch_stage1(const Stage1Args& s) {
  const dim3 grid(unsigned(s.p.tiles), unsigned(s.a.rows));
  return device::launch_chained(fused_stage1_kernel<Logit, ORDER, NOISE, BLOCK_V, THREADS, D>, grid, dim3(THREADS), s);
}

/// Mutants are built on the production (post-scale) order only: the pre-scale
/// kernel is compiled for `none` alone, and for tensor noise alone.
template <class Logit, ScalingOrder ORDER, NoiseSource NOISE, int BLOCK_V, int THREADS>
hipError_t by_defect(const Stage1Args& s, Defect d) {
  using Defects = std::conditional_t<ORDER == ScalingOrder::pre, DefectSet<Defect::none>,
                                     std::conditional_t<NOISE == NoiseSource::drawn, DrawnDefects, TensorDefects>>;
  return visit_defect(
      Defects{}, d, [&](auto D) { return launch_stage1<Logit, ORDER, NOISE, BLOCK_V, THREADS, decltype(D)::value>(s); },
      hipErrorInvalidValue);
}

}  // namespace

#if !defined(RACEORACLE_FUSED_PART) || RACEORACLE_FUSED_PART >= 0
template <class Logit, std::size_t I>
hipError_t fused_parts::stage1_at(const Stage1Args& s, ScalingOrder order, NoiseSource n, Defect d) {
  constexpr FusedConfig c = kFusedConfigs[I];
  if (order == ScalingOrder::pre) return by_defect<Logit, ScalingOrder::pre, NoiseSource::tensor, c.block_v, c.threads>(s, d);
  return n == NoiseSource::drawn ? by_defect<Logit, ScalingOrder::post, NoiseSource::drawn, c.block_v, c.threads>(s, d)
                                 : by_defect<Logit, ScalingOrder::post, NoiseSource::tensor, c.block_v, c.threads>(s, d);
}
#endif

#if defined(RACEORACLE_FUSED_PART) && RACEORACLE_FUSED_PART >= 0
// One part: the stage-1 kernels of one dtype and one tiling.
static_assert(RACEORACLE_FUSED_PART < fused_parts::kParts, "a part of kernels/CMakeLists.txt's list");
template hipError_t fused_parts::stage1_at<
    std::conditional_t<(RACEORACLE_FUSED_PART < std::size(kFusedConfigs)), std::uint16_t, float>,
    RACEORACLE_FUSED_PART % std::size(kFusedConfigs)>(const Stage1Args&, ScalingOrder, NoiseSource, Defect);
#else
namespace {

/// Stage 1 of the kFusedConfigs entry equal to `c`.
template <class Logit, std::size_t... I>
hipError_t by_config(const Stage1Args& s, const FusedConfig& c, ScalingOrder order, NoiseSource n, Defect d,
                     std::index_sequence<I...>) {
  hipError_t e = hipErrorInvalidValue;
  (void)((c == kFusedConfigs[I] ? (e = fused_parts::stage1_at<Logit, I>(s, order, n, d), true) : false) || ...);
  return e;
}

template <Defect D>
hipError_t launch_stage2(const Stage1Args& s) {
  return device::launch_chained(fused_stage2_kernel<kStage2Threads, D>, dim3(unsigned(s.a.rows)),
                                dim3(kStage2Threads), s);
}

Status status_of(hipError_t e, const char* what) {
  if (e == hipSuccess) return {};
  return Status::error(std::string(what) + ": " + hipGetErrorString(e));
}

std::string check_partials(const SampleArgs& a, const FusedConfig& c, const Partials& p) {
  if (!is_supported(c)) return "unsupported fused config; supported: " + supported_configs();
  if (!p.m || !p.key || !p.idx) return "partials pointers are null";
  if (p.tiles != tile_count(a.vocab, c)) return "partials hold " + std::to_string(p.tiles) + " tiles, the config needs " +
                                                std::to_string(tile_count(a.vocab, c));
  if (p.tiles > 0x7fffffff) return "too many tiles for one grid dimension";
  return {};
}

}  // namespace

Status fused_stage1(const SampleArgs& a, const FusedConfig& c, ScalingOrder order, NoiseSource n, Defect d,
                    const Partials& p) {
  if (std::string e = check_args(a, n); !e.empty()) return Status::error(e);
  if (std::string e = check_partials(a, c, p); !e.empty()) return Status::error(e);
  if (order == ScalingOrder::pre && (d != Defect::none || n != NoiseSource::tensor))
    return Status::error("the pre-scale kernel is built for tensor noise and no mutants");
  if (drawn_only(d) != (n == NoiseSource::drawn && d != Defect::none))
    return Status::error(std::string("defect ") + to_string(d) + " is not built for " + race::to_string(n) + " noise");
  const Stage1Args s{a, p};
  constexpr auto configs = std::make_index_sequence<std::size(kFusedConfigs)>{};
  const hipError_t e = a.dtype == Dtype::bf16 ? by_config<std::uint16_t>(s, c, order, n, d, configs)
                                              : by_config<float>(s, c, order, n, d, configs);
  return status_of(e, "fused stage 1");
}

Status fused_stage2(const SampleArgs& a, const FusedConfig& c, NoiseSource n, Defect d, const Partials& p) {
  if (std::string e = check_args(a, n); !e.empty()) return Status::error(e);
  if (std::string e = check_partials(a, c, p); !e.empty()) return Status::error(e);
  const Stage1Args s{a, p};
  // Stage 2 reads partials only: the drawn-noise defects are stage 1's.
  const Defect d2 = drawn_only(d) ? Defect::none : d;
  const hipError_t e =
      visit_defect(TensorDefects{}, d2, [&](auto D) { return launch_stage2<decltype(D)::value>(s); }, hipErrorInvalidValue);
  return status_of(e, "fused stage 2");
}
#endif

}  // namespace raceoracle::kernels
