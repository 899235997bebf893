#include "analysis/key_emulation.h"

#include <cmath>

#include "kernels/key_arithmetic.h"

namespace raceoracle::analysis {

namespace keys = kernels::keys;

float emulated_stage1_key(float x, float e, float eps, float T, float tile_max, race::ScalingOrder order) {
  const float inv_t = keys::inverse_temperature(T), m_safe = keys::guard_max(tile_max);
  const float a = order == race::ScalingOrder::post ? keys::exponent<race::ScalingOrder::post>(x, m_safe, inv_t)
                                                    : keys::exponent<race::ScalingOrder::pre>(x, m_safe, inv_t);
  return std::exp(a) / (e + eps);
}

float emulated_key(float x, float e, float eps, float T, float tile_max, float row_max, race::ScalingOrder order) {
  const float inv_t = keys::inverse_temperature(T);
  return emulated_stage1_key(x, e, eps, T, tile_max, order) *
         std::exp(keys::rescale_exponent(tile_max, keys::guard_max(row_max), inv_t));
}

}  // namespace raceoracle::analysis
