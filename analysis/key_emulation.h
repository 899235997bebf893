#pragma once
/// The fused kernels' fp32 keys computed on the host, with the kernels' own
/// arithmetic (kernels/key_arithmetic.h) and the host's expf, given the
/// tile's and the row's maxima: what `divergence` measures against float64.
/// On the cpu backend, whose kernels use the same expf, stage 1 equals the
/// kernel's partials bit for bit (tests/analysis/key_emulation_tests.cpp).
#include "race/definition.h"

namespace raceoracle::analysis {

/// A tile's fp32 key of one id: exp((x - m_t) / t) / (E + eps) in the order's operations.
float emulated_stage1_key(float x, float e, float eps, float T, float tile_max, race::ScalingOrder order);
/// The full two-stage key: the stage-1 key rescaled from the tile's max to the row's.
float emulated_key(float x, float e, float eps, float T, float tile_max, float row_max, race::ScalingOrder order);

}  // namespace raceoracle::analysis
