// The error model must be sound (a kernel's fp32 key never leaves its
// interval) and tight (the interval is not so wide that it hides bugs).
// Soundness is checked against C++ emulations of both scaling orders that
// perform the fused kernel's fp32 operations in its order (SPEC §2), with
// glibc's expf (at most 1 ulp), over random rows and temperatures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "oracle/noise_streams.h"
#include "oracle/oracle.h"
#include "protocol/safetensors.h"
#include "race/bf16.h"
#include "race/noise.h"

namespace raceoracle::oracle {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

NumericsContract glibc_contract(ScalingOrder order) {
  NumericsContract c;
  c.order = order;
  c.exp_ulp = 1.0;  // glibc expf: max known error 1 ulp on x86_64
  c.rescale_ulp = 1.0;
  c.div_ulp = 0.5;  // IEEE '/'
  return c;
}

/// The fused kernel's final fp32 key for every id: stage 1 per tile of
/// `block_v` ids, stage 2 rescale by exp((m_t - mm) * inv_t).
std::vector<float> emulate_fused(const std::vector<float>& x, const std::vector<float>& e, float T, float eps,
                                 ScalingOrder order, int block_v, bool drop_rescale = false) {
  const float t = race::clamp_temperature(T);
  const float inv_t = 1.0f / t;
  const std::size_t V = x.size();
  std::vector<float> key(V), tile_m((V + block_v - 1) / block_v, -kInf);
  for (std::size_t i = 0; i < V; ++i) tile_m[i / block_v] = std::max(tile_m[i / block_v], x[i]);
  float mm = -kInf;
  for (float m : tile_m) mm = std::max(mm, m);
  const float mm_safe = mm == -kInf ? 0.0f : mm;
  for (std::size_t i = 0; i < V; ++i) {
    const float m = tile_m[i / block_v];
    const float m_safe = m == -kInf ? 0.0f : m;
    float p;
    if (order == ScalingOrder::post) {
      p = std::exp((x[i] - m_safe) * inv_t);
    } else {
      const float xs = x[i] * inv_t, ms = m_safe * inv_t;
      p = std::exp(xs - ms);
    }
    const float k_t = p / (e[i] + eps);
    const float scale = std::exp((m - mm_safe) * inv_t);
    key[i] = drop_rescale ? k_t : k_t * scale;
  }
  return key;
}

struct Sample {
  std::vector<float> x, e;
  float T;
};

/// Gaussian logits of several scales around an offset (large |x| is what
/// hurts pre-scale), some -inf, Exp(1) noise with zero and tiny draws.
std::vector<Sample> samples(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const float temps[] = {1e-5f, 1e-3f, 0.01f, 0.1f, 0.3f, 0.7f, 1.0f, 2.0f, 10.0f};
  const float scales[] = {0.01f, 1.0f, 3.0f, 10.0f, 30.0f};
  const float offsets[] = {0.0f, 20.0f, -50.0f};
  std::vector<Sample> out;
  for (int s = 0; s < n; ++s) {
    Sample r;
    const int V = 1 + int(rng() % 1500);
    std::normal_distribution<float> g(offsets[rng() % 3], scales[rng() % 5]);
    std::exponential_distribution<float> ex(1.0f);
    r.T = temps[rng() % 9];
    for (int i = 0; i < V; ++i) {
      r.x.push_back(rng() % 50 == 0 ? -kInf : g(rng));
      const auto k = rng() % 100;
      r.e.push_back(k == 0 ? 0.0f : k == 1 ? 0x1p-24f : ex(rng));
    }
    out.push_back(std::move(r));
  }
  return out;
}

struct Tightness {
  double worst = 0;       // max over ids of |k^/k - 1| / rho
  std::size_t keys = 0;   // ids checked
  std::size_t outside = 0;
};

/// `kernel_noise`: the E the emulated kernel divides by, when it is not the
/// oracle's (drawn noise); empty: the oracle's.
Tightness check(ScalingOrder order, const std::vector<Sample>& rows, int block_v, bool drop_rescale = false,
                const std::vector<std::vector<float>>& kernel_noise = {}, double noise_ulp = 0,
                const oracle::NoiseBound& fast_log = {}) {
  NumericsContract c = glibc_contract(order);
  c.noise_ulp = noise_ulp;
  c.noise_abs = fast_log.abs;
  c.noise_abs_above = fast_log.abs_above;
  c.noise_abs_below = fast_log.abs_below;
  Tightness t;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Sample& r = rows[k];
    RowView view{r.x.data(), Dtype::f32, r.e.data(), std::int64_t(r.x.size()), r.T};
    const RowScale s = row_scale(view);
    if (s.row_max == -kInf) continue;
    const auto key = emulate_fused(r.x, kernel_noise.empty() ? r.e : kernel_noise[k], r.T, s.eps, order, block_v,
                                   drop_rescale);
    for (std::size_t i = 0; i < r.x.size(); ++i) {
      const KeyBound b = bound_key(r.x[i], r.e[i], s, c);
      ++t.keys;
      if (!(b.lo <= key[i] && key[i] <= b.hi)) ++t.outside;
      if (b.key > 1e-30 && std::isfinite(b.hi)) {
        const double rho_rel = (b.hi - b.key) / b.key;
        t.worst = std::max(t.worst, std::abs(double(key[i]) / b.key - 1.0) / rho_rel);
      }
    }
  }
  return t;
}

