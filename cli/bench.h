#pragma once
/// `raceoracle bench`: device-event timings of the fused kernels and the
/// baseline at the production vocab, against the device's measured copy
/// bandwidth and two empty launches, all in one run.
#include <cstdint>
#include <string>
#include <vector>

namespace raceoracle::cli {

struct BenchOptions {
  std::vector<std::int64_t> rows;  ///< default: 1 4 8 16 32 64 128 256 (gpu), 1 8 (cpu)
  std::int64_t vocab = 163840;
  std::vector<std::string> dtypes{"bf16", "f32"};
  std::vector<std::string> kernels;  ///< default: every real kernel
  int samples = 0;      ///< timed samples per cell (0: 30 on a GPU, 3 on cpu)
  int per_sample = 0;   ///< launches per sample (0: 20 on a GPU, 1 on cpu)
  int block_v = 4096;
  std::string json;
  /// Every logit 0 instead of LLM-like rows: every id can win, so a kernel
  /// that draws its noise draws all of it (its worst case).
  bool flat = false;
};
int bench(const BenchOptions& o);

}  // namespace raceoracle::cli
