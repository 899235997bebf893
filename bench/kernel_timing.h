#pragma once
/// `raceoracle bench`'s measurements: device-event timings of the kernels on
/// LLM-like rows rotated over a pool larger than L2, against the device's copy
/// bandwidth and two empty launches measured in the same run.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "race/definition.h"

namespace raceoracle::bench {

enum class RowsLike { llm, flat, wide, spread };
struct RowsLikeName {
  RowsLike like;
  const char* name;  ///< the flag's word and the JSON's
  const char* what;  ///< for help and the bench's header line
};
inline constexpr RowsLikeName kRowsLikeNames[] = {
    {RowsLike::llm, "llm", "LLM-like"},
    {RowsLike::flat, "flat", "flat (every logit 0: a kernel that draws its noise draws all of it)"},
    {RowsLike::wide, "wide", "wide (N(0, 5^2))"},
    {RowsLike::spread, "spread", "spread (uniform over 30 units)"}};
const char* to_string(RowsLike r);
const char* describe(RowsLike r);

struct TimingSettings {
  std::vector<std::int64_t> rows;  ///< default: 1 4 8 16 32 64 128 256 (gpu), 1 8 (cpu)
  std::int64_t vocab = 163840;
  std::vector<std::string> dtypes{"bf16", "f32"};
  std::vector<std::string> kernels;  ///< default: every real kernel
  int samples = 0;      ///< timed samples per cell (0: 30 on a GPU, 3 on cpu)
  int per_sample = 0;   ///< launches per sample (0: 20 on a GPU, 1 on cpu)
  int block_v = 0;  ///< the fused tile size; 0: kernels::tiling_for_rows
  /// The rows' logits: LLM-like (fixtures/llm_like.h), flat (every logit 0:
  /// every id can win), wide (N(0, 5^2), no peaks), or spread (uniform over 30
  /// units). A screen that skips work for ids that cannot win is measured on
  /// each (the kernels that read their noise do the same work on all).
  RowsLike rows_like = RowsLike::llm;
  /// Every row's filters for a kernel that applies them (SPEC §9; the others
  /// race unfiltered). Default: none.
  race::RowFilter filter;
  /// >= 0: time the verify kernels (SPEC §11) instead, on requests of this
  /// many drafts (`rows` counts requests, each k + 1 target rows); every
  /// draft accepted (u = 0), the chain's longest walk, then the bonus race.
  std::int64_t verify_drafts = -1;
  bool verifying() const { return verify_drafts >= 0; }
  /// Each cell timed twice: launched call by call on the default stream, and
  /// replayed from graphs of `per_sample` launches on a stream of its own (as
  /// engines run their decode step: no host launch work timed). GPU backends.
  bool graph = false;
};

struct Stats {
  double median = 0, min = 0, max = 0;  ///< microseconds per launch
};

/// One kernel at one batch shape.
struct Cell {
  std::string dtype, kernel;
  std::int64_t rows = 0;
  int block_v = 0;  ///< the fused kernels' tile size
  std::string launch = "direct";  ///< "direct" (call by call) or "graph" (replayed)
  Stats us;
  /// What the step must read: logits (and noise read), plus stage-1 partials
  /// written and read; a verify step: its k + 1 target rows and a noise row.
  double bytes = 0;
  double bandwidth = 0;          ///< bytes / median, bytes per second
  double fraction_of_copy = 0;   ///< of the device's copy bandwidth
};

/// What the cells are measured against, measured first.
struct DeviceFigures {
  double copy_bandwidth = 0;  ///< bytes read + written per second, median
  std::size_t copy_samples = 0;
  Stats two_empty_launches;
  std::int64_t pool_rows = 0;  ///< rows the inputs rotate over
  std::size_t l2_bytes = 0;
};

class KernelTiming {
 public:
  /// Fills the backend's defaults, refuses an unknown kernel
  /// (std::invalid_argument), allocates the pool and measures the device.
  /// The caller checks that a device is present.
  explicit KernelTiming(TimingSettings s);
  ~KernelTiming();
  const TimingSettings& settings() const { return s_; }
  const DeviceFigures& device() const { return device_; }
  /// Every kernel at `rows` rows of `dtype` (the pool refilled when the dtype changes).
  std::vector<Cell> time_rows(const std::string& dtype, std::int64_t rows);

 private:
  std::vector<Cell> time_verify(race::Dtype dtype, std::int64_t requests);
  /// `launch(i)` (each call its own window of `windows`), timed each way asked:
  /// one Stats per launch mode, direct first.
  std::vector<std::pair<std::string, Stats>> time(const std::function<void(int)>& launch, std::int64_t windows) const;
  Cell cell(const std::string& dtype, const std::string& kernel, std::int64_t rows, const std::string& launch,
            const Stats& us, double bytes) const;
  struct Pool;
  TimingSettings s_;
  DeviceFigures device_;
  std::unique_ptr<Pool> pool_;
  std::string filled_;  ///< the dtype the pool holds
};

}  // namespace raceoracle::bench
