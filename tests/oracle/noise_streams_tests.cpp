// The streams replayed on the CPU against draws made by the real libraries
// on an H200 (tests/oracle/known_answers/draw_known_answers.py): every
// uniform word for word; every E within the transform's bound, the largest
// observed error over the bound printed as [tightness].
#include "oracle/noise_streams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "protocol/safetensors.h"
#include "race/bf16.h"

namespace raceoracle::oracle {
namespace {

protocol::Safetensors fixture(const char* name) {
  return protocol::read_safetensors(std::string(KNOWN_ANSWERS_DIR) + "/" + name);
}
std::uint64_t meta(const protocol::Safetensors& f, const std::string& key) {
  return std::stoull(f.metadata.at(key));
}
template <class T>
std::vector<T> raw(const protocol::Tensor& t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

/// |got - E| against the bound of a kernel's E, E the oracle's fp32 noise; the ratio (<= 1: inside).
double bound_ratio(const NoiseBound& b, float oracle_e, double got) {
  const double e = double(oracle_e);
  const double allowed = b.ulp * 0x1p-23 * e + (e > b.abs_above && e <= b.abs_below ? b.abs : 0.0);
  return std::abs(got - double(oracle_e)) / allowed;
}

struct TorchCheck {
  double worst_f32 = 0, worst_bf16 = 0;
  std::int64_t checked = 0, exact = 0;
};

void check_torch(const protocol::Safetensors& f, const std::string& name, const NoiseStream& s, StreamPoint p, TorchCheck& out) {
  const auto index = f.require(name + ".index").as_i64();
  const auto uniform = raw<float>(f.require(name + ".uniform"));
  const auto expo = raw<float>(f.require(name + ".exponential"));
  const NoiseBound b = noise_bound(s);
  NoiseStream sb = s;
  sb.dtype = race::Dtype::bf16;
  const NoiseBound bb = noise_bound(sb);
  const bool bf16 = f.has(name + ".exponential_bf16");
  const auto expo_bf16 = bf16 ? raw<std::uint16_t>(f.require(name + ".exponential_bf16")) : std::vector<std::uint16_t>{};
  for (std::size_t k = 0; k < index.size(); ++k) {
    const std::int64_t li = index[k];
    const std::int64_t row = s.per_row ? p.row : li / p.vocab, id = s.per_row ? li : li % p.vocab;
    StreamPoint q = p;
    q.row = row;
    const float u = stream_uniform(s, stream_word(s, q, id));
    // torch's uniform_ maps u = 1 to 0 ([from, to) bounds); its exponential_ sees the 1.
    const float want = uniform[k] == 0.0f ? 1.0f : uniform[k];
    ASSERT_EQ(u, want) << name << " element " << li;
    const float e = float(stream_noise_of_uniform(s, u));
    out.exact += expo[k] == e;
    out.worst_f32 = std::max(out.worst_f32, bound_ratio(b, e, expo[k]));
    if (bf16) out.worst_bf16 = std::max(out.worst_bf16, bound_ratio(bb, e, race::widen_bf16(expo_bf16[k])));
    ++out.checked;
  }
}

TEST(NoiseStreams, TorchWholeTensorDrawsReplayWordForWord) {
  const auto f = fixture("torch_cuda_exponential.safetensors");
  NoiseStream s{StreamKind::torch_exponential};
  s.sm_count = int(meta(f, "sm_count"));
  s.threads_per_sm = int(meta(f, "max_threads_per_sm"));
  TorchCheck c;
  for (const char* name : {"whole", "whole_small", "whole_offset"}) {
    const std::string n = name;
    const StreamPoint p{meta(f, n + ".seed"), meta(f, n + ".offset"), std::int64_t(meta(f, n + ".rows")),
                        std::int64_t(meta(f, n + ".vocab")), 0};
    check_torch(f, n, s, p, c);
    EXPECT_EQ(race::torch_offset_advance(std::uint64_t(p.rows * p.vocab), s), meta(f, n + ".offset_after") - p.offset) << n;
  }
  std::printf("[tightness] torch-cuda-exponential: %lld uniforms identical; E (GPU __logf) identical to the replay in "
              "%.1f%%, worst error over bound %.3f (fp32), %.3f (bf16)\n",
              (long long)c.checked, 100.0 * double(c.exact) / double(c.checked), c.worst_f32, c.worst_bf16);
  EXPECT_LE(c.worst_f32, 1.0);
  EXPECT_LE(c.worst_bf16, 1.0);
  EXPECT_GT(c.worst_f32, 0.1) << "the bound is far looser than the GPU's error";
}

TEST(NoiseStreams, TorchPerRowGeneratorsReplayWordForWord) {
  const auto f = fixture("torch_cuda_exponential.safetensors");
  NoiseStream s{StreamKind::torch_exponential};
  s.per_row = true;
  TorchCheck c;
  for (int r = 0; r < 3; ++r) {
    const std::string n = "row" + std::to_string(r);
    check_torch(f, n, s, StreamPoint{meta(f, n + ".seed"), meta(f, n + ".offset"), 3, std::int64_t(meta(f, n + ".vocab")), r}, c);
  }
  EXPECT_LE(c.worst_f32, 1.0);
  EXPECT_GT(c.checked, 10000);
}

TEST(NoiseStreams, CurandPhiloxWordsAndUniformsForAnyOffset) {
  const auto f = fixture("curand_philox.safetensors");
  for (int d = 0; d < 4; ++d) {
    const std::string n = "draw" + std::to_string(d);
    const std::uint64_t seed = meta(f, n + ".seed"), offset = meta(f, n + ".offset");
    const auto subs = raw<std::uint64_t>(f.require(n + ".subsequence"));
    const auto words = raw<std::uint32_t>(f.require(n + ".word"));
    const auto unis = raw<float>(f.require(n + ".uniform"));
    ASSERT_EQ(words.size(), subs.size() * 12);
    for (std::size_t i = 0; i < subs.size(); ++i)
      for (int call = 0; call < 3; ++call)
        for (int lane = 0; lane < 4; ++lane) {
          const std::size_t k = (i * 3 + std::size_t(call)) * 4 + std::size_t(lane);
          const std::uint32_t w = curand_word(seed, subs[i], offset, std::uint64_t(call), lane);
          ASSERT_EQ(w, words[k]) << n << " subsequence " << subs[i] << " call " << call << " lane " << lane;
          ASSERT_EQ(race::curand_uniform(w), unis[k]) << n;
        }
  }
}

TEST(NoiseStreams, TritonPhiloxAsModelRunnerV2KeysIt) {
  const auto f = fixture("triton_philox.safetensors");
  const auto seeds = f.require("seed").as_i64(), pos = f.require("position").as_i64(), word = f.require("word").as_i64();
  const auto& ut = f.require("uniform");
  const auto uni = raw<float>(ut), gum = raw<float>(f.require("gumbel"));
  const std::int64_t rows = ut.shape[0], V = ut.shape[1];
  const NoiseStream s{StreamKind::vllm_triton, 1};  // the draw as Model Runner V2 wrote it until 2026
  const NoiseBound b = noise_bound(s);
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    ASSERT_EQ(triton_randint(std::uint64_t(seeds[r]), std::uint64_t(pos[r])), std::uint32_t(word[r])) << "row " << r;
    const StreamPoint p{std::uint64_t(seeds[r]), std::uint64_t(pos[r]), rows, V, r};
    for (std::int64_t i = 0; i < V; ++i) {
      const float u = stream_uniform(s, stream_word(s, p, i));
      ASSERT_EQ(u, uni[std::size_t(r * V + i)]) << "row " << r << " id " << i;
      // The sampler's Gumbel g = -log(E + 1e-20) in float64, rounded to fp32;
      // judged as the log-domain race on the oracle's fp32 E (noise_bound).
      const double e = stream_noise_of_uniform(s, u);
      EXPECT_EQ(float(-std::log(e + 1e-20)), gum[std::size_t(r * V + i)]) << "row " << r << " id " << i;
      worst = std::max(worst, bound_ratio(b, float(e), e));
    }
  }
  EXPECT_LE(worst, 1.0);
}

/// How one version's replay reads the tokens FlashInfer's kernel chose on zero logits.
struct TokenReading {
  int rows = 0, argmin = 0, ambiguous = 0;  ///< the replay's argmin E is the token / within the transform's bound of it
};
TokenReading read_flashinfer_tokens(const protocol::Safetensors& f, const std::string& name, int version) {
  const NoiseStream s{StreamKind::flashinfer_curand, version};
  const NoiseBound b = noise_bound(s);
  const auto tokens = raw<std::int32_t>(f.require(name + ".token"));
  const auto V = std::int64_t(meta(f, name + ".vocab")), rows = std::int64_t(meta(f, name + ".rows"));
  const auto first = std::int64_t(meta(f, name + ".first"));
  TokenReading out;
  std::vector<float> e(static_cast<std::size_t>(V));
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    stream_noise_row(s, StreamPoint{meta(f, name + ".seed"), meta(f, name + ".offset"), rows, V, first + std::int64_t(k)}, e.data());
    const auto best = std::size_t(std::min_element(e.begin(), e.end()) - e.begin());
    const float at_token = e[std::size_t(tokens[k])];
    ++out.rows;
    if (best == std::size_t(tokens[k])) ++out.argmin;
    // Its fast log may order two draws within the bound of each other either way.
    else if (bound_ratio(b, e[best], at_token) <= 2.0) ++out.ambiguous;
  }
  return out;
}

TEST(NoiseStreams, FlashInferLayoutIsTheLibrarysAtEveryResidueClass) {
  // FlashInfer 0.6.18's own SamplingFromLogits on zero fp32 logits (draw_stream_versions.py, an H100): each
  // token is the argmax of its Gumbel noise, the argmin of E. Version 2 (gcd(4, V) ids a curand_init, a 32-bit
  // row x V subsequence) reads every token; version 1 (4 ids a curand_init, 64 bits) only where V % 4 == 0 and
  // the subsequence stays below 2^32 (and at V <= 2, where both layouts coincide).
  const auto f = fixture("flashinfer_tokens.safetensors");
  std::string cases = f.metadata.at("cases");
  for (std::size_t at = 0; at <= cases.size();) {
    const std::size_t end = std::min(cases.find(',', at), cases.size());
    const std::string name = cases.substr(at, end - at);
    at = end + 1;
    const auto V = meta(f, name + ".vocab");
    const TokenReading now = read_flashinfer_tokens(f, name, 2), old = read_flashinfer_tokens(f, name, 1);
    std::printf("[flashinfer %s] V = %llu: version 2 reads %d of %d tokens (%d ambiguous), version 1 %d\n", name.c_str(),
                static_cast<unsigned long long>(V), now.argmin, now.rows, now.ambiguous, old.argmin);
    EXPECT_EQ(now.argmin + now.ambiguous, now.rows) << name;
    EXPECT_GE(now.argmin, now.rows - now.rows / 50) << name;
    const bool old_layout_holds = (V % 4 == 0 || V <= 2) && name != "wrap";  // the same subsequences there
    if (old_layout_holds) EXPECT_EQ(old.argmin + old.ambiguous, old.rows) << name;
    else EXPECT_LT(old.argmin, old.rows * 3 / 4) << name << ": the width-4 layout reads FlashInfer's tokens";
  }
}

TEST(NoiseStreams, VllmCurrentDrawIsTritons) {
  // vLLM Model Runner V2 at 03f97cc, drawn by Triton on an H100: u = max(tl.rand, 4.6566127342e-10) exact,
  // E = -log1p(-u) by libdevice in fp32 within version 2's bound; version 1's transform is another noise.
  const auto f = fixture("triton_gumbel_v2.safetensors");
  const auto seeds = f.require("seed").as_i64(), pos = f.require("position").as_i64();
  const auto& ut = f.require("uniform");
  const auto uni = raw<float>(ut), noise = raw<float>(f.require("noise"));
  const std::int64_t rows = ut.shape[0], V = ut.shape[1];
  const NoiseStream now{StreamKind::vllm_triton, 2}, old{StreamKind::vllm_triton, 1};
  double worst = 0;
  std::int64_t old_inside = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const StreamPoint p{std::uint64_t(seeds[r]), std::uint64_t(pos[r]), rows, V, r};
    for (std::int64_t i = 0; i < V; ++i) {
      const std::size_t k = std::size_t(r * V + i);
      ASSERT_EQ(stream_uniform(now, stream_word(now, p, i)), uni[k]) << "row " << r << " id " << i;
      worst = std::max(worst, bound_ratio(noise_bound(now), float(stream_noise(now, p, i)), noise[k]));
      old_inside += bound_ratio(noise_bound(old), float(stream_noise(old, p, i)), noise[k]) <= 1.0;
    }
  }
  std::printf("[tightness] vLLM's current E (libdevice log1pf) against version 2's bound: worst %.3f of it over %lld draws; "
              "log1pf's largest error over every tl.rand uniform on the GPU: %s\n",
              worst, static_cast<long long>(rows * V), f.metadata.at("log1p_max_rel").c_str());
  EXPECT_LE(worst, 1.0);
  EXPECT_GT(worst, 0.0);
  EXPECT_LT(old_inside, rows * V / 100) << "version 1's transform agrees with vLLM's current draw";
  EXPECT_LE(std::stod(f.metadata.at("log1p_max_rel")), (noise_bound(now).ulp - 0.5) * 0x1p-23);
}

