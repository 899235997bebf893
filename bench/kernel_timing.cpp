#include "bench/kernel_timing.h"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "subject/batch.h"
#include "fixtures/llm_like.h"
#include "kernels/device_memory.h"
#include "kernels/registry.h"

namespace raceoracle::bench {

const char* to_string(RowsLike r) {
  for (const RowsLikeName& n : kRowsLikeNames)
    if (n.like == r) return n.name;
  return "?";
}

const char* describe(RowsLike r) {
  for (const RowsLikeName& n : kRowsLikeNames)
    if (n.like == r) return n.what;
  return "?";
}

namespace {

Stats stats(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front(), us.back()};
}

oracle::Dtype dtype_of(const std::string& name) { return name == "f32" ? oracle::Dtype::f32 : oracle::Dtype::bf16; }

}  // namespace

/// Random inputs for `rows` rows (at least 4x L2), of which each launch reads
/// the next window, round the pool across samples: a window is read again
/// only after the whole pool, so no launch finds its inputs in L2.
struct KernelTiming::Pool {
  std::int64_t rows = 0, vocab = 0;
  kernels::DeviceArray<unsigned char> logits;
  kernels::DeviceArray<float> noise, temps;
  kernels::DeviceArray<std::uint64_t> seeds, offsets;  ///< per row: what a kernel that draws its noise reads
  kernels::DeviceArray<std::int32_t> tokens;
  kernels::DeviceArray<race::RowFilter> filters;  ///< per row: what a kernel that filters reads

