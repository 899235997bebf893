#include "cli/bench.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command_support.h"
#include "io/table.h"
#include "kernels/device_memory.h"
#include "kernels/host_api.h"

namespace raceoracle::cli {
namespace {

/// A cell's machine-readable columns (the JSON report's `results`).
const std::vector<io::Column<bench::Cell>> kCellColumns{
    {{"dtype"}, [](const bench::Cell& c) { return c.dtype; }},
    {{"rows"}, [](const bench::Cell& c) { return c.rows; }},
    {{"kernel"}, [](const bench::Cell& c) { return c.kernel; }},
    {{"launch"}, [](const bench::Cell& c) { return c.launch; }},
    {{"block_v"}, [](const bench::Cell& c) { return c.block_v; }},
    {{"median_us"}, [](const bench::Cell& c) { return c.us.median; }},
    {{"min_us"}, [](const bench::Cell& c) { return c.us.min; }},
    {{"max_us"}, [](const bench::Cell& c) { return c.us.max; }},
    {{"bytes"}, [](const bench::Cell& c) { return c.bytes; }},
    {{"bandwidth_bytes_per_s"}, [](const bench::Cell& c) { return c.bandwidth; }},
    {{"fraction_of_copy"}, [](const bench::Cell& c) { return c.fraction_of_copy; }},
};

}  // namespace

int bench(const BenchOptions& o) {
  if (kernels::device_count() == 0) {
    std::fprintf(stderr, "raceoracle bench: no %s device found\n", kernels::backend_name());
    return 2;
  }
  bench::KernelTiming timing(o.timing);
  const bench::TimingSettings& s = timing.settings();
  const bench::DeviceFigures& d = timing.device();
  std::printf("raceoracle bench: backend %s, %s\n", kernels::backend_name(), kernels::device_description().c_str());
  if (std::string(kernels::backend_name()) == "cpu") std::printf("NOTE: cpu backend: timings of the HIP-on-CPU layer, NOT a GPU figure\n");
  if (s.verifying())
    std::printf("verify step: rows = requests of %lld drafts (%lld target rows each), every draft accepted, then the "
                "bonus race; bytes = the target rows and one noise row\n",
                static_cast<long long>(s.verify_drafts), static_cast<long long>(s.verify_drafts + 1));
  std::string block_v = std::to_string(s.block_v);
  if (!s.block_v) {  // the kernels' own choice, row count by row count
    block_v = "by rows (";
    for (std::int64_t r : s.rows)
      block_v += (r == s.rows.front() ? "" : ", ") + std::to_string(r) + ": " + std::to_string(kernels::tiling_for_rows(r).block_v);
    block_v += ")";
  }
  std::printf("V=%lld, BLOCK_V=%s, %s rows, %d samples x %d launches per cell, inputs rotated over %lld rows (%.0f MB; L2 %.0f MB)\n",
              static_cast<long long>(s.vocab), block_v.c_str(), bench::describe(s.rows_like), s.samples,
              s.per_sample, static_cast<long long>(d.pool_rows), double(d.pool_rows * s.vocab * 8) / 1e6,
              double(d.l2_bytes) / 1e6);
  if (race::filtered(s.filter, s.vocab))
    std::printf("filters (the kernels that apply them): top_k=%d top_p=%g min_p=%g\n", s.filter.top_k, double(s.filter.top_p),
                double(s.filter.min_p));
  std::printf("device copy bandwidth: %.0f GB/s (median of %zu, read + write)\n", d.copy_bandwidth / 1e9, d.copy_samples);
  std::printf("two empty launches: %.2f us median [%.2f .. %.2f]\n", d.two_empty_launches.median,
              d.two_empty_launches.min, d.two_empty_launches.max);
  std::printf("launched call by call on the default stream%s\n\n",
              s.graph ? "; KERNEL+graph: replayed from graphs of the sample's launches on a stream of its own" : "");
  std::vector<bench::Cell> all;
  for (const auto& dt : s.dtypes) {
    std::printf("logits %s\n%6s", dt.c_str(), "rows");
    for (const auto& k : s.kernels)
      for (const char* launch : {"", "+graph"})
        if (*launch == 0 || s.graph) std::printf(" | %-34s", (k + launch + ": us [min..max]  GB/s  %copy").c_str());
    // The ratio of the fused kernel to the one it replaces, measured in the same run.
    const std::string fused = s.verifying() ? "verify-fused" : "fused-post", base = s.verifying() ? "verify-probs" : "baseline";
    std::printf(" | %s/%s\n", fused.c_str(), base.c_str());
    for (std::int64_t r : s.rows) {
      std::map<std::string, bench::Stats> median;
      std::printf("%6lld", static_cast<long long>(r));
      for (const bench::Cell& c : timing.time_rows(dt, r)) {
        std::printf(" | %8.2f [%7.2f..%8.2f] %6.0f %5.1f%%", c.us.median, c.us.min, c.us.max, c.bandwidth / 1e9,
                    100 * c.fraction_of_copy);
        if (c.launch == "direct") median[c.kernel] = c.us;
        all.push_back(c);
      }
      if (median.count(fused) && median.count(base)) std::printf(" | %.3f", median[fused].median / median[base].median);
      std::printf("\n");
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  if (o.json.empty()) return 0;
  const nlohmann::json report{{"backend", kernels::backend_name()}, {"device", kernels::device_description()},
                              {"vocab", s.vocab}, {"block_v", s.block_v}, {"rows_like", bench::to_string(s.rows_like)},
                              {"top_k", s.filter.top_k}, {"verify_drafts", s.verify_drafts}, {"top_p", s.filter.top_p}, {"min_p", s.filter.min_p},
                              {"samples", s.samples}, {"launches_per_sample", s.per_sample}, {"graph", s.graph},
                              {"copy_bandwidth_bytes_per_s", d.copy_bandwidth},
                              {"two_empty_launches_us", d.two_empty_launches.median},
                              {"results", io::make_table(kCellColumns, all).json()}};
  write_file(o.json, report.dump(2) + "\n");
  return 0;
}

}  // namespace raceoracle::cli
