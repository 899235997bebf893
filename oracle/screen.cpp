#include "oracle/screen.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace raceoracle::oracle {
namespace {

// Four lanes in GCC/Clang vector extensions: the width of SSE2 (every
// x86-64) and of NEON; no intrinsics, so any target compiles it. Comparisons
// give lanes of 0 / -1.
using v4f = float __attribute__((vector_size(16)));
using v4i = std::int32_t __attribute__((vector_size(16)));
using v4u = std::uint32_t __attribute__((vector_size(16)));
using v4h = std::uint16_t __attribute__((vector_size(8)));

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr int kLanes = 4;
constexpr int kBlock = 64;  // ids per screen test: the lanes' verdicts are reduced once a block

float widen(std::uint16_t h) {
  const std::uint32_t w = std::uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

template <Dtype D>
float logit_at(const void* p, std::int64_t i) {
  if constexpr (D == Dtype::f32) return static_cast<const float*>(p)[i];
  else return widen(static_cast<const std::uint16_t*>(p)[i]);
}

template <Dtype D>
v4f load4(const void* p, std::int64_t i) {
  if constexpr (D == Dtype::f32) {
    v4f v;
    std::memcpy(&v, static_cast<const float*>(p) + i, sizeof v);
    return v;
  } else {
    v4h h;
    std::memcpy(&h, static_cast<const std::uint16_t*>(p) + i, sizeof h);
    return reinterpret_cast<v4f>(__builtin_convertvector(h, v4u) << 16);  // bf16 is fp32's upper half
  }
}

v4f load4(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

bool any(v4i m) {
  std::uint64_t w[2];
  std::memcpy(w, &m, sizeof w);
  return (w[0] | w[1]) != 0;
}

template <class T, class V>
std::array<T, kLanes> lanes(V v) {
  std::array<T, kLanes> a;
  std::memcpy(a.data(), &v, sizeof v);
  return a;
}

void add(LogitStats& s, float x) {
  if (!(x < kInfF)) s.nan_or_pos_inf = true;
  if (x > s.max) s.max = x;
  if (x > -kInfF) {
    ++s.unmasked;
    if (x < s.min_finite) s.min_finite = x;
  }
}

template <Dtype D>
LogitStats scan(const void* p, std::int64_t begin, std::int64_t end) {
  v4f mx = -kInfF + v4f{}, mn = kInfF + v4f{};
  v4i bad{}, count{};
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
    const v4f x = load4<D>(p, i);
    const v4i finite = x > -kInfF;
    mx = x > mx ? x : mx;
    mn = (finite & (x < mn)) != 0 ? x : mn;
    bad |= ~(x < kInfF);  // NaN and +inf
    count -= finite;
  }
  LogitStats s;
  for (float m : lanes<float>(mx)) s.max = m > s.max ? m : s.max;
  for (float m : lanes<float>(mn)) s.min_finite = m < s.min_finite ? m : s.min_finite;
  for (std::int32_t c : lanes<std::int32_t>(count)) s.unmasked += c;
  s.nan_or_pos_inf = any(bad);
  for (; i < end; ++i) add(s, logit_at<D>(p, i));
  return s;
}

template <Dtype D>
std::int64_t find(const void* p, float value, std::int64_t begin, std::int64_t end) {
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    if (any(load4<D>(p, i) == value)) break;
  for (; i < end; ++i)
    if (logit_at<D>(p, i) == value) return i;
  return -1;
}

/// screen_exp on four lanes; the scalar screen_exp is the same operations.
v4f screen_exp4(v4f x, v4f max, v4f log2e_over_t) {
  v4f y = (x - max) * log2e_over_t;
  y = y < -126.0f ? -126.0f + v4f{} : y;
  const v4i n = __builtin_convertvector(y * 0x1p23f, v4i);  // truncates towards 0: never below y
  return reinterpret_cast<v4f>(n + 0x3f800000);             // + the exponent bias, 127 << 23
}

v4i noise_out_of_contract(v4f e) { return ~((e >= 0.0f) & (e < kInfF)); }

template <Dtype D>
bool screen(const RowView& row, float max, float c, float eps, float threshold, ScreenVisitor& visitor) {
  const float* noise = row.noise;
  const std::int64_t V = row.vocab;
  // The exact test of one id, used for every id a block's lanes flag and for the tail.
  auto test = [&](std::int64_t i) {
    const float e = noise[i];
    if (!(e >= 0.0f && e < kInfF)) return false;
    if (screen_exp(logit_at<D>(row.logits, i), max, c) >= threshold * (e + eps)) threshold = visitor.visit(i);
    return true;
  };
  std::int64_t i = 0;
  for (; i + kBlock <= V; i += kBlock) {
    v4i hit{}, bad{};
    const v4f vthr = threshold + v4f{};
    for (int k = 0; k < kBlock; k += kLanes) {
      const v4f e = load4(noise + i + k);
      const v4f v = screen_exp4(load4<D>(row.logits, i + k), max + v4f{}, c + v4f{});
      hit |= v >= vthr * (e + eps);
      bad |= noise_out_of_contract(e);
    }
    if (any(bad)) return false;
    if (any(hit))
      for (std::int64_t j = i; j < i + kBlock; ++j) test(j);
  }
  for (; i < V; ++i)
    if (!test(i)) return false;
  return true;
}

// u = 2^-24. The exponent argument y = fl(fl(x - M) * c), c = fl(log2e / t)
// (one float64 division, rounded to fp32), carries three fp32 roundings and
// the float64 one: |y - y*| <= theta |y| / (1 - theta), |y| <= 126.
constexpr double kU = 0x1p-24;
constexpr double kTheta = (1 + kU) * (1 + kU) * (1 + kU) * (1 + 0x1p-50) - 1;

}  // namespace

const double kScreenSlack = (1 + kU) * (1 + kU) * std::exp2(126 * kTheta / (1 - kTheta) + 0x1p-100) *
                            (1 + 0x1p-39) * (1 + 0x1p-30);

float screen_exp(float x, float max, float log2e_over_t) {
  float y = (x - max) * log2e_over_t;
  y = y < -126.0f ? -126.0f : y;
  const std::uint32_t bits = std::uint32_t(std::int32_t(y * 0x1p23f)) + 0x3f800000u;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

LogitStats scan_logits(const RowView& row, std::int64_t begin, std::int64_t end) {
  return row.dtype == Dtype::f32 ? scan<Dtype::f32>(row.logits, begin, end) : scan<Dtype::bf16>(row.logits, begin, end);
}

std::int64_t find_logit(const RowView& row, float value, std::int64_t begin, std::int64_t end) {
  return row.dtype == Dtype::f32 ? find<Dtype::f32>(row.logits, value, begin, end)
                                 : find<Dtype::bf16>(row.logits, value, begin, end);
}

bool screen_row(const RowView& row, float max, float log2e_over_t, float eps, float threshold, ScreenVisitor& v) {
  return row.dtype == Dtype::f32 ? screen<Dtype::f32>(row, max, log2e_over_t, eps, threshold, v)
                                 : screen<Dtype::bf16>(row, max, log2e_over_t, eps, threshold, v);
}

}  // namespace raceoracle::oracle
