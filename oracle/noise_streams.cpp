#include "oracle/noise_streams.h"

#include <Random123/philox.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "oracle/drawn_noise.h"

namespace raceoracle::oracle {
namespace {

using Philox = r123::Philox4x32_R<10>;

Philox::ctr_type philox(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3, std::uint32_t k0,
                        std::uint32_t k1) {
  return Philox{}(Philox::ctr_type{{c0, c1, c2, c3}}, Philox::key_type{{k0, k1}});
}

std::uint32_t lo(std::uint64_t v) { return std::uint32_t(v); }
std::uint32_t hi(std::uint64_t v) { return std::uint32_t(v >> 32); }

/// The four words of curand Philox `steps` counters past `base` (the low 64
/// bits: curand_init's offset / 4) in subsequence `subsequence` (the high 64
/// bits, which take the carry).
Philox::ctr_type curand_output(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t base, std::uint64_t steps) {
  const std::uint64_t low = base + steps, high = subsequence + (low < base ? 1 : 0);
  return philox(lo(low), hi(low), lo(high), hi(high), lo(seed), hi(seed));
}

std::uint32_t curand_at(std::uint64_t seed, const race::CurandPosition& p, std::uint64_t offset) {
  return curand_word(seed, p.subsequence, offset, p.call, p.lane);
}

/// torch's draw of `numel` elements at (seed, offset), threads [t0, t1): each
/// Philox call feeds the four elements c 4T + k T + t; put(li, E) stores one.
/// Calls outermost, so consecutive threads write consecutive elements.
template <class Put>
void torch_draw(const NoiseStream& s, std::uint64_t seed, std::uint64_t offset, std::uint64_t numel, std::uint64_t t0,
                std::uint64_t t1, const Put& put) {
  const std::uint64_t T = race::torch_threads(numel, s), W = race::kTorchWordsPerCall;
  const std::uint64_t calls = (numel + W * T - 1) / (W * T), base = offset / 4;
  for (std::uint64_t c = 0; c < calls; ++c)
    for (std::uint64_t t = t0; t < t1; ++t) {
      const auto w = curand_output(seed, t, base, c);
      for (std::uint64_t k = 0; k < W; ++k) {
        const std::uint64_t li = c * W * T + k * T + t;
        if (li >= numel) break;
        put(li, float(stream_noise_of_uniform(s, race::curand_uniform(w[k]))));
      }
    }
}

}  // namespace

std::uint32_t curand_word(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset, std::uint64_t call, int lane) {
  // curand_init: counter = (offset / 4, subsequence) as 128 bits, and offset % 4
  // words of the first output already used; each curand4 call moves on by one counter.
  const std::uint64_t skip = offset % 4 + std::uint64_t(lane);
  return curand_output(seed, subsequence, offset / 4, call + skip / 4)[skip % 4];
}

std::uint32_t triton_randint(std::uint64_t seed, std::uint64_t offset) {
  return philox(lo(offset), hi(offset), 0, 0, lo(seed), hi(seed))[0];
}

std::uint32_t stream_word(const NoiseStream& s, const StreamPoint& p, std::int64_t id) {
  const auto row = std::uint64_t(p.row), n = std::uint64_t(id);
  switch (s.kind) {
    case StreamKind::raceoracle_philox: return drawn_word(p.seed, p.offset, std::uint32_t(p.row), std::uint32_t(id));
    case StreamKind::torch_exponential: {
      const std::uint64_t numel = s.per_row ? std::uint64_t(p.vocab) : std::uint64_t(p.rows) * std::uint64_t(p.vocab);
      const std::uint64_t li = s.per_row ? n : row * std::uint64_t(p.vocab) + n;
      return curand_at(p.seed, race::torch_position(li, numel, s), p.offset);
    }
    case StreamKind::aiter_hiprand: return curand_at(p.seed, race::aiter_position(row, n), p.offset);
    case StreamKind::flashinfer_curand:
      return curand_at(p.seed, race::flashinfer_position(row, std::uint64_t(p.vocab), n, s.effective_version()), p.offset);
    case StreamKind::vllm_triton: return triton_randint(triton_randint(p.seed, p.offset), n);
  }
  throw std::logic_error("stream_word: unknown stream");
}

float stream_uniform(const NoiseStream& s, std::uint32_t w) {
  switch (s.kind) {
    case StreamKind::raceoracle_philox: return race::uniform_of(w);
    case StreamKind::torch_exponential:
    case StreamKind::flashinfer_curand: return race::curand_uniform(w);
    case StreamKind::aiter_hiprand: return race::rocrand_uniform(w);
    case StreamKind::vllm_triton:
      return s.effective_version() == 1 ? race::triton_uniform(w) : std::max(race::triton_uniform(w), race::kTritonRandMin);
  }
  throw std::logic_error("stream_uniform: unknown stream");
}

double stream_noise_of_uniform(const NoiseStream& s, float u) {
  switch (s.kind) {
    case StreamKind::raceoracle_philox: return -std::log(double(u));
    case StreamKind::torch_exponential:
    case StreamKind::aiter_hiprand: return u >= race::kTorchUniformCap ? double(race::kTorchCapNoise) : -std::log(double(u));
    case StreamKind::flashinfer_curand: return -std::log(double(u) * (1 - 0x1p-23));  // u (1 - 2^-23) < 1: E > 0
    case StreamKind::vllm_triton:  // v1: u = 0 is reachable, E = 46.05; v2: u in [2^-31, 1 - 2^-24]
      return s.effective_version() == 1 ? -std::log(double(u) + 1e-20) : -std::log1p(-double(u));
  }
  throw std::logic_error("stream_noise_of_uniform: unknown stream");
}

double stream_noise(const NoiseStream& s, const StreamPoint& p, std::int64_t id) {
  return stream_noise_of_uniform(s, stream_uniform(s, stream_word(s, p, id)));
}

void stream_noise_row(const NoiseStream& s, const StreamPoint& p, float* out) {
  if (s.kind == StreamKind::raceoracle_philox)
    return drawn_noise_row(p.seed, p.offset, std::uint32_t(p.row), p.vocab, out);
  if (s.kind == StreamKind::torch_exponential && s.per_row && p.offset % 4 == 0) {  // torch offsets: multiples of 4
    const auto V = std::uint64_t(p.vocab);
    return torch_draw(s, p.seed, p.offset, V, 0, race::torch_threads(V, s), [&](std::uint64_t li, float e) { out[li] = e; });
  }
  for (std::int64_t i = 0; i < p.vocab; ++i) out[i] = float(stream_noise(s, p, i));
}

void stream_noise_batch(const NoiseStream& s, const std::uint64_t* seeds, const std::uint64_t* offsets, std::int64_t rows,
                        std::int64_t vocab, float* out, std::int64_t stride, int threads) {
  if (rows <= 0 || vocab <= 0) return;
  const int n_threads = std::max(1, threads > 0 ? threads : int(std::thread::hardware_concurrency()));
  auto parallel = [&](std::int64_t items, const std::function<void(std::int64_t)>& work) {
    std::vector<std::thread> pool;
    for (int w = 0; w < std::min<std::int64_t>(n_threads, items); ++w)
      pool.emplace_back([&, w] {
        for (std::int64_t i = w; i < items; i += n_threads) work(i);
      });
    for (auto& t : pool) t.join();
  };
  // Row by row, except torch's one draw over the batch (at an offset torch can hold).
  if (s.kind != StreamKind::torch_exponential || s.per_row || offsets[0] % 4 != 0) {
    parallel(rows, [&](std::int64_t r) {
      stream_noise_row(s, {seeds[r], offsets[r], rows, vocab, r}, out + r * stride);
    });
    return;
  }
  // torch, one draw over the batch: threads split into chunks, each replaying its calls.
  const std::uint64_t n = std::uint64_t(rows) * std::uint64_t(vocab), T = race::torch_threads(n, s);
  constexpr std::uint64_t kChunk = 4096;
  parallel(std::int64_t((T + kChunk - 1) / kChunk), [&](std::int64_t chunk) {
    const std::uint64_t t0 = std::uint64_t(chunk) * kChunk;
    torch_draw(s, seeds[0], offsets[0], n, t0, std::min(T, t0 + kChunk), [&](std::uint64_t li, float e) {
      out[std::int64_t(li / std::uint64_t(vocab)) * stride + std::int64_t(li % std::uint64_t(vocab))] = e;
    });
  });
}

NoiseBound noise_bound(const NoiseStream& s) {
  // A fast logf (CUDA __logf; assumed alike for AMD's and FlashInfer's log2
  // approximations): within 2^-21.41 absolute for u in [1/2, 2] (E <= ln 2)
  // and 3 ulps elsewhere (documented); measured on an H200 over every fp32 u
  // in (0, 1]: 2^-22.45 and 3.34 ulps of log(u) (a result near a power of two
  // counts ulps of the binade below), so 4 ulps. Plus 0.5 ulp for the oracle's
  // rounding of E to fp32. A bf16 output rounds that once more: (1 + r)(1 + 2^-8) - 1
  // relative, the absolute term times 1 + 2^-8 (oracle/ERROR_MODEL.md, "A replayed stream's transform").
  constexpr double kFastLogAbs = 3.6e-7;  // >= 2^-21.41 = 3.5957e-7
  constexpr double kFastLogUlp = 4.5, kBf16 = 0x1p-8;
  const bool bf16 = s.dtype == race::Dtype::bf16;
  const double fast_ulp = bf16 ? ((1 + kFastLogUlp * 0x1p-23) * (1 + kBf16) - 1) / 0x1p-23 : kFastLogUlp;
  const double fast_abs = bf16 ? kFastLogAbs * (1 + kBf16) : kFastLogAbs;
  switch (s.kind) {
    case StreamKind::raceoracle_philox: return {race::kDrawnNoiseUlp, 0, 0, 0};
    case StreamKind::torch_exponential:
    case StreamKind::aiter_hiprand:
    case StreamKind::flashinfer_curand: return {fast_ulp, fast_abs, double(race::kTorchCapNoise), 0.6931471805599453 * (1 + 0x1p-20)};
    case StreamKind::vllm_triton:  // v1: E in float64 from an exact u, only the oracle's rounding; v2: libdevice's
      return {s.effective_version() == 1 ? 0.5 : 1.5, 0, 0, 0};  // fp32 log1pf (1 ulp, documented) + that rounding
  }
  throw std::logic_error("noise_bound: unknown stream");
}

std::optional<StreamKind> stream_named(const std::string& name) {
  for (const race::StreamInfo& i : race::kStreams)
    if (name == i.name) return i.kind;
  return std::nullopt;
}

std::string describe(const NoiseStream& s) {
  std::string facts;
  if (s.kind == StreamKind::torch_exponential)
    facts = s.per_row ? "one generator per row" : fmt::format("one draw over the batch, {} SMs x {} threads", s.sm_count, s.threads_per_sm);
  if (s.dtype == race::Dtype::bf16) facts += facts.empty() ? "bf16" : ", bf16";
  const std::string name = fmt::format("{} v{}", race::to_string(s.kind), s.effective_version());
  return facts.empty() ? name : fmt::format("{} ({})", name, facts);
}

}  // namespace raceoracle::oracle