TEST(ErrorModel, BoundIsSoundForEmulatedFp32KeysInBothOrders) {
  const auto rows = samples(400, race::kCiSeed);
  for (ScalingOrder order : {ScalingOrder::post, ScalingOrder::pre}) {
    for (int block_v : {64, 1024}) {
      const Tightness t = check(order, rows, block_v);
      EXPECT_EQ(t.outside, 0u) << to_string(order) << " BLOCK_V=" << block_v;
      EXPECT_GT(t.keys, 100000u);
      // Tightness: the largest actual/bound ratio (1 would be exact). Below
      // ~0.02 the bound would be loose enough to hide real bugs.
      EXPECT_GT(t.worst, 0.05) << to_string(order);
      std::printf("[tightness] %s-scale BLOCK_V=%d: %zu keys, worst actual/bound = %.3f\n", to_string(order),
                  block_v, t.keys, t.worst);
      ::testing::Test::RecordProperty(std::string("tightness_") + to_string(order) + "_" + std::to_string(block_v),
                                      std::to_string(t.worst));
    }
  }
}

TEST(ErrorModel, BoundCatchesADroppedRescale) {
  // A check that cannot fail is not a check: without the stage-2 rescale the
  // keys of every tile below the row max leave their interval.
  const auto rows = samples(50, 7);
  EXPECT_GT(check(ScalingOrder::post, rows, 64, /*drop_rescale=*/true).outside, 1000u);
}

/// Drawn noise (race/noise.h): the oracle's E is -log(u) rounded to fp32, the
/// emulated kernel's is glibc's -logf(u) (0.787 ulp at worst), each shifted
/// by `shift_ulps` more fp32 steps when asked (a broken conversion).
struct DrawnRows {
  std::vector<Sample> rows;
  std::vector<std::vector<float>> kernel_noise;
};
DrawnRows drawn(std::vector<Sample> rows, std::uint64_t seed, int shift_ulps = 0) {
  std::mt19937 rng{std::uint32_t(seed)};
  DrawnRows d;
  for (Sample& r : rows) {
    std::vector<float> mine(r.e.size());
    for (std::size_t i = 0; i < r.e.size(); ++i) {
      const float u = race::uniform_of(std::uint32_t(rng()));
      r.e[i] = float(-std::log(double(u)));
      mine[i] = -std::log(u);
      for (int k = 0; k < shift_ulps; ++k) mine[i] = std::nextafter(mine[i], kInf);
    }
    d.kernel_noise.push_back(std::move(mine));
  }
  d.rows = std::move(rows);
  return d;
}

