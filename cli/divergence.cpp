#include "cli/divergence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "analysis/divergence_state.h"
#include "cli/command_support.h"
#include "cli/devices.h"
#include "cli/html_report.h"
#include "cli/verify.h"
#include "io/files.h"
#include "io/table.h"
#include "kernels/registry.h"

namespace raceoracle::cli {
namespace {

using analysis::DivergenceRow;
using analysis::SamplerDivergence;

void write_beside(const std::vector<SamplerDivergence>& beside, const std::string& dir, const std::string& name) {
  const io::Table t = io::make_table(analysis::sampler_columns(), beside);
  std::printf("%s", t.text().c_str());
  io::write_file(dir + "/sampler.csv", t.csv());
  io::write_file(dir + "/sampler.json", nlohmann::json{{"sampler", name}, {"rows", t.json()}}.dump(2) + "\n");
  std::printf("wrote %s/sampler.csv, %s/sampler.json\n", dir.c_str(), dir.c_str());
}

int verdict(const analysis::DivergenceResult& res, const char* pass) {
  const bool ok = res.failures() == 0;
  std::printf("verdict: %s\n", ok ? pass : "FAIL");
  return ok ? 0 : 1;
}

int compare(const DivergenceOptions& o) {
  if (o.dumps.size() != 2) throw std::invalid_argument("divergence compares two dumps: A.safetensors B.safetensors");
  const auto res = analysis::compare_dumps(o.dumps[0], o.dumps[1]);
  std::printf("raceoracle divergence: %s beside %s, same inputs and noise (each judged under its own contract):\n",
              o.dumps[1].c_str(), o.dumps[0].c_str());
  // The table; files only when --out asks for them.
  if (o.out_given) {
    std::filesystem::create_directories(o.out_dir);
    write_beside(res.beside, o.out_dir, o.dumps[1]);
  } else {
    std::printf("%s", io::make_table(analysis::sampler_columns(), res.beside).text().c_str());
  }
  std::vector<std::string> unexplained;
  for (const auto& d : res.beside)
    for (const auto& row : d.unexplained_rows) unexplained.push_back(row), std::printf("  UNEXPLAINED %s\n", row.c_str());
  const std::string heading = fmt::format("{} beside {}, same inputs and noise (each judged under its own contract)",
                                          o.dumps[1], o.dumps[0]);
  std::printf("(the reference: %s; the other: %s)\n", o.dumps[0].c_str(), o.dumps[1].c_str());
  std::printf("%s", res.noise.describe().c_str());
  if (!o.html.empty())
    write_file(o.html, html_of_comparison(heading, io::make_table(analysis::sampler_columns(), res.beside), unexplained,
                                          res.noise.describe(), res.failures() == 0));
  return verdict(res, "PASS (every difference explained)");
}

/// What the rows are, in words.
std::string source_of(const analysis::DivergenceOptions& s) {
  if (!s.logits_file.empty()) return s.logits_file + " (rows reused with fresh Exp(1) noise)";
  if (s.normal_sigma > 0)
    return fmt::format("V={}, N({:g}, {:g}^2) {} logits", s.vocab, s.normal_centre, s.normal_sigma, oracle::to_string(s.dtype));
  return fmt::format("V={}, LLM-like {} logits", s.vocab, oracle::to_string(s.dtype));
}

void print_heading(const analysis::DivergenceOptions& s, const std::string& backend) {
  std::printf("raceoracle divergence: %lld rows x %d batch(es) per temperature, %s, backend %s%s\n",
              static_cast<long long>(s.rows), s.batches, source_of(s).c_str(), backend.c_str(),
              s.shard.count > 1 ? (", shard " + s.shard.str()).c_str() : "");
}

/// Where a study's report goes: files in `out_dir` (none when empty) and an HTML page.
struct StudyFiles {
  std::string out_dir, html;
};

/// The study's tables printed, its files written, its verdict.
int report(const analysis::DivergenceOptions& s, const analysis::DivergenceResult& res, const std::string& sampler,
           const std::string& backend, const StudyFiles& files) {
  if (!res.method.empty()) std::printf("rows: %s\n", res.method.c_str());
  const io::Table t = io::make_table(analysis::divergence_columns(), res.rows);
  const std::string keys = analysis::keys_label(s);
  std::printf("\nfp32 key error, %s (float64 reference, the fused kernel's operation order;\n"
              "off max: those whose logit is not their tile's max, where x - m_t is not 0):\n%s",
              keys.c_str(),
              t.text({"temperature", "order", "rows", "keys", "max_actual_rel_error", "rms_actual_rel_error", "off_max_keys",
                      "rms_off_max_rel_error", "max_bound", "worst_ratio", "median_winner_bound", "kernel_stage1_ratio",
                      "fused_explained", "fused_unexplained", "baseline_explained", "baseline_unexplained"})
                  .c_str());
  std::printf("\nHow often two samplers under the contract may disagree (rows whose top-two keys lie within the bound):\n%s",
              t.text({"temperature", "order", "rate_exp_ulp", "rate_div_ulp", "rate", "rate_lo", "rate_hi", "ambiguous_rows",
                      "count_agrees", "rate_window", "rate_in_window", "rate_flatness_p"})
                  .c_str());
  std::printf("(estimate: the density of the top-two gap near 0, read over the window, times each row's tolerated gap;\n"
              " counted: rows with more than one legitimate id; the count agrees when its own exact 95%% interval meets the estimate's)\n");
  std::vector<DivergenceRow> pre_rows;
  for (const auto& r : res.rows)
    if (r.apart_measured) pre_rows.push_back(r);
  std::printf("\nfused-pre beside fused-post on the same inputs: how often they pick different ids\n"
              "(predicted: each row's top-two gap against the gap below which their fp32 keys, emulated, rank the pair\n"
              " differently; counted: %s):\n%s",
              s.kernels ? "the kernels' tokens" : "the emulated tokens",
              io::make_table(analysis::divergence_columns(), pre_rows)
                  .text({"temperature", "rows", "apart_rate", "apart_lo", "apart_hi", "apart_in_window", "apart_mean_width",
                         "apart_counted", "apart_count_agrees"})
                  .c_str());
  if (std::any_of(pre_rows.begin(), pre_rows.end(), [](const DivergenceRow& r) { return r.base_apart_measured; })) {
    std::printf("\nThe single-pass baseline beside fused-post on the same inputs: how often they pick different ids\n"
                "(predicted: as above, from the baseline's race emulated thread by thread, analysis/baseline_emulation.h;\n"
                " counted: %s):\n%s",
                s.kernels ? "the kernels' tokens" : "the emulated tokens",
                io::make_table(analysis::divergence_columns(), pre_rows)
                    .text({"temperature", "rows", "baseline_apart_rate", "baseline_apart_lo", "baseline_apart_hi",
                           "baseline_apart_in_window", "baseline_apart_mean_width", "baseline_apart_counted",
                           "baseline_apart_count_agrees"})
                    .c_str());
  }
  std::printf("\n%s", res.noise.describe().c_str());
  if (!sampler.empty()) {
    std::printf("\n%s beside fused-post, same inputs and noise (judged under each one's contract):\n", sampler.c_str());
    if (files.out_dir.empty()) std::printf("%s", io::make_table(analysis::sampler_columns(), res.beside).text().c_str());
  }
  if (!files.out_dir.empty()) {
    std::filesystem::create_directories(files.out_dir);
    if (!sampler.empty()) write_beside(res.beside, files.out_dir, sampler);
    io::write_file(files.out_dir + "/divergence.csv", t.csv());
    io::write_file(files.out_dir + "/divergence.json",
                   nlohmann::json{{"keys", keys}, {"method", res.method}, {"rows", t.json()}, {"noise", analysis::to_json(res.noise)}}.dump(2) + "\n");
    const std::string svg = files.out_dir + "/divergence.svg";
    const DivergenceCharts charts = divergence_charts(t, keys);
    io::write_file(svg, io::svg_chart(charts.error));
    if (!files.html.empty())
      write_file(files.html, html_of_divergence(fmt::format("{} rows x {} batch(es) per temperature, {}, backend {}", s.rows,
                                                            s.batches, source_of(s), backend),
                                                t, charts, res.noise.describe(), res.failures() == 0));
    std::printf("wrote %s/divergence.csv, %s/divergence.json, %s\n", files.out_dir.c_str(), files.out_dir.c_str(), svg.c_str());
  }
  return verdict(res, "PASS (no unexplained mismatch, every key inside its bound)");
}

}  // namespace

int divergence(const DivergenceOptions& o) {
  if (!o.dumps.empty()) return compare(o);
  if (o.devices != 0)  // shards in parallel, one a device, then the run's tables from their states
    return merge_divergence(
        run_on_devices("divergence", o.args, o.devices, {"--devices", "--out", "--html"}, "--state", "state").outputs,
        o.out_dir, o.html);
  const analysis::DivergenceOptions& s = o.study;
  print_heading(s, kernels::backend_name());
  std::unique_ptr<protocol::ExternalSampler> sampler;
  if (o.sampler.given()) {
    sampler = start_replayable(o.sampler);
    std::printf("sampler %s: %s\n", sampler->name().c_str(), protocol::describe_contract(sampler->contract()).c_str());
  }
  const std::string sampler_name = sampler ? sampler->name() : "";
  if (o.state.empty()) return report(s, analysis::run_divergence(s, sampler.get()), sampler_name, kernels::backend_name(), {o.out_dir, o.html});
  // A shard (or a run kept for merging): its own tables, then its tallies for `raceoracle merge`.
  const analysis::DivergenceState state = analysis::divergence_state(s, sampler.get());
  const int rc = report(s, analysis::finish(state), sampler_name, kernels::backend_name(), {});
  analysis::write_state(o.state, state);
  std::printf("wrote %s: this shard's tallies (the tables above are its rows alone); `raceoracle merge` the %d shards' "
              "states for the run's tables\n",
              o.state.c_str(), s.shard.count);
  return rc;
}

int merge_divergence(const std::vector<std::string>& states, const std::string& out_dir, const std::string& html) {
  const analysis::DivergenceState state = analysis::merge_states(states);
  print_heading(state.options, state.backend);
  std::printf("merged %zu shard states\n", states.size());
  return report(state.options, analysis::finish(state), state.sampler, state.backend, {out_dir, html});
}

}  // namespace raceoracle::cli
