#pragma once
/// The inputs of the exponential race, as the oracle reads them (SPEC §1).
/// Views only: the oracle never owns or copies a batch.
#include <cstdint>
#include <string>

namespace raceoracle::oracle {

/// Logit storage. bf16 is the upper half of an fp32; both widen exactly to double.
enum class Dtype : std::uint8_t { f32, bf16 };
const char* to_string(Dtype d);
std::size_t size_of(Dtype d);

/// The two fp32 constants of the race. Separate roles even when equal.
struct RaceConstants {
  float eps = 1e-10f;         ///< race denominator: key = softmax / (E + eps)
  float greedy_eps = 1e-10f;  ///< a row is greedy iff T <= greedy_eps, compared in fp32
};

/// The clamp the definition applies to sampling temperatures: t = max(T, 1e-5f).
inline constexpr float kMinTemperature = 1e-5f;

/// One row: `vocab` logits of `dtype`, `vocab` fp32 noise draws, one temperature.
struct RowView {
  const void* logits = nullptr;
  Dtype dtype = Dtype::f32;
  const float* noise = nullptr;
  std::int64_t vocab = 0;
  float temperature = 0.0f;

  double logit(std::int64_t i) const;  ///< widened exactly
};

/// A batch `[rows, vocab]` with 64-bit row strides in elements. `noise_stride`
/// may be 0: one noise row shared by every row (what `verify` accepts as [1, V]).
struct BatchView {
  const void* logits = nullptr;
  Dtype dtype = Dtype::f32;
  std::int64_t rows = 0;
  std::int64_t vocab = 0;
  std::int64_t logit_stride = 0;
  const float* noise = nullptr;
  std::int64_t noise_stride = 0;
  const float* temperatures = nullptr;

  RowView row(std::int64_t r) const;
};

/// Throws std::invalid_argument naming the offending field when the shape,
/// strides or pointers of `b` cannot describe a batch.
void validate(const BatchView& b);

}  // namespace raceoracle::oracle