TEST(ErrorModel, DrawnNoiseTermCoversTheKernelsOwnLog) {
  // A kernel drawing its noise divides by its own logf, not by the oracle's
  // E: the contract's noise_ulp (logf's 1 ulp + 0.5 for the oracle's
  // rounding) keeps every key inside its interval.
  const DrawnRows d = drawn(samples(300, race::kCiSeed + 1), 11);
  for (ScalingOrder order : {ScalingOrder::post, ScalingOrder::pre}) {
    const Tightness t = check(order, d.rows, 64, false, d.kernel_noise, 1.5);
    EXPECT_EQ(t.outside, 0u) << to_string(order);
    EXPECT_GT(t.keys, 100000u);
  }
}

TEST(ErrorModel, DrawnNoiseTermCatchesAConversionEightUlpsOff) {
  // The term is 1.5 ulps of E, not a blanket: E eight fp32 steps high leaves it.
  const DrawnRows d = drawn(samples(100, race::kCiSeed + 2), 12, 8);
  EXPECT_GT(check(ScalingOrder::post, d.rows, 64, false, d.kernel_noise, 1.5).outside, 10u);
}

/// torch's stream as an H200 drew it: each row's oracle noise is the replayed
/// E rounded to fp32, and the emulated kernel divides by the GPU's own E
/// (__logf; tests/oracle/known_answers), `shift` more where E <= ln 2.
DrawnRows torch_gpu_noise(std::vector<Sample> rows, double shift = 0) {
  const auto f = protocol::read_safetensors(std::string(KNOWN_ANSWERS_DIR) + "/torch_cuda_exponential.safetensors");
  std::vector<float> u, e;
  for (const char* n : {"whole", "whole_small", "whole_offset", "row0", "row1", "row2"}) {
    const auto a = f.require(std::string(n) + ".uniform").as_f32(), b = f.require(std::string(n) + ".exponential").as_f32();
    u.insert(u.end(), a.begin(), a.end());
    e.insert(e.end(), b.begin(), b.end());
  }
  const oracle::NoiseStream torch{race::StreamKind::torch_exponential};
  DrawnRows d;
  std::size_t k = 0;
  for (Sample& r : rows) {
    std::vector<float> mine(r.e.size());
    for (std::size_t i = 0; i < r.e.size(); ++i, k = (k + 1) % u.size()) {
      r.e[i] = float(oracle::stream_noise_of_uniform(torch, u[k] == 0.0f ? 1.0f : u[k]));
      mine[i] = e[k] <= 0.6931472f ? float(double(e[k]) + shift) : e[k];
    }
    d.kernel_noise.push_back(std::move(mine));
  }
  d.rows = std::move(rows);
  return d;
}

TEST(ErrorModel, ReplayedStreamsFastLogIsCoveredByItsBound) {
  // The kernel's E from the GPU's __logf (about 84% of them differ from the
  // replay's accurate log): the stream's bound (relative plus absolute below
  // ln 2) keeps every key inside its interval, in both orders.
  const oracle::NoiseBound b = oracle::noise_bound(oracle::NoiseStream{race::StreamKind::torch_exponential});
  const DrawnRows d = torch_gpu_noise(samples(300, race::kCiSeed + 3));
  for (ScalingOrder order : {ScalingOrder::post, ScalingOrder::pre}) {
    const Tightness t = check(order, d.rows, 64, false, d.kernel_noise, b.ulp, b);
    EXPECT_EQ(t.outside, 0u) << to_string(order);
    EXPECT_GT(t.keys, 100000u);
    std::printf("[tightness] torch stream's __logf E, %s-scale: %zu keys, 0 outside, worst actual/bound = %.3f\n",
                to_string(order), t.keys, t.worst);
  }
  // The absolute term is needed: without it the same keys leave their interval.
  EXPECT_GT(check(ScalingOrder::post, d.rows, 64, false, d.kernel_noise, b.ulp).outside, 0u);
  // And it is no blanket: the GPU's E moved by twice the term leaves it.
  const DrawnRows shifted = torch_gpu_noise(samples(100, race::kCiSeed + 4), 2 * b.abs);
  EXPECT_GT(check(ScalingOrder::post, shifted.rows, 64, false, shifted.kernel_noise, b.ulp, b).outside, 100u);
}