TEST(NoiseStreams, TransformEdges) {
  const NoiseStream torch{StreamKind::torch_exponential}, triton{StreamKind::vllm_triton, 1}, fi{StreamKind::flashinfer_curand};
  const NoiseStream triton2{StreamKind::vllm_triton, 2};
  EXPECT_EQ(race::curand_uniform(0xFFFFFFFFu), 1.0f);
  EXPECT_EQ(race::curand_uniform(0), 0x1p-33f);
  EXPECT_EQ(stream_noise_of_uniform(torch, 1.0f), 0x1p-24);
  EXPECT_EQ(stream_noise_of_uniform(torch, race::kTorchUniformCap), 0x1p-24);
  EXPECT_GT(stream_noise_of_uniform(torch, std::nextafter(race::kTorchUniformCap, 0.0f)), 0x1p-24);
  EXPECT_EQ(race::triton_uniform(0), 0.0f);
  EXPECT_EQ(race::triton_uniform(0xFFFFFFFFu), 0.0f);  // -1 becomes 0
  EXPECT_LT(race::triton_uniform(0x7FFFFFFFu), 1.0f + 1e-6f);
  EXPECT_NEAR(stream_noise_of_uniform(triton, 0.0f), 46.0517, 1e-3);  // -log(1e-20): finite
  EXPECT_GT(stream_noise_of_uniform(fi, 1.0f), 0.0);                  // u (1 - 2^-23) < 1
  // vLLM's current draw: u clamped to the smallest positive tl.rand; Triton's scale rounds to 2^-31 (1 - 2^-24)
  // in fp32, so u < 1 and E is finite, at most -log1p(-(1 - 2^-24)) = 24 log 2.
  EXPECT_EQ(stream_uniform(triton2, 0), race::kTritonRandMin);
  EXPECT_EQ(stream_uniform(triton2, 0x7FFFFFFFu), 1.0f - 0x1p-24f);
  EXPECT_NEAR(stream_noise_of_uniform(triton2, 1.0f - 0x1p-24f), 24 * std::log(2.0), 1e-12);
  EXPECT_NEAR(stream_noise_of_uniform(triton2, race::kTritonRandMin), 4.6566e-10, 1e-14);  // -log1p(-u) ~ u
  EXPECT_EQ(race::rocrand_uniform(0xFFFFFFFFu), 1.0f);
  EXPECT_EQ(stream_named("torch-cuda-exponential"), StreamKind::torch_exponential);
  EXPECT_FALSE(stream_named("torch"));
  for (const race::StreamInfo& i : race::kStreams) EXPECT_EQ(&race::info(i.kind), &i) << i.name;
}

