#include "cli/bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command_support.h"
#include "fixtures/batch.h"
#include "fixtures/llm_like.h"
#include "kernels/device_memory.h"
#include "kernels/registry.h"

namespace raceoracle::cli {
namespace {

struct Stats {
  double median = 0, min = 0, max = 0;  ///< microseconds per launch
};
Stats stats(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front(), us.back()};
}

/// Random inputs for `pool_rows` rows (at least 4x L2), of which each launch
/// reads the next window, round the pool across samples: a window is read
/// again only after the whole pool, so no launch finds its inputs in L2.
struct Pool {
  std::int64_t rows = 0, vocab = 0;
  kernels::DeviceArray<unsigned char> logits;
  kernels::DeviceArray<float> noise, temps;
  kernels::DeviceArray<std::uint64_t> seeds, offsets;  ///< per row: what a kernel that draws its noise reads
  kernels::DeviceArray<std::int32_t> tokens;

  Pool(std::int64_t rows_, std::int64_t vocab_) : rows(rows_), vocab(vocab_) {
    logits = kernels::DeviceArray<unsigned char>(std::size_t(rows * vocab * 4));
    noise = kernels::DeviceArray<float>(std::size_t(rows * vocab));
    tokens = kernels::DeviceArray<std::int32_t>(std::size_t(rows));
    std::vector<float> t(static_cast<std::size_t>(rows));
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = i % 4 == 0 ? 0.0f : 0.7f;  // a quarter greedy rows
    temps = kernels::DeviceArray<float>(t);
    std::vector<std::uint64_t> s(static_cast<std::size_t>(rows)), off(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = 0x9E3779B97F4A7C15ull * (i + 1), off[i] = i << 33;
    seeds = kernels::DeviceArray<std::uint64_t>(s);
    offsets = kernels::DeviceArray<std::uint64_t>(off);
  }
  /// Fresh LLM-like rows (fixtures/llm_like.h), generated for a block of rows
  /// on the host and tiled over the pool on the device.
  void fill(oracle::Dtype dtype, std::uint64_t seed, bool flat) {
    const std::int64_t block = std::min<std::int64_t>(rows, 16);
    fixtures::Batch b = fixtures::Batch::make(block, vocab, dtype);
    if (flat) fixtures::fill_exp1_noise(b, seed);  // logits stay 0
    else fixtures::fill_llm_like(b, seed);
    const std::size_t esize = oracle::size_of(dtype);
    kernels::copy_to_device(logits.get(), b.storage(), std::size_t(block * vocab) * esize);
    kernels::copy_to_device(noise.get(), b.noise.data(), b.noise.size() * 4);
    for (std::int64_t r = block; r < rows; r += block) {
      const std::int64_t n = std::min(block, rows - r);
      kernels::device_copy_async(logits.get() + std::size_t(r * vocab) * esize, logits.get(), std::size_t(n * vocab) * esize);
      kernels::device_copy_async(noise.get() + r * vocab, noise.get(), std::size_t(n * vocab) * 4);
    }
    kernels::device_synchronize();
  }
  kernels::SampleArgs window(oracle::Dtype dtype, std::int64_t r, std::int64_t i) const {
    const std::int64_t windows = std::max<std::int64_t>(1, rows / r), w = i % windows;
    kernels::SampleArgs a;
    a.logits = logits.get() + std::size_t(w * r * vocab) * oracle::size_of(dtype);
    a.dtype = dtype;
    a.rows = r;
    a.vocab = vocab;
    a.logit_stride = vocab;
    a.noise = noise.get() + w * r * vocab;
    a.noise_stride = vocab;
    a.seeds = seeds.get() + w * r;
    a.offsets = offsets.get() + w * r;
    a.temperatures = temps.get() + w * r;
    a.tokens = tokens.get();
    return a;
  }
};

}  // namespace

int bench(const BenchOptions& in) {
  BenchOptions o = in;
  const bool cpu = std::string(kernels::backend_name()) == "cpu";
  if (kernels::device_count() == 0) {
    std::fprintf(stderr, "raceoracle bench: no %s device found\n", kernels::backend_name());
    return 2;
  }
  if (o.rows.empty()) o.rows = cpu ? std::vector<std::int64_t>{1, 8} : std::vector<std::int64_t>{1, 4, 8, 16, 32, 64, 128, 256};
  if (o.samples <= 0) o.samples = cpu ? 3 : 30;
  if (o.per_sample <= 0) o.per_sample = cpu ? 1 : 20;
  if (o.kernels.empty())
    for (const kernels::Kernel& k : kernels::kernels()) o.kernels.push_back(k.name);
  for (const auto& n : o.kernels)
    if (!kernels::find_kernel(n)) throw std::invalid_argument("unknown kernel '" + n + "'; known: " + kernels::kernel_names());
  const std::int64_t max_rows = *std::max_element(o.rows.begin(), o.rows.end());
  // A pool of at least 4x L2 per window set (and 2x the largest batch).
  const std::size_t l2 = kernels::device_l2_bytes();
  const std::int64_t pool_rows = std::max<std::int64_t>(
      2 * max_rows, cpu ? 0 : std::int64_t(4 * l2 / std::size_t(o.vocab * 2)) + 1);
  Pool pool(pool_rows, o.vocab);

  std::printf("raceoracle bench: backend %s, %s\n", kernels::backend_name(), kernels::device_description().c_str());
  if (cpu) std::printf("NOTE: cpu backend: timings of the HIP-on-CPU layer, NOT a GPU figure\n");
  std::printf("V=%lld, BLOCK_V=%d, %s rows, %d samples x %d launches per cell, inputs rotated over %lld rows (%.0f MB; L2 %.0f MB)\n",
              static_cast<long long>(o.vocab), o.block_v, o.flat ? "flat (every logit 0)" : "LLM-like", o.samples,
              o.per_sample, static_cast<long long>(pool_rows),
              double(pool_rows * o.vocab * 8) / 1e6, double(l2) / 1e6);

  // The device's copy bandwidth (bytes read + written), and two empty launches.
  const std::size_t copy_bytes = std::size_t(pool_rows * o.vocab * 4) / 2;
  std::vector<double> copy_bw, empty_us;
  for (int s = 0; s < std::max(3, o.samples / 3); ++s) {
    const double ms = kernels::time_launches(
        [&](int) { kernels::device_copy_async(pool.noise.get() + pool_rows * o.vocab / 2, pool.noise.get(), copy_bytes); }, 1);
    copy_bw.push_back(2.0 * double(copy_bytes) / (ms * 1e-3));
    empty_us.push_back(1e3 * kernels::time_launches([](int) { kernels::launch_empty_kernel(); kernels::launch_empty_kernel(); }, o.per_sample) /
                       o.per_sample);
  }
  const double copy = stats(copy_bw).median;
  const Stats empty = stats(empty_us);
  std::printf("device copy bandwidth: %.0f GB/s (median of %zu, read + write)\n", copy / 1e9, copy_bw.size());
  std::printf("two empty launches: %.2f us median [%.2f .. %.2f]\n\n", empty.median, empty.min, empty.max);

  nlohmann::json report{{"backend", kernels::backend_name()}, {"device", kernels::device_description()},
                        {"vocab", o.vocab}, {"block_v", o.block_v}, {"rows_like", o.flat ? "flat" : "llm"},
                        {"samples", o.samples},
                        {"launches_per_sample", o.per_sample}, {"copy_bandwidth_bytes_per_s", copy},
                        {"two_empty_launches_us", empty.median}};
  kernels::RunOptions run;
  run.config.block_v = o.block_v;
  run.synchronize = false;
  for (const auto& dt : o.dtypes) {
    const oracle::Dtype dtype = dt == "f32" ? oracle::Dtype::f32 : oracle::Dtype::bf16;
    pool.fill(dtype, 42, o.flat);
    std::printf("logits %s\n%6s", dt.c_str(), "rows");
    for (const auto& k : o.kernels) std::printf(" | %-34s", (k + ": us [min..max]  GB/s  %copy").c_str());
    std::printf(" | fused-post/baseline\n");
    for (std::int64_t r : o.rows) {
      std::map<std::string, Stats> cell;
      std::printf("%6lld", static_cast<long long>(r));
      for (const auto& name : o.kernels) {
        const kernels::Kernel& k = *kernels::find_kernel(name);
        std::int64_t next = 0;  // one cursor for the warm-up and every sample: never back to window 0
        auto launch = [&](int) {
          const kernels::Status s = k.run(pool.window(dtype, r, next++), run);
          if (!s.ok) throw std::runtime_error(name + ": " + s.message);
        };
        kernels::time_launches(launch, std::min(o.per_sample, 5));  // warm-up
        std::vector<double> us;
        for (int s = 0; s < o.samples; ++s) us.push_back(1e3 * kernels::time_launches(launch, o.per_sample) / o.per_sample);
        const Stats st = stats(us);
        cell[name] = st;
        const double tiles = double((o.vocab + o.block_v - 1) / o.block_v);
        const double noise_bytes = k.noise == kernels::NoiseSource::tensor ? 4.0 : 0.0;  // drawn: none read
        const double bytes = double(r) * double(o.vocab) * (double(oracle::size_of(dtype)) + noise_bytes) +
                             (k.has_partials() ? double(r) * tiles * 12 * 2 : 0.0);
        const double bw = bytes / (st.median * 1e-6);
        std::printf(" | %8.2f [%7.2f..%8.2f] %6.0f %5.1f%%", st.median, st.min, st.max, bw / 1e9, 100 * bw / copy);
        report["results"].push_back({{"dtype", dt}, {"rows", r}, {"kernel", name}, {"median_us", st.median},
                                     {"min_us", st.min}, {"max_us", st.max}, {"bytes", bytes},
                                     {"bandwidth_bytes_per_s", bw}, {"fraction_of_copy", bw / copy}});
      }
      if (cell.count("fused-post") && cell.count("baseline"))
        std::printf(" | %.3f", cell["fused-post"].median / cell["baseline"].median);
      std::printf("\n");
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  if (!o.json.empty()) write_file(o.json, report.dump(2) + "\n");
  return 0;
}

}  // namespace raceoracle::cli
