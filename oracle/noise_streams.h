#pragma once
/// The oracle's replay of every drawn-noise stream (race/noise_streams.h):
/// Philox words from Random123, uniforms as the libraries compute them in
/// fp32, E in float64. Checked word for word against draws made by the real
/// libraries on a GPU (tests/oracle/known_answers/).
#include <cstdint>
#include <optional>
#include <string>

#include "race/noise_streams.h"

namespace raceoracle::oracle {

using race::NoiseStream;
using race::StreamKind;

/// Where a row's noise comes from: its seed and offset (torch's whole-tensor
/// draw: the tensor's; vllm-triton-gumbel: the offset is the position).
struct StreamPoint {
  std::uint64_t seed = 0, offset = 0;
  std::int64_t rows = 1, vocab = 1;  ///< the shape drawn over
  std::int64_t row = 0;
};

/// Word of id `id`: the 32-bit Philox output the stream's uniform is made of.
std::uint32_t stream_word(const NoiseStream& s, const StreamPoint& p, std::int64_t id);
/// Its uniform, exactly as the library rounds it in fp32.
float stream_uniform(const NoiseStream& s, std::uint32_t word);
/// E of a uniform, in float64, with the stream's special cases (torch: 2^-24
/// for u >= 1 - 2^-24); before any rounding to the stream's dtype.
double stream_noise_of_uniform(const NoiseStream& s, float u);
/// E of (row, id): the three above.
double stream_noise(const NoiseStream& s, const StreamPoint& p, std::int64_t id);
/// E of ids 0 .. vocab - 1 of p.row, each rounded to the nearest fp32, into `out`.
void stream_noise_row(const NoiseStream& s, const StreamPoint& p, float* out);

/// E of every row of a batch [rows, vocab] (`stride` floats apart) drawn at
/// each row's seed and offset, rounded to fp32, on `threads` threads (0: all
/// cores): stream_noise_row for each row, with torch's one draw over the
/// batch replayed call by call (each Philox call feeds four elements T apart).
void stream_noise_batch(const NoiseStream& s, const std::uint64_t* seeds, const std::uint64_t* offsets, std::int64_t rows,
                        std::int64_t vocab, float* out, std::int64_t stride, int threads = 0);

/// cuRAND's Philox: word `lane` of call `call` of curand4 after
/// curand_init(seed, subsequence, offset), for any offset (offset % 4 shifts
/// the words a call returns into the next counter).
std::uint32_t curand_word(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset, std::uint64_t call, int lane);
/// Triton's philox(seed, c0, c1, 0, 0) in 32-bit words, word 0 (tl.randint with a 64-bit offset c1:c0).
std::uint32_t triton_randint(std::uint64_t seed, std::uint64_t offset);

/// How far the kernel's E may lie from the oracle's fp32 E: relative `ulp`
/// (ulps of E, 2^-23 each) everywhere, plus `abs` where `abs_above` < E <=
/// `abs_below` (a fast log's absolute error for u >= 1/2; the cap 2^-24 below
/// it is set exactly). Derived in oracle/ERROR_MODEL.md, "A replayed stream's transform".
struct NoiseBound {
  double ulp = 0, abs = 0, abs_above = 0, abs_below = 0;
};
NoiseBound noise_bound(const NoiseStream& s);

/// The stream named `name` (race::kStreams), or nullopt.
std::optional<StreamKind> stream_named(const std::string& name);
/// "torch-cuda-exponential (one generator per row, bf16)": the name and the facts that matter.
std::string describe(const NoiseStream& s);

}  // namespace raceoracle::oracle