TEST(ErrorModel, PreScaleBoundGrowsAsTemperatureFalls) {
  // SPEC §2: pre-scale subtracts numbers of magnitude |x|/t, so its argument
  // error grows like |x| u / t; post-scale's like |x - M| u / t, and |x - M| / t
  // is what the key itself is made of, so it stays bounded for ids that can win.
  RowScale s{20.0, 1.0, 1e-10f};
  const NumericsContract post = glibc_contract(ScalingOrder::post), pre = glibc_contract(ScalingOrder::pre);
  double last_pre = 0;
  for (double t : {2.0, 1.0, 0.1, 0.01}) {
    s.t = t;
    const double x = 20.0 - t;  // one temperature unit below the max: key e^-1 / (E + eps)
    const double e_post = exponent_error(x, s, post), e_pre = exponent_error(x, s, pre);
    EXPECT_NEAR(e_post, 3 * kUnitRoundoff, 1e-9);  // 3u * |x - M| / t = 3u
    EXPECT_GT(e_pre, last_pre);
    EXPECT_NEAR(e_pre / (kUnitRoundoff * 40 / t), 2.0, 0.25);  // ~2u (|x| + |M|) / t, plus 4u
    last_pre = e_pre;
  }
}

TEST(ErrorModel, MaskedIdsHaveAnExactZeroKey) {
  const KeyBound b = bound_key(-std::numeric_limits<double>::infinity(), 0.0f, RowScale{}, NumericsContract{});
  EXPECT_EQ(b.key, 0.0);
  EXPECT_EQ(b.hi, 0.0);
}

TEST(ErrorModel, PreScaleOverflowIsUnbounded) {
  // 1e34 / 1e-5 leaves fp32: x * inv_t is inf and the key meaningless.
  RowScale s{1e34, 1e-5, 1e-10f};
  NumericsContract pre;
  pre.order = ScalingOrder::pre;
  EXPECT_TRUE(std::isinf(bound_key(1e34, 1.0f, s, pre).hi));
  pre.order = ScalingOrder::post;
  EXPECT_TRUE(std::isfinite(bound_key(1e34, 1.0f, s, pre).hi));
}

TEST(ErrorModel, ToleratedGapIsWhereMayOutrankFlips) {
  // j's key is (1 - g) times i's: may_outrank(j, i) must hold exactly when
  // g <= tolerated_gap, for both orders, near and far from the row max,
  // large and tiny noise.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int n = 0; n < 2000; ++n) {
    NumericsContract c;
    c.order = n % 2 ? ScalingOrder::pre : ScalingOrder::post;
    c.exp_ulp = n % 3 == 0 ? 4096 : 2;
    const RowScale s{20.0, n % 5 == 0 ? 0.01 : 0.7, 1e-10f};
    const double x_i = 20.0 - 3 * unit(rng) * s.t;
    const float e_i = float(n % 7 == 0 ? 1e-30 : 0.1 + unit(rng));
    const double x_j = x_i - unit(rng) * s.t;  // k_j = k_i (1 - g) through its noise
    const double c_gap = tolerated_gap(x_i, e_i, x_j, e_i, s, c);
    ASSERT_GT(c_gap, 0);
    ASSERT_LT(c_gap, 1);
    for (double g : {0.5 * c_gap, 0.99 * c_gap, 1.01 * c_gap, 2 * c_gap}) {
      const double k_i = std::exp((x_i - s.row_max) / s.t) / (double(e_i) + double(s.eps));
      const double den_j = std::exp((x_j - s.row_max) / s.t) / (k_i * (1 - g));
      const float e_j = float(den_j - double(s.eps));
      const KeyBound bi = bound_key(x_i, e_i, s, c), bj = bound_key(x_j, e_j, s, c);
      const double g_exact = 1 - bj.key / bi.key;  // e_j is rounded to float
      const double tol = tolerated_gap(x_i, e_i, x_j, e_j, s, c);
      if (std::abs(g_exact / tol - 1) < 1e-3) continue;
      EXPECT_EQ(may_outrank(bj, bi), g_exact <= tol) << "g " << g_exact << " tolerated " << tol << " n " << n;
    }
  }
}

