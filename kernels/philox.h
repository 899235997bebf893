#pragma once
/// Philox-4x32-10 (Salmon et al., SC'11) as Random123 defines it, written out
/// so that device code needs no library, and the fp32 noise of race/noise.h.
/// tests/kernels/philox_tests.cpp holds these to Random123's bits.
#include <cstdint>
#include <cstring>

#include "kernels/device.h"
#include "race/noise.h"

namespace raceoracle::kernels::philox {

inline constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
inline constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key bumps: golden ratio, sqrt(3) - 1
inline constexpr int kRounds = 10;

struct Words {
  std::uint32_t w[4];
};

__host__ __device__ __forceinline__ Words philox4x32_10(const race::PhiloxInput& in) {
  std::uint32_t c0 = in.counter[0], c1 = in.counter[1], c2 = in.counter[2], c3 = in.counter[3];
  std::uint32_t k0 = in.key[0], k1 = in.key[1];
  for (int r = 0; r < kRounds; ++r) {
    if (r > 0) k0 += kW0, k1 += kW1;
    const std::uint64_t p0 = std::uint64_t(kM0) * c0, p1 = std::uint64_t(kM1) * c2;
    const std::uint32_t n0 = std::uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = std::uint32_t(p0 >> 32) ^ c3 ^ k1;
    c0 = n0, c1 = std::uint32_t(p1), c2 = n2, c3 = std::uint32_t(p0);
  }
  return Words{{c0, c1, c2, c3}};
}

/// race::uniform_of(w) without an integer-to-float conversion (a quarter-rate
/// pipe on GPUs): 1 + k 2^-23 assembled from bits (k = w >> 9), minus
/// 1 - 2^-24 in one subtraction: (2k + 1) 2^-24 is representable, so the
/// difference is exact. Philox tests hold it to uniform_of over all 2^23 values.
__host__ __device__ __forceinline__ float uniform_from_bits(std::uint32_t w) {
  const std::uint32_t bits = 0x3F800000u | (w >> 9);
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  const float one_k = __uint_as_float(bits);
#else
  float one_k;
  std::memcpy(&one_k, &bits, sizeof one_k);
#endif
  return one_k - 0x1.fffffep-1f;
}

/// 1 - u of the same word, exactly: the uniform of ~w, whose k is 2^23 - 1 - k,
/// is (2^24 - 2k - 1) 2^-24. 1 minus it is u again, exactly (an odd multiple
/// of 2^-24 below 1), so -logf(1 - complement_from_bits(w)) is
/// exponential_of(w) bit for bit. Philox tests check both over all 2^23 values.
__host__ __device__ __forceinline__ float complement_from_bits(std::uint32_t w) { return uniform_from_bits(~w); }

/// Where exponential_floor leaves the series for the fast log2.
inline constexpr float kFloorSeriesBelow = 0x1p-5f;

/// E = -log(1 - r) from the complement r, within 2^-15.4 below it and at most
/// 2^-22 above, without logf: for r < 2^-5 the series r + r^2/2 + r^3/3 (its
/// tail below r^3/4 relative); above, the fast log2 of u = 1 - r (exact) times
/// -ln 2 shrunk by 2^-16, so that its error (2^-22 absolute on [1/2, 2),
/// 2 ulp below: at most 2^-17.5 relative for u <= 31/32) leaves it below E.
/// The derivation: kernels/SCREEN.md, "Drawn noise: the bound before the log".
/// Philox tests hold it to that over all 2^23 values (the host's log2f).
__host__ __device__ __forceinline__ float exponential_floor(float r) {
  if (r < kFloorSeriesBelow) return r * (1.0f + r * (0.5f + r * 0.333333343f));
  const float u = 1.0f - r;
#if defined(__CUDA_ARCH__)
  float l;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(l) : "f"(u));
#else
  const float l = log2f(u);
#endif
  return l * -0x1.62e2cep-1f;  // -ln 2 (1 - 2^-16.004)
}

/// E = -log(u) in fp32: the error of logf alone, u being exact (docs/DRAWN_NOISE.md, "Accuracy").
__host__ __device__ __forceinline__ float exponential_of(std::uint32_t w) { return -logf(uniform_from_bits(w)); }

}  // namespace raceoracle::kernels::philox
