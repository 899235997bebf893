#pragma once
/// Host API of the race kernels (SPEC §2). Plain C++: callers never see HIP.
/// All pointers are device pointers (host memory on the cpu backend).
#include <cstdint>
#include <string>

#include "kernels/defect.h"
#include "race/definition.h"
#include "race/noise.h"
#include "race/verify.h"

namespace raceoracle::kernels {

using race::Dtype;
using race::NoiseSource;
using race::ScalingOrder;

struct SampleArgs {
  const void* logits = nullptr;  ///< [rows, vocab] of dtype, row stride logit_stride
  Dtype dtype = Dtype::bf16;
  std::int64_t rows = 0;
  std::int64_t vocab = 0;
  std::int64_t logit_stride = 0;  ///< elements; 64-bit offsets
  const float* noise = nullptr;   ///< [rows, vocab], row stride noise_stride (tensor noise)
  std::int64_t noise_stride = 0;
  const std::uint64_t* seeds = nullptr;    ///< [rows]: each row's Philox seed (drawn noise, race/noise.h)
  const std::uint64_t* offsets = nullptr;  ///< [rows]: each row's Philox offset (drawn noise)
  const float* temperatures = nullptr;  ///< [rows]
  std::int32_t* tokens = nullptr;       ///< [rows], written
  /// [rows]: each row's top-k, top-p and min-p (SPEC §9), read by the filtered
  /// kernels alone; null: no row is filtered.
  const race::RowFilter* filters = nullptr;
  float eps = race::kDefaultEps;
  float greedy_eps = race::kDefaultGreedyEps;
};

/// The fused kernel's tiling: BLOCK_V ids per stage-1 program, THREADS each.
/// 4096 is the default: fastest of 1024/2048/4096 on the H200 from 64 rows up,
/// before and after tuning (bench/README.md, run h200-step8-block-v).
struct FusedConfig {
  int block_v = 4096;
  int threads = 256;
};
constexpr bool operator==(const FusedConfig& a, const FusedConfig& b) {
  return a.block_v == b.block_v && a.threads == b.threads;
}
/// The tilings compiled in, the one list that dispatch, validation, the
/// generators and the CLI derive from: {128, 64} for cheap tile boundaries in
/// tests, {1024, 2048, 4096} x 256 for production.
inline constexpr FusedConfig kFusedConfigs[] = {{128, 64}, {1024, 256}, {2048, 256}, {4096, 256}};
bool is_supported(const FusedConfig& c);
std::string supported_configs();  ///< "block_v/threads 128/64, ..." for messages

/// Stage-1 partials, [rows, tiles] each, device pointers.
struct Partials {
  float* m = nullptr;
  float* key = nullptr;
  std::int32_t* idx = nullptr;
  std::int64_t tiles = 0;
};
std::int64_t tile_count(std::int64_t vocab, const FusedConfig& c);
/// The tiling for a batch of `rows` rows where the caller leaves it to the
/// kernel (`raceoracle bench`'s default): 1024-id tiles up to 8 rows, so that
/// a few rows' tiles spread over the SMs, the default 4096 from 16 rows on
/// (measured replayed from graphs: bench/README.md, "Replayed from graphs").
FusedConfig tiling_for_rows(std::int64_t rows);

struct Status {
  bool ok = true;
  std::string message;
  static Status error(std::string m) { return {false, std::move(m)}; }
};

/// Empty when `a` can be launched by a kernel whose noise comes from `n`;
/// otherwise what is wrong with it.
std::string check_args(const SampleArgs& a, NoiseSource n = NoiseSource::tensor);

Status fused_stage1(const SampleArgs& a, const FusedConfig& c, ScalingOrder order, NoiseSource n, Defect d,
                    const Partials& p);
Status fused_stage2(const SampleArgs& a, const FusedConfig& c, NoiseSource n, Defect d, const Partials& p);
/// The defects the baseline is built with (its steps have no tiles, partials
/// or rescale, so only these concern it).
using BaselineDefects = BuiltDefects<Defect::strict_greedy, Defect::high_id_tie, Defect::no_rescale>;
/// The baseline's race launch: one workgroup of this many threads per row
/// (the most loads in flight a row can have), each with an online max.
inline constexpr int kBaselineRaceThreads = 1024;
/// The five-launch baseline. `scratch` holds 3 * rows * chunks + 3 * rows
/// 4-byte words (baseline_scratch_bytes).
Status sample_baseline(const SampleArgs& a, Defect d, void* scratch);
std::size_t baseline_scratch_bytes(std::int64_t rows, std::int64_t vocab);

/// The filtered race (SPEC §9; kernels/FILTERED.md): one workgroup of this
/// many threads per row in both filtered kernels.
inline constexpr int kFilteredThreads = 256;
/// The defects the fused filtered kernel is built with: the field's filter
/// bugs (FILTER_ONLY in kernels/defect.h), and a tie rule.
using FilteredDefects = BuiltDefects<Defect::joint_mass, Defect::crossing_dropped, Defect::topk_exactly_k,
                                     Defect::filters_row0, Defect::mass_bf16, Defect::untempered_filter, Defect::high_id_tie>;
/// The fused filtered race: each filter's threshold found by a bitwise search
/// over the logits' ordered bits (no sort), then the race over the kept ids.
Status sample_filtered_select(const SampleArgs& a, Defect d);
/// Its baseline as engines write it: sort each row by logit (a stable radix
/// sort), cumulative sum, mask, race. `scratch`: filtered_sort_scratch_bytes.
Status sample_filtered_sort(const SampleArgs& a, void* scratch);
std::size_t filtered_sort_scratch_bytes(std::int64_t rows, std::int64_t vocab);

/// A batch of speculative-decoding verify requests (SPEC §11), each with the
/// same number of drafts. Device pointers.
struct VerifyArgs {
  const void* target = nullptr;  ///< [requests, drafts + 1, vocab] logits of dtype, rows target_stride apart
  Dtype dtype = Dtype::bf16;
  std::int64_t requests = 0;
  std::int64_t drafts = 0;  ///< k, at most race::kMaxDrafts
  std::int64_t vocab = 0;
  std::int64_t target_stride = 0;          ///< elements between consecutive target rows
  const std::int32_t* draft_ids = nullptr;  ///< [requests, drafts]
  /// [requests]: request r's own count k_r in [0, drafts] (its drafts the
  /// first k_r of its row, its bonus row target row k_r, its ids k_r + 1,
  /// then the placeholder); null: every request has `drafts`.
  const std::int32_t* draft_counts = nullptr;
  const float* draft_probs = nullptr;       ///< [requests, drafts, vocab], or null: deterministic drafts
  const double* uniforms = nullptr;         ///< [requests, drafts]
  const float* recovery_noise = nullptr;    ///< [requests, vocab]
  const float* bonus_noise = nullptr;       ///< [requests, vocab]
  const float* temperatures = nullptr;      ///< [requests]
  /// [requests]: each request's filters (SPEC §9), applied to every target
  /// row of a sampling request, the probabilities renormalised over the kept
  /// set (the draft probabilities taken as given); null: none.
  const race::RowFilter* filters = nullptr;
  std::int32_t* tokens = nullptr;           ///< [requests, drafts + 1], written: a + 1 ids, then race::kVerifyPlaceholder
  float eps = race::kDefaultEps;
  float greedy_eps = race::kDefaultGreedyEps;
};
/// Empty when `a` can be launched; otherwise what is wrong with it.
std::string check_verify_args(const VerifyArgs& a);
/// The verify kernels' workgroup size: a target row's (or a tile's)
/// programs, and a request's, which walks a whole row alone: on a GPU 1024,
/// the most loads in flight a workgroup can have; on the cpu backend 256 (the
/// same template: a block of fibers costs in proportion to its threads, and
/// 1024 made the verify tests ten times slower there).
inline constexpr int kVerifyThreads = 256;
#if defined(RACEORACLE_BACKEND_CPU)
inline constexpr int kVerifyRequestThreads = 256;
#else
inline constexpr int kVerifyRequestThreads = 1024;
#endif
/// The fused verify kernel's tile: ids per first-launch program.
inline constexpr int kVerifyTile = 1024;
/// The verify step as engines write it (kernels/verify.hip): the target's
/// probabilities materialised (one launch, a workgroup per target row), then
/// the acceptance chain and the residual or bonus race (a workgroup per
/// request). `scratch`: verify_scratch_bytes.
Status verify_probs(const VerifyArgs& a, Defect d, void* scratch);
std::size_t verify_scratch_bytes(std::int64_t requests, std::int64_t drafts, std::int64_t vocab);
/// The verify step fused (kernels/verify_fused.hip): per (target row, tile)
/// the tile's max and sum, then per request the chain from the partials and
/// the residual or bonus race, the probabilities recomputed from the logits,
/// never written. `scratch`: verify_fused_scratch_bytes.
Status verify_fused(const VerifyArgs& a, Defect d, void* scratch);
std::size_t verify_fused_scratch_bytes(std::int64_t requests, std::int64_t drafts, std::int64_t vocab);

}  // namespace raceoracle::kernels
