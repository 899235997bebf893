#pragma once
/// Deliberate defects (SPEC §6). A mutant is the kernel compiled with one of
/// these as a template argument: the defect is a compile-time switch in the
/// kernel source, never a copy of the kernel. `none` is the real kernel.
#include <cstdint>

namespace raceoracle::kernels {

enum class Defect : std::uint8_t {
  none,
  no_m_safe,        ///< no `m_safe` guard: an all -inf tile computes exp(-inf - -inf) = NaN
  high_id_tie,      ///< ties go to the highest id (within tiles and across them)
  result_clamp,     ///< stage 2 clamps the token into [0, V): an escaped sentinel is hidden
  no_rescale,       ///< stage 2 drops exp((m_t - mm) * inv_t)
  wrong_rescale,    ///< stage 2 rescales by exp(m_t - mm), forgetting inv_t
  strict_greedy,    ///< greedy test `T < greedy_eps` instead of `<=`
  greedy_scaled,    ///< greedy argmax over x * inv_t instead of the raw logits
  tail_unmasked,    ///< the last tile's lanes past the vocab are not masked
  offsets_32bit,    ///< row offsets computed in 32 bits
  noise_stride,     ///< noise rows addressed with the logits' row stride
  nan_max,          ///< the tile/row max propagates NaN instead of ignoring it
  fast_exp,         ///< a fast-math exp (~1e-3 relative error) in the race keys
  missing_barrier,  ///< the block reduction reads shared memory without __syncthreads
};

const char* to_string(Defect d);

}  // namespace raceoracle::kernels