// --- the field's arithmetic (docs/../oracle/ERROR_MODEL.md, "The field's arithmetic") ---

/// How an emulated sampler differs from the fused kernel's arithmetic.
struct Field {
  bool divides = false;     ///< x / t instead of x * fl(1/t)
  bool reciprocal = false;  ///< w * fl(1 / (E + eps)) instead of w / (E + eps)
  bool bf16 = false;        ///< the key rounded to bf16 before it is compared
  double planted = 0;       ///< an error the arithmetic does not make: every key times (1 + planted)
};

float round_bf16(float v) { return race::widen_bf16(race::round_to_bf16(v)); }

/// One stage (the whole row's max, as an unfused sampler computes it), in `f`'s arithmetic.
std::vector<float> emulate_field(const Sample& r, float eps, ScalingOrder order, const Field& f) {
  const float t = race::clamp_temperature(r.T), inv_t = 1.0f / t;
  float m = -kInf;
  for (float v : r.x) m = std::max(m, v);
  std::vector<float> key(r.x.size());
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    float a;
    if (order == ScalingOrder::post) a = f.divides ? (r.x[i] - m) / t : (r.x[i] - m) * inv_t;
    else a = f.divides ? r.x[i] / t - m / t : r.x[i] * inv_t - m * inv_t;
    const float w = std::exp(a), den = r.e[i] + eps;
    float k = f.reciprocal ? w * (1.0f / den) : w / den;
    if (f.planted != 0) k = float(double(k) * (1 + f.planted));
    key[i] = f.bf16 ? round_bf16(k) : k;
  }
  return key;
}

/// Keys an emulation computes (`emulate(row, eps)`, one per id, in the key's
/// units) against the bounds of contract `c`: how many leave them, and the
/// worst actual/bound. Ids whose double key underflows are left out (the log
/// domain's, ERROR_MODEL.md).
template <class Emulate>
Tightness check_keys(const std::vector<Sample>& rows, const NumericsContract& c, Emulate emulate) {
  Tightness t;
  for (const Sample& r : rows) {
    RowView view{r.x.data(), Dtype::f32, r.e.data(), std::int64_t(r.x.size()), r.T};
    const RowScale s = row_scale(view);
    if (s.row_max == -kInf) continue;
    const auto key = emulate(r, s.eps);
    for (std::size_t i = 0; i < r.x.size(); ++i) {
      const KeyBound b = bound_key(r.x[i], r.e[i], s, c);
      if (r.x[i] != -kInf && !(b.key > 1e-300)) continue;
      ++t.keys;
      if (!(b.lo <= key[i] && key[i] <= b.hi)) ++t.outside;
      t.worst = std::max(t.worst, error_ratio(b, key[i]));
    }
  }
  return t;
}

/// The emulated keys against the bounds of the contract that declares `declared`.
Tightness check_field(const std::vector<Sample>& rows, ScalingOrder order, const Field& arithmetic, const Field& declared) {
  NumericsContract c = glibc_contract(order);
  c.rescales = 0;
  c.scale_divides = declared.divides;
  c.key_reciprocal = declared.reciprocal;
  c.key_bf16 = declared.bf16;
  return check_keys(rows, c, [&](const Sample& r, float eps) { return emulate_field(r, eps, order, arithmetic); });
}

