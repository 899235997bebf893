#pragma once
/// A kernel's numerics contract (SPEC §3): what the error model needs to know
/// about how a kernel computes its fp32 keys. Every field is an input taken
/// from the platform's published figures, never a tolerance tuned to pass.
#include "oracle/row.h"

namespace raceoracle::oracle {

/// Where the kernel applies 1/t (SPEC §2).
///   post: m = max(x), exp((x - m) * inv_t)      (production order)
///   pre : xs = x * inv_t, m = max(xs), exp(xs - m)
enum class ScalingOrder : std::uint8_t { post, pre };
const char* to_string(ScalingOrder s);

struct NumericsContract {
  ScalingOrder order = ScalingOrder::post;
  /// Maximum error, in ulps of the result, of the kernel's expf (glibc: 1,
  /// CUDA expf: 2, HIP/OCML expf: 1 on [-10, 10]). Below 0.5 means 0.5:
  /// nothing rounds better than correctly.
  double exp_ulp = 2.0;
  /// Error of fp32 division and of the reciprocal 1/t (IEEE '/': 0.5).
  double div_ulp = 0.5;
  /// expf used by the fused kernel's stage-2 rescale.
  double rescale_ulp = 2.0;
  /// true for the two-stage fused kernel (a rescale exp and multiply per key).
  bool two_stage = true;
  /// Logit storage: informational, both widen exactly.
  Dtype logits = Dtype::bf16;
};

}  // namespace raceoracle::oracle