  Pool(std::int64_t rows_, std::int64_t vocab_, const race::RowFilter& filter) : rows(rows_), vocab(vocab_) {
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
    filters = kernels::DeviceArray<race::RowFilter>(std::vector<race::RowFilter>(s.size(), filter));
  }
  /// Fresh LLM-like rows (fixtures/llm_like.h), generated for a block of rows
  /// on the host and tiled over the pool on the device.
  void fill(oracle::Dtype dtype, std::uint64_t seed, RowsLike like) {
    const std::int64_t block = std::min<std::int64_t>(rows, 16);
    subject::Batch b = subject::Batch::make(block, vocab, dtype);
    switch (like) {
      case RowsLike::llm: fixtures::fill_llm_like(b, seed); break;
      case RowsLike::flat: fixtures::fill_exp1_noise(b, seed); break;  // logits stay 0
      case RowsLike::wide: fixtures::fill_llm_like(b, seed, {.sigma = 5.0f, .peak_one_in = 0}); break;
      case RowsLike::spread: {
        fixtures::fill_exp1_noise(b, seed);
        std::mt19937_64 rng(seed);
        std::uniform_real_distribution<float> u(-30.0f, 0.0f);
        for (std::int64_t r = 0; r < block; ++r)
          for (std::int64_t i = 0; i < vocab; ++i) b.x(r, i) = u(rng);
        b.round_logits();
        break;
      }
    }
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
  std::int64_t windows(std::int64_t r) const { return std::max<std::int64_t>(1, rows / r); }
  kernels::SampleArgs window(const kernels::Kernel& k, oracle::Dtype dtype, std::int64_t r, std::int64_t i) const {
    const std::int64_t w = i % windows(r);
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
    if (k.filters()) a.filters = filters.get() + w * r;
    return a;
  }
};

KernelTiming::KernelTiming(TimingSettings s) : s_(std::move(s)) {
  const bool cpu = std::string(kernels::backend_name()) == "cpu";
  if (s_.rows.empty()) s_.rows = cpu ? std::vector<std::int64_t>{1, 8} : std::vector<std::int64_t>{1, 4, 8, 16, 32, 64, 128, 256};
  if (s_.samples <= 0) s_.samples = cpu ? 3 : 30;
  if (s_.per_sample <= 0) s_.per_sample = cpu ? 1 : 20;
  if (s_.kernels.empty()) {
    if (s_.verifying())
      for (const kernels::VerifyKernel& k : kernels::verify_kernels()) s_.kernels.emplace_back(k.name);
    else
      for (const kernels::Kernel& k : kernels::kernels()) s_.kernels.push_back(k.name);
  }
  if (s_.graph && !kernels::graphs_supported())
    throw std::invalid_argument(std::string("--graph: the ") + kernels::backend_name() +
                                " backend has no graphs (the nvidia and amd builds have)");
  for (const auto& n : s_.kernels) {
    if (s_.verifying() && !kernels::find_verify_kernel(n))
      throw std::invalid_argument("unknown verify kernel '" + n + "'; known: verify-probs, verify-fused");
    if (!s_.verifying() && !kernels::find_kernel(n))
      throw std::invalid_argument("unknown kernel '" + n + "'; known: " + kernels::kernel_names());
  }
  // A verify request reads k + 1 target rows and, as noise, k draft-probability rows and two noise rows.
  const std::int64_t per_row = s_.verifying() ? s_.verify_drafts + 1 : 1;
  const std::int64_t max_rows = *std::max_element(s_.rows.begin(), s_.rows.end()) * per_row;
  // A pool of at least 4x L2 per window set (and 2x the largest batch).
  device_.l2_bytes = kernels::device_l2_bytes();
  device_.pool_rows = std::max<std::int64_t>(
      2 * max_rows, cpu ? 0 : std::int64_t(4 * device_.l2_bytes / std::size_t(s_.vocab * 2)) + 1);
  pool_ = std::make_unique<Pool>(device_.pool_rows, s_.vocab, s_.filter);

  // The device's copy bandwidth (bytes read + written), and two empty launches.
  const std::size_t copy_bytes = std::size_t(device_.pool_rows * s_.vocab * 4) / 2;
  std::vector<double> copy_bw, empty_us;
  for (int i = 0; i < std::max(3, s_.samples / 3); ++i) {
    const double ms = kernels::time_launches(
        [&](int) { kernels::device_copy_async(pool_->noise.get() + device_.pool_rows * s_.vocab / 2, pool_->noise.get(), copy_bytes); }, 1);
    copy_bw.push_back(2.0 * double(copy_bytes) / (ms * 1e-3));
    empty_us.push_back(1e3 * kernels::time_launches([](int) { kernels::launch_empty_kernel(); kernels::launch_empty_kernel(); }, s_.per_sample) /
                       s_.per_sample);
  }
  device_.copy_bandwidth = stats(copy_bw).median;
  device_.copy_samples = copy_bw.size();
  device_.two_empty_launches = stats(empty_us);
}

KernelTiming::~KernelTiming() = default;

std::vector<Cell> KernelTiming::time_rows(const std::string& dt, std::int64_t r) {
  const oracle::Dtype dtype = dtype_of(dt);
  if (filled_ != dt) pool_->fill(dtype, 42, s_.rows_like), filled_ = dt;
  if (s_.verifying()) return time_verify(dtype, r);
  kernels::RunOptions run;
  run.config = s_.block_v ? kernels::FusedConfig{s_.block_v, kernels::FusedConfig{}.threads} : kernels::tiling_for_rows(r);
  run.synchronize = false;
  std::vector<Cell> out;
  for (const auto& name : s_.kernels) {
    const kernels::Kernel& k = *kernels::find_kernel(name);
    std::int64_t next = 0;  // one cursor for the warm-up and every sample: never back to window 0
    auto launch = [&](int) {
      const kernels::Status st = k.run(pool_->window(k, dtype, r, next++), run);
      if (!st.ok) throw std::runtime_error(name + ": " + st.message);
    };
    const double tiles = double(kernels::tile_count(s_.vocab, run.config));
    const double noise_bytes = k.noise == kernels::NoiseSource::tensor ? 4.0 : 0.0;  // drawn: none read
    const double bytes = double(r) * double(s_.vocab) * (double(oracle::size_of(dtype)) + noise_bytes) +
                         (k.has_partials() ? double(r) * tiles * 12 * 2 : 0.0);
    for (const auto& [mode, us] : time(launch, pool_->windows(r))) {
      out.push_back(cell(dt, name, r, mode, us, bytes));
      out.back().block_v = run.config.block_v;
    }
  }
  return out;
}

Cell KernelTiming::cell(const std::string& dtype, const std::string& kernel, std::int64_t rows, const std::string& launch,
                        const Stats& us, double bytes) const {
  Cell c;
  c.dtype = dtype, c.kernel = kernel, c.rows = rows, c.launch = launch, c.us = us, c.bytes = bytes;
  c.bandwidth = c.bytes / (c.us.median * 1e-6);
  c.fraction_of_copy = c.bandwidth / device_.copy_bandwidth;
  return c;
}

std::vector<std::pair<std::string, Stats>> KernelTiming::time(const std::function<void(int)>& launch,
                                                             std::int64_t windows) const {
  std::vector<std::pair<std::string, Stats>> out;
  kernels::time_launches(launch, std::min(s_.per_sample, 5));  // warm-up: workspaces allocated, code loaded
  std::vector<double> us;
  for (int i = 0; i < s_.samples; ++i) us.push_back(1e3 * kernels::time_launches(launch, s_.per_sample) / s_.per_sample);
  out.emplace_back("direct", stats(us));
  if (!s_.graph) return out;
  // Graphs of per_sample launches, enough of them that their windows cover the
  // pool, replayed in turn: no replay finds its inputs in L2.
  const kernels::LaunchStream stream;
  std::vector<kernels::LaunchGraph> graphs;
  const std::int64_t count = std::max<std::int64_t>(1, (windows + s_.per_sample - 1) / s_.per_sample);
  for (std::int64_t g = 0; g < count; ++g) graphs.emplace_back(launch, s_.per_sample);
  std::size_t turn = 0;
  auto replay = [&](int) { graphs[turn++ % graphs.size()].replay(); };
  // Warm-up: each graph's first replay uploads it to the device (an engine replays its graphs many times).
  kernels::time_launches(replay, int(graphs.size()));
  us.clear();
  for (int i = 0; i < s_.samples; ++i) us.push_back(1e3 * kernels::time_launches(replay, 1) / s_.per_sample);
  out.emplace_back("graph", stats(us));
  return out;
}

std::vector<Cell> KernelTiming::time_verify(race::Dtype dtype, std::int64_t requests) {
  const std::int64_t k = s_.verify_drafts, V = s_.vocab, rows = requests * (k + 1);
  // The pool's rows in windows of `rows` target rows (logits) and of
  // `rows + requests` noise rows (k draft-probability rows and two noise rows a
  // request); every draft id 0, accepted at u = 0.
  kernels::DeviceArray<std::int32_t> ids(std::vector<std::int32_t>(std::size_t(std::max<std::int64_t>(1, requests * k)), 0));
  kernels::DeviceArray<double> uniforms(std::vector<double>(std::size_t(std::max<std::int64_t>(1, requests * k)), 0.0));
  kernels::DeviceArray<std::int32_t> tokens(static_cast<std::size_t>(rows));
  kernels::DeviceArray<float> temps(std::vector<float>(std::size_t(requests), 0.7f));  // no greedy request
  const std::int64_t windows = std::max<std::int64_t>(1, pool_->rows / (rows + requests));
  std::vector<Cell> out;
  for (const auto& name : s_.kernels) {
    const kernels::VerifyKernel& vk = *kernels::find_verify_kernel(name);
    kernels::DeviceArray<unsigned char> scratch(vk.scratch_bytes(requests, k, V));
    std::int64_t next = 0;
    auto launch = [&](int) {
      const std::int64_t w = next++ % windows, base = w * (rows + requests);
      kernels::VerifyArgs a;
      a.target = pool_->logits.get() + std::size_t(w * rows * V) * oracle::size_of(dtype);
      a.dtype = dtype;
      a.requests = requests, a.drafts = k, a.vocab = V, a.target_stride = V;
      a.draft_ids = ids.get();
      a.draft_probs = k > 0 ? pool_->noise.get() + base * V : nullptr;
      a.uniforms = uniforms.get();
      a.recovery_noise = pool_->noise.get() + (base + requests * k) * V;
      a.bonus_noise = a.recovery_noise;
      a.temperatures = temps.get();
      a.tokens = tokens.get();
      if (race::filtered(s_.filter, V)) a.filters = pool_->filters.get();  // --top-k/--top-p/--min-p, every request
      const kernels::Status st = vk.launch(a, kernels::Defect::none, scratch.get());
      if (!st.ok) throw std::runtime_error(name + ": " + st.message);
    };
    const double bytes = double(rows) * double(V) * double(oracle::size_of(dtype)) + double(requests) * double(V) * 4.0;
    for (const auto& [mode, us] : time(launch, windows))
      out.push_back(cell(oracle::to_string(dtype), name, requests, mode, us, bytes));
  }
  return out;
}

}  // namespace raceoracle::bench
