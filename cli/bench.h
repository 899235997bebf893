#pragma once
/// `raceoracle bench`: the kernels' timings (bench/kernel_timing.h) printed
/// as a table, kernels side by side, and written as JSON.
#include <string>

#include "bench/kernel_timing.h"

namespace raceoracle::cli {

struct BenchOptions {
  bench::TimingSettings timing;
  std::string json;
};
int bench(const BenchOptions& o);

}  // namespace raceoracle::cli
