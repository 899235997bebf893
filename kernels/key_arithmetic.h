#pragma once
/// The fused kernels' fp32 key arithmetic, written once: the kernels use it
/// (kernels/race.h, fused.hip) and so does the host code that emulates their
/// keys (analysis/key_emulation.h), which may not keep a copy of its own.
///   stage 1 (a tile):  key_t = exp(exponent(x, guard_max(m_t), 1/t)) / (E + eps)
///   stage 2 (the row): key   = key_t * exp(rescale_exponent(m_t, guard_max(M), 1/t))
/// The exp is the caller's: the kernels' expf (a defect may swap it), the
/// host's glibc expf, which is also the cpu backend's. Host and device alike;
/// no device header.
#include <cmath>

#include "race/definition.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define RACEORACLE_HOST_DEVICE __host__ __device__
#else
#define RACEORACLE_HOST_DEVICE
#endif

namespace raceoracle::kernels::keys {

/// 1 / t with t = max(T, 1e-5f), one IEEE division (a NaN T stays NaN).
RACEORACLE_HOST_DEVICE inline float inverse_temperature(float T) { return 1.0f / fmaxf(T, race::kMinTemperature); }

/// The max a key is scaled against: an all -inf range (a fully masked tile or
/// row) uses 0, so that its keys are exp(-inf) = 0, not NaN.
RACEORACLE_HOST_DEVICE inline float guard_max(float m) { return m == -INFINITY ? 0.0f : m; }

/// x / t as the field computes it, `logits / T` or `logits * (1 / T)`: the
/// product rounded to fp32 before anything is added to it. nvcc and hipcc
/// contract `a * b - c` into one FMA by default, which skips that rounding and
/// makes pre-scale rank as post-scale does (docs/DIVERGENCE.md, "fused-pre
/// beside fused-post"), so the device takes the round-to-nearest intrinsic;
/// host code is built with -ffp-contract=off (CMakeLists.txt).
RACEORACLE_HOST_DEVICE inline float scaled(float x, float inv_t) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __fmul_rn(x, inv_t);
#else
  return x * inv_t;
#endif
}

/// The exponent of the race key, (x - m) / t, in the given order: <= 0 or NaN (a NaN x). Pre-scale
/// clamps m / t at -FLT_MAX, so that a max whose scaled value overflows still gives exp(-inf) = 0.
template <race::ScalingOrder ORDER>
RACEORACLE_HOST_DEVICE inline float exponent(float x, float m_safe, float inv_t) {
  if (ORDER == race::ScalingOrder::post) return (x - m_safe) * inv_t;
  return scaled(x, inv_t) - fmaxf(m_safe * inv_t, -0x1.fffffep127f);
}

/// Stage 2's rescale of a tile's key from its tile max to the row's: exp of this.
RACEORACLE_HOST_DEVICE inline float rescale_exponent(float tile_m, float row_m_safe, float inv_t) {
  return (tile_m - row_m_safe) * inv_t;
}

}  // namespace raceoracle::kernels::keys