TEST(ErrorModel, TheFieldsArithmeticTermsAreSoundAndTight) {
  const auto rows = samples(400, race::kCiSeed + 3);
  const Field terms[] = {{.divides = true}, {.reciprocal = true}, {.bf16 = true},
                         {.divides = true, .reciprocal = true, .bf16 = true}};
  for (ScalingOrder order : {ScalingOrder::post, ScalingOrder::pre})
    for (const Field& f : terms) {
      const Tightness t = check_field(rows, order, f, f);
      const std::string name = fmt::format("{}-scale{}{}{}", to_string(order), f.divides ? " x/t" : "",
                                           f.reciprocal ? " w*(1/E)" : "", f.bf16 ? " bf16-keys" : "");
      EXPECT_EQ(t.outside, 0u) << name;
      EXPECT_GT(t.keys, 100000u);
      EXPECT_GT(t.worst, 0.05) << name << ": the bound is too loose to see a bug";
      // An error of 5% the arithmetic does not make leaves the bound.
      Field planted = f;
      planted.planted = 0.05;
      const std::size_t caught = check_field(rows, order, planted, f).outside;
      EXPECT_GT(caught, 1000u) << name;
      std::printf("[tightness] %s: %zu keys, worst actual/bound = %.3f; a planted 5%% error: %zu keys outside\n",
                  name.c_str(), t.keys, t.worst, caught);
    }
}

TEST(ErrorModel, AFieldTermLeftUndeclaredIsCaught) {
  // Keys compared in bf16 leave an fp32 contract's bounds: the term is needed.
  const auto rows = samples(100, race::kCiSeed + 4);
  EXPECT_GT(check_field(rows, ScalingOrder::post, {.bf16 = true}, {}).outside, 1000u);
  // x / t rounds once less than x * fl(1/t): the multiply's contract stays sound for it, and is looser.
  const Tightness divide = check_field(rows, ScalingOrder::post, {.divides = true}, {.divides = true});
  const Tightness under_multiply = check_field(rows, ScalingOrder::post, {.divides = true}, {});
  EXPECT_EQ(under_multiply.outside, 0u);
  EXPECT_LT(under_multiply.worst, divide.worst);
}

// --- an online max, normalised (aiter's single pass) ---

