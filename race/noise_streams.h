#pragma once
/// The family of drawn-noise streams (docs/SPEC.md §1 "Drawn noise",
/// docs/NOISE_STREAMS.md): each named, versioned and pinned to the library it
/// replays. A stream maps (seed, offset, the shape it was drawn over, row, id,
/// and device facts where its layout needs them) to a 32-bit word, the word to
/// a uniform, the uniform to E. The uniforms and transforms are written here
/// once, in fp32 exactly as the libraries compute them; the Philox words come
/// from Random123 in the oracle (oracle/noise_streams.h) and from
/// kernels/philox.h in a kernel that draws.
#include <cstdint>

#include "race/definition.h"
#include "race/noise.h"

namespace raceoracle::race {

enum class StreamKind : std::uint8_t {
  raceoracle_philox,  ///< race/noise.h: raceoracle's own layout (fused-philox)
  torch_exponential,  ///< PyTorch's CUDA exponential_ (curand Philox, grid-stride layout)
  aiter_hiprand,      ///< aiter's internal-noise kernels (hiprand Philox per thread, 4096 ids per call)
  flashinfer_curand,  ///< FlashInfer's sampling_from_logits (curand Philox per 4 ids, Gumbel)
  vllm_triton,        ///< vLLM Model Runner V2 (Triton Philox keyed by seed, position, token; Gumbel)
};

/// One stream's name and its newest version (the default of a declaration).
struct StreamInfo {
  StreamKind kind;
  const char* name;
  int latest;
};
inline constexpr StreamInfo kStreams[] = {
    {StreamKind::raceoracle_philox, "raceoracle-philox", 1},  {StreamKind::torch_exponential, "torch-cuda-exponential", 1},
    {StreamKind::aiter_hiprand, "aiter-hiprand", 1},          {StreamKind::flashinfer_curand, "flashinfer-curand", 2},
    {StreamKind::vllm_triton, "vllm-triton-gumbel", 2},
};
constexpr const StreamInfo& info(StreamKind k) { return kStreams[int(k)]; }
inline const char* to_string(StreamKind k) { return info(k).name; }

/// One version of a stream: the library version it describes and where that
/// was checked. A library that changes its layout or transform gets a new
/// version; the old one stays, so a sampler pinned to an older release is
/// still judged by what that release does (docs/NOISE_STREAMS.md).
struct StreamVersion {
  StreamKind kind;
  int version;
  const char* describes;
};
inline constexpr StreamVersion kStreamVersions[] = {
    {StreamKind::raceoracle_philox, 1, "docs/SPEC.md §1 (fused-philox)"},
    {StreamKind::torch_exponential, 1, "PyTorch 2.11 CUDA exponential_ (known answers drawn on an H200)"},
    {StreamKind::aiter_hiprand, 1, "aiter random_sample/mixed_sample (hiprand Philox layout, rocRAND uniform; read from code)"},
    {StreamKind::flashinfer_curand, 1,
     "the layout first read from FlashInfer's code: 4 ids a curand_init for every V, 64-bit subsequence (FlashInfer "
     "0.6.18's own kernel agrees only where V is a multiple of 4 or at most 2)"},
    {StreamKind::flashinfer_curand, 2,
     "FlashInfer 0.6.18 (fb28d72) sampling_from_logits: gcd(4, V) ids a curand_init, 32-bit row x V subsequence "
     "(known answers: the library's own tokens on an H100)"},
    {StreamKind::vllm_triton, 1,
     "vLLM Model Runner V2 gumbel_sample as read before its fp32 draw: E = -log(u + 1e-20) in float64 (Triton 3.6, "
     "known answers on an H200)"},
    {StreamKind::vllm_triton, 2,
     "vLLM Model Runner V2 gumbel_sample at 03f97cc: u = max(tl.rand, 4.6566127342e-10), E = -log1p(-u) in fp32 "
     "(Triton 3.6 on an H100)"},
};
/// The description of (kind, version), or nullptr if raceoracle knows no such version.
constexpr const char* stream_version_describes(StreamKind k, int version) {
  for (const StreamVersion& v : kStreamVersions)
    if (v.kind == k && v.version == version) return v.describes;
  return nullptr;
}

/// A declared stream and the facts its layout depends on.
struct NoiseStream {
  StreamKind kind = StreamKind::raceoracle_philox;
  /// The version of the stream (kStreamVersions); 0 is the newest (info(kind).latest).
  int version = 0;
  /// torch: one generator per row (`q[i].exponential_(generator=g_i)`), each
  /// row a tensor of V elements; false: one draw over the whole [rows, V]
  /// tensor, whose layout then depends on the batch's shape and the device.
  bool per_row = false;
  /// The dtype E is drawn into (torch: bf16 rounds the fp32 E to nearest even).
  Dtype dtype = Dtype::f32;
  /// torch's grid: min(ceil(n / 256), sm_count * (threads_per_sm / 256)) blocks (H100/H200: 132 x 2048).
  int sm_count = 132;
  int threads_per_sm = 2048;
  constexpr bool operator==(const NoiseStream& o) const {
    return kind == o.kind && effective_version() == o.effective_version() && per_row == o.per_row && dtype == o.dtype &&
           sm_count == o.sm_count && threads_per_sm == o.threads_per_sm;
  }
  constexpr bool operator!=(const NoiseStream& o) const { return !(*this == o); }
  constexpr int effective_version() const { return version > 0 ? version : info(kind).latest; }
  /// One seed and offset for the whole batch: torch's one draw over the
  /// tensor, and the kernels that take one generator state per launch and
  /// put the row in the subsequence (aiter, FlashInfer).
  constexpr bool one_state_per_batch() const {
    return (kind == StreamKind::torch_exponential && !per_row) || kind == StreamKind::aiter_hiprand ||
           kind == StreamKind::flashinfer_curand;
  }
};

/// A row's noise depends only on its own request (its seed and offset), not on its place in the batch:
/// torch with a generator per row, vLLM's stream keyed by (seed, position). The others put the row's
/// index into the draw (raceoracle-philox's counter, the subsequence of one state per batch).
constexpr bool keyed_by_request(const NoiseStream& s) {
  return (s.kind == StreamKind::torch_exponential && s.per_row) || s.kind == StreamKind::vllm_triton;
}

/// An offset the stream's generator can hold: torch's generator (which also
/// seeds aiter's and FlashInfer's kernels) advances 4 words at a time.
constexpr std::uint64_t stream_offset(const NoiseStream& s, std::uint64_t offset) {
  return s.kind == StreamKind::torch_exponential || s.kind == StreamKind::aiter_hiprand ||
                 s.kind == StreamKind::flashinfer_curand
             ? offset & ~std::uint64_t(3)
             : offset;
}

// ---- uniforms: a word to fp32, as each library computes it -------------------------------------

/// cuRAND's curand_uniform: fl(fl(w) 2^-32 + 2^-33), in (0, 1]; 1 for w >= 2^32 - 128.
constexpr float curand_uniform(std::uint32_t w) { return float(w) * 0x1p-32f + 0x1p-33f; }
/// rocRAND's uniform (hiprand on AMD): fl(2^-32 + fl(w) 2^-32), in (0, 1].
constexpr float rocrand_uniform(std::uint32_t w) { return 0x1p-32f + float(w) * 0x1p-32f; }
/// Triton's uint_to_uniform_float: w as int32, a negative x becomes -x - 1, times 4.6566127342e-10; in [0, 1).
constexpr float triton_uniform(std::uint32_t w) {
  const std::int32_t x = std::int32_t(w);
  const std::int32_t y = x < 0 ? -(x + 1) : x;
  return float(y) * 4.6566127342e-10f;
}

/// The uniform past which torch's exponential transform returns 2^-24 instead
/// of -log(u) (its fast __logf would underflow): u >= 1 - 2^-24, for fp32 and
/// bf16 outputs alike (the transform runs in fp32). aiter's copy returns -2^-24.
inline constexpr float kTorchUniformCap = 1.0f - 0x1p-24f;
inline constexpr float kTorchCapNoise = 0x1p-24f;

// ---- layouts --------------------------------------------------------------------------------

/// torch: threads of the grid-stride distribution kernel for `numel` elements.
inline constexpr int kTorchBlock = 256, kTorchWordsPerCall = 4;
constexpr std::uint64_t torch_threads(std::uint64_t numel, const NoiseStream& s) {
  const std::uint64_t blocks = (numel + kTorchBlock - 1) / kTorchBlock;
  const std::uint64_t cap = std::uint64_t(s.sm_count) * std::uint64_t(s.threads_per_sm / kTorchBlock);
  return (blocks < cap ? blocks : cap) * kTorchBlock;
}
/// torch: how far one draw of `numel` elements advances the generator's offset.
constexpr std::uint64_t torch_offset_advance(std::uint64_t numel, const NoiseStream& s) {
  return ((numel - 1) / (torch_threads(numel, s) * kTorchWordsPerCall) + 1) * kTorchWordsPerCall;
}

/// A curand/hiprand Philox draw: curand_init(seed, subsequence, offset), then
/// `call` calls of curand4; the word is component `lane` of the last.
struct CurandPosition {
  std::uint64_t subsequence, call;
  int lane;
};
/// torch: linear element li of n, drawn by thread li mod T, call li / 4T, lane (li mod 4T) / T.
constexpr CurandPosition torch_position(std::uint64_t li, std::uint64_t numel, const NoiseStream& s) {
  const std::uint64_t T = torch_threads(numel, s);
  return {li % T, li / (kTorchWordsPerCall * T), int((li % (kTorchWordsPerCall * T)) / T)};
}
/// aiter: id n of row r: subsequence r * 1024 + (n / 4) mod 1024, call n / 4096, lane n mod 4.
inline constexpr int kAiterThreads = 1024;
constexpr CurandPosition aiter_position(std::uint64_t row, std::uint64_t n) {
  return {row * kAiterThreads + (n / 4) % kAiterThreads, n / (4 * kAiterThreads), int(n % 4)};
}
/// FlashInfer's ids a curand_init: its kernel's vector width gcd(16 / sizeof(float), V) (its binding races
/// fp32 logits); version 1: 4 for every V.
constexpr std::uint64_t flashinfer_width(std::uint64_t vocab, int version) {
  if (version == 1) return 4;
  return vocab % 4 == 0 ? 4 : vocab % 2 == 0 ? 2 : 1;
}
/// FlashInfer: id n of row r of V: subsequence r V + W floor(n / W), first call, lane n mod W, with W its
/// width. Version 2 forms the subsequence in 32 bits before widening (`bx * d + ...` in uint32), as the
/// library does: past 2^32 it wraps onto row 0's (FIELD_BUGS #29); version 1 in 64 bits.
constexpr CurandPosition flashinfer_position(std::uint64_t row, std::uint64_t vocab, std::uint64_t n, int version) {
  const std::uint64_t w = flashinfer_width(vocab, version), sub = row * vocab + w * (n / w);
  return {version == 1 ? sub : sub & 0xFFFFFFFFu, 0, int(n % w)};
}

/// vLLM Model Runner V2, version 2: the smallest positive tl.rand, to which it clamps u.
inline constexpr float kTritonRandMin = 4.6566127342e-10f;

}  // namespace raceoracle::race