TEST(NoiseStreams, RaceoraclePhiloxIsTheDefinitionsStream) {
  const NoiseStream s{};
  std::vector<float> row(37);
  stream_noise_row(s, StreamPoint{0x1234, 77, 4, 37, 2}, row.data());
  for (int i = 0; i < 37; ++i)
    EXPECT_EQ(row[std::size_t(i)], float(stream_noise(s, StreamPoint{0x1234, 77, 4, 37, 2}, i)));
}

TEST(NoiseStreams, ABatchReplayIsEveryRowsReplay) {
  // The batch path (torch's calls shared across rows, threads) against id-by-id replay.
  for (bool per_row : {false, true}) {
    NoiseStream s{StreamKind::torch_exponential};
    s.per_row = per_row;
    s.sm_count = 1;  // a grid of 8 blocks: several calls per thread at this size
    const std::int64_t rows = 5, V = 3001, stride = 3010;
    std::vector<std::uint64_t> seeds(rows, 0xfeedfacecafebeefull), offsets(rows, 4 * 12345);
    if (per_row)
      for (std::int64_t r = 0; r < rows; ++r) seeds[std::size_t(r)] += std::uint64_t(r), offsets[std::size_t(r)] += 4 * std::uint64_t(r);
    std::vector<float> out(std::size_t(rows * stride), -1.0f);
    stream_noise_batch(s, seeds.data(), offsets.data(), rows, V, out.data(), stride, 2);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t i = 0; i < V; ++i)
        ASSERT_EQ(out[std::size_t(r * stride + i)], float(stream_noise(s, {seeds[std::size_t(r)], offsets[std::size_t(r)], rows, V, r}, i)))
            << (per_row ? "per row" : "whole") << " row " << r << " id " << i;
  }
}

}  // namespace
}  // namespace raceoracle::oracle