/// A single-pass kernel as aiter's `mixed_sample_outer_exponential` computes:
/// `threads` threads, each loading `width` consecutive ids at a time
/// (load j of thread k: ids (j * threads + k) * width ...), pre-scale
/// v = x * fl(1/t); a thread's running max m grows per load, and then its
/// running best key and its running sum are rescaled by expf(m_old - m_new);
/// a key is expf(v - m) / (E + eps); at the end each thread's best is rescaled
/// by expf(m_t - gmax) and divided by the block's sum S. Every id's value is
/// carried as the running best would be (the winner's is one of them); the
/// result is each id's final fp32 key times the kernel's own S (a factor
/// common to the row, which no ranking sees: the bound is on that product).
std::vector<double> emulate_online(const Sample& r, float eps, int threads, int width, bool exp_high, double planted = 0) {
  // exp_high: every rescale's expf one ulp above glibc's (an expf at the
  // 1 ulp the contract allows, erring the same way every time).
  const auto rescale_exp = [&](float a) { return exp_high ? std::nextafter(std::exp(a), kInf) : std::exp(a); };
  const float t = race::clamp_temperature(r.T), inv_t = 1.0f / t;
  const std::size_t V = r.x.size(), per_load = std::size_t(threads) * std::size_t(width);
  std::vector<float> key(V, 0.0f), m_thread(std::size_t(threads), -kInf), sum(std::size_t(threads), 0.0f);
  std::vector<std::vector<std::size_t>> held(static_cast<std::size_t>(threads));  // ids each thread carries
  for (std::size_t base = 0; base < V; base += per_load)
    for (int k = 0; k < threads; ++k) {
      const std::size_t first = base + std::size_t(k) * std::size_t(width);
      if (first >= V) break;
      const std::size_t last = std::min(V, first + std::size_t(width));
      float& m = m_thread[std::size_t(k)];
      float load_max = -kInf;
      for (std::size_t i = first; i < last; ++i) load_max = std::max(load_max, r.x[i] * inv_t);
      if (load_max > m) {
        if (m != -kInf) {
          const float f = rescale_exp(m - load_max);
          for (std::size_t i : held[std::size_t(k)]) key[i] *= f;
          sum[std::size_t(k)] *= f;
        }
        m = load_max;
      }
      for (std::size_t i = first; i < last; ++i) {
        const float w = m == -kInf ? 0.0f : std::exp(r.x[i] * inv_t - m);
        key[i] = w / (r.e[i] + eps);
        sum[std::size_t(k)] += w;
        held[std::size_t(k)].push_back(i);
      }
    }
  float gmax = -kInf;
  for (float m : m_thread) gmax = std::max(gmax, m);
  float S = 0;
  for (int k = 0; k < threads; ++k)
    if (m_thread[std::size_t(k)] != -kInf) S += sum[std::size_t(k)] * std::exp(m_thread[std::size_t(k)] - gmax);
  std::vector<double> out(V);
  for (int k = 0; k < threads; ++k)
    for (std::size_t i : held[std::size_t(k)]) {
      const float rescaled = m_thread[std::size_t(k)] == -kInf ? 0.0f : key[i] * rescale_exp(m_thread[std::size_t(k)] - gmax);
      out[i] = double(rescaled / S) * double(S) * (1 + planted);
    }
  return out;
}

NumericsContract online_contract(int threads, int width, bool online = true, bool normalises = true) {
  NumericsContract c = glibc_contract(ScalingOrder::pre);
  c.rescales = 1;                                // the block-level rescale by expf(m_t - gmax)
  c.online_ids = online ? threads * width : 0;  // a thread rescales at most once per load of threads * width ids
  c.normalises = normalises;
  return c;
}

Tightness check_online(const std::vector<Sample>& rows, int threads, int width, const NumericsContract& c, bool exp_high,
                       double planted = 0) {
  return check_keys(rows, c, [&](const Sample& r, float eps) { return emulate_online(r, eps, threads, width, exp_high, planted); });
}

TEST(ErrorModel, AnOnlineMaxWithItsRescalesAndTheSoftmaxSumIsSoundAndTight) {
  const auto rows = samples(400, race::kCiSeed + 5);
  // 1024 x 4 as aiter, and 8 x 4 so that rows of 1500 ids see up to 47 rescales;
  // glibc's expf, and one erring by its full ulp the same way at every rescale.
  for (const auto& [threads, width] : {std::pair{1024, 4}, std::pair{8, 4}})
    for (bool exp_high : {false, true}) {
      const NumericsContract c = online_contract(threads, width);
      const Tightness t = check_online(rows, threads, width, c, exp_high);
      const std::string name = fmt::format("online max, {} threads x {}, normalised{}", threads, width,
                                           exp_high ? ", rescale expf 1 ulp high" : "");
      EXPECT_EQ(t.outside, 0u) << name;
      EXPECT_GT(t.keys, 100000u);
      EXPECT_GT(t.worst, 0.05) << name << ": the bound is too loose to see a bug";
      const std::size_t caught = check_online(rows, threads, width, c, exp_high, 0.05).outside;
      EXPECT_GT(caught, 1000u) << name;
      std::printf("[tightness] %s: %zu keys, worst actual/bound = %.3f; a planted 5%% error: %zu keys outside\n",
                  name.c_str(), t.keys, t.worst, caught);
    }
  // The rescales are the term: 47 of them, each at its ulp, judged as one leave the bound.
  const std::size_t one_rescale = check_online(rows, 8, 4, online_contract(8, 4, false), true).outside;
  std::printf("[tightness] online max judged with one rescale: %zu keys outside\n", one_rescale);
  EXPECT_GT(one_rescale, 0u);
}

// --- the log-domain race (vLLM's Model Runner V2, FlashInfer) ---

/// The score x / t - log(E + eps) as a log-domain sampler computes it: the
/// scaled logit a (post: fl(x - M) * fl(1/t), pre: x * fl(1/t)), the noise term
/// -logf(fl(E + eps)), their sum; in bf16 both terms and the sum are rounded
/// to bf16 (FlashInfer races in the logits' dtype). Returned as the key it
/// ranks like, exp(score - C) in double with C = 0 (post) or M / t (pre).
std::vector<double> emulate_log_domain(const Sample& r, float eps, ScalingOrder order, bool bf16, double planted = 0) {
  const float t = race::clamp_temperature(r.T), inv_t = 1.0f / t;
  float m = -kInf;
  for (float v : r.x) m = std::max(m, v);
  std::vector<double> out(r.x.size());
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    float a = order == ScalingOrder::post ? (r.x[i] - m) * inv_t : r.x[i] * inv_t;
    float g = -std::log(r.e[i] + eps);
    if (bf16) a = round_bf16(a), g = round_bf16(g);
    float score = a + g;
    if (bf16) score = round_bf16(score);
    const double C = order == ScalingOrder::post ? 0.0 : double(m) / double(t);
    out[i] = std::exp(double(score) - C) * (1 + planted);
  }
  return out;
}

Tightness check_log_domain(const std::vector<Sample>& rows, ScalingOrder order, bool bf16, const NumericsContract& c,
                           double planted = 0) {
  return check_keys(rows, c, [&](const Sample& r, float eps) { return emulate_log_domain(r, eps, order, bf16, planted); });
}

NumericsContract log_contract(ScalingOrder order, bool bf16) {
  NumericsContract c = glibc_contract(order);
  c.domain = race::KeyDomain::log;
  c.rescales = 0;
  c.log_ulp = 1.0;  // glibc logf: at most 1 ulp (x86_64 libm-test-ulps)
  c.key_bf16 = bf16;
  return c;
}

TEST(ErrorModel, TheLogDomainRaceIsSoundAndTightInFp32AndBf16) {
  const auto rows = samples(400, race::kCiSeed + 6);
  for (ScalingOrder order : {ScalingOrder::post, ScalingOrder::pre})
    for (bool bf16 : {false, true}) {
      const NumericsContract c = log_contract(order, bf16);
      const Tightness t = check_log_domain(rows, order, bf16, c);
      const std::string name = fmt::format("log domain, {}-scale, {}", to_string(order), bf16 ? "bf16" : "fp32");
      EXPECT_EQ(t.outside, 0u) << name;
      EXPECT_GT(t.keys, 100000u);
      EXPECT_GT(t.worst, 0.05) << name << ": the bound is too loose to see a bug";
      // A planted error of 5% (fp32) or e^0.5 (bf16, whose window is wider) leaves it.
      const double planted = bf16 ? std::exp(0.5) - 1 : 0.05;
      const std::size_t caught = check_log_domain(rows, order, bf16, c, planted).outside;
      EXPECT_GT(caught, 1000u) << name;
      std::printf("[tightness] %s: %zu keys, worst actual/bound = %.3f; a planted %.0f%% error: %zu keys outside\n",
                  name.c_str(), t.keys, t.worst, planted * 100, caught);
    }
  // A bf16 race judged as fp32 leaves its bounds: the term is needed.
  const std::size_t undeclared = check_log_domain(rows, ScalingOrder::post, true, log_contract(ScalingOrder::post, false)).outside;
  std::printf("[tightness] bf16 log-domain race judged as fp32: %zu keys outside\n", undeclared);
  EXPECT_GT(undeclared, 1000u);
}

}  // namespace
}  // namespace raceoracle::oracle
