#include "cli/divergence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "fixtures/batch.h"
#include "fixtures/llm_like.h"
#include "kernels/device_memory.h"
#include "kernels/registry.h"
#include "oracle/error_model.h"

namespace raceoracle::cli {
namespace {

/// LLM-like rows (fixtures/llm_like.h) centred at 8 with sigma 2.5, so |x| is
/// as large as real logits are: the error of x - m grows with |x|.
fixtures::Batch realistic(const DivergenceOptions& o, float T, std::uint64_t seed) {
  fixtures::Batch b = fixtures::Batch::make(o.rows, o.vocab, o.dtype);
  fixtures::fill_llm_like(b, seed, {.centre = 8.0f, .sigma = 2.5f, .peak_one_in = 20000});
  std::fill(b.temperatures.begin(), b.temperatures.end(), T);
  return b;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The real kernel's stage-1 keys (tile winners) against their certified bound.
void kernel_stage1(const fixtures::Batch& b, const fixtures::KernelRun& run, const kernels::Kernel& k, DivergenceRow& out) {
  const auto& p = run.partials;
  for (std::int64_t r = 0; r < b.rows; ++r)
    for (std::int64_t tile = 0; tile < p.tiles; ++tile) {
      const std::size_t q = std::size_t(r * p.tiles + tile);
      const std::int64_t i = p.idx[q];
      if (i < 0 || i >= b.vocab || !(p.m[q] > -INFINITY)) continue;
      out.kernel_stage1_ratio =
          std::max(out.kernel_stage1_ratio,
                   oracle::error_ratio(oracle::bound_stage1_key(b.x(r, i), b.e(r, i), p.m[q], b.temperatures[std::size_t(r)],
                                                                b.eps, k.contract()),
                                       p.key[q]));
    }
}

/// fp32 key of id i in the fused kernel's order: stage 1 against the tile
/// max, stage-2 rescale against the row max.
float emulate_key(const fixtures::Batch& b, std::int64_t r, std::int64_t i, float m_t, float M, oracle::ScalingOrder order) {
  const float T = b.temperatures[std::size_t(r)];
  const float inv_t = 1.0f / race::clamp_temperature(T);
  const float x = b.x(r, i), den = b.e(r, i) + b.eps;
  const float p = order == oracle::ScalingOrder::post ? std::exp((x - m_t) * inv_t) : std::exp(x * inv_t - m_t * inv_t);
  const float k_t = p / den;
  return k_t * std::exp((m_t - M) * inv_t);
}

/// The top-8 keys of every row: emulated fp32 error and certified bound.
void deciding_keys(const fixtures::Batch& b, const kernels::Kernel& k, int block_v, DivergenceRow& out) {
  const auto c = k.contract();
  for (std::int64_t r = 0; r < b.rows; ++r) {
    const double t = race::clamp_temperature(b.temperatures[std::size_t(r)]);
    std::vector<float> tile_max(std::size_t((b.vocab + block_v - 1) / block_v), -INFINITY);
    float M = -INFINITY;
    for (std::int64_t i = 0; i < b.vocab; ++i) {
      tile_max[std::size_t(i / block_v)] = std::max(tile_max[std::size_t(i / block_v)], b.x(r, i));
      M = std::max(M, b.x(r, i));
    }
    std::vector<std::pair<double, std::int64_t>> keys;
    keys.reserve(std::size_t(b.vocab));
    for (std::int64_t i = 0; i < b.vocab; ++i)
      keys.push_back({std::exp((double(b.x(r, i)) - M) / t) / (double(b.e(r, i)) + double(b.eps)), i});
    std::partial_sort(keys.begin(), keys.begin() + std::min<std::ptrdiff_t>(8, std::ptrdiff_t(keys.size())), keys.end(),
                      std::greater<>());
    for (std::size_t n = 0; n < std::min<std::size_t>(8, keys.size()); ++n) {
      const std::int64_t i = keys[n].second;
      const auto kb = oracle::bound_key(b.x(r, i), b.e(r, i), oracle::RowScale{double(M), t, b.eps}, c);
      if (!(kb.key > 1e-30)) continue;
      const double key = emulate_key(b, r, i, tile_max[std::size_t(i / block_v)], M, c.order);
      out.max_actual = std::max(out.max_actual, std::abs(key / kb.key - 1.0));
      out.max_bound = std::max(out.max_bound, kb.rho());
      out.worst_ratio = std::max(out.worst_ratio, oracle::error_ratio(kb, key));
    }
  }
}

std::string svg_plot(const std::vector<DivergenceRow>& rows, const std::string& dir) {
  const std::string data = dir + "/divergence.dat", svg = dir + "/divergence.svg";
  {
    std::ofstream d(data);
    for (const char* order : {"post", "pre"}) {
      d << "# " << order << "\n";
      for (const auto& r : rows)
        if (r.order == order)
          d << r.temperature << " " << std::max(r.max_actual, 1e-12) << " " << r.max_bound << "\n";
      d << "\n\n";
    }
  }
  const std::string script = dir + "/divergence.gp";
  std::ofstream(script) << "set terminal svg size 800,500 font 'sans,12'\nset output '" << svg
                        << "'\nset logscale xy\nset xlabel 'temperature'\nset ylabel 'relative key error'\n"
                           "set title 'fp32 key error vs certified bound (top-8 keys of each row, fused kernel order)'\n"
                           "set key left bottom\nset grid\n"
                           "plot '"
                        << data << "' index 0 using 1:2 with linespoints title 'post-scale: measured', '" << data
                        << "' index 0 using 1:3 with lines dt 2 title 'post-scale: bound', '" << data
                        << "' index 1 using 1:2 with linespoints title 'pre-scale: measured', '" << data
                        << "' index 1 using 1:3 with lines dt 2 title 'pre-scale: bound'\n";
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return "";
  if (std::system(("gnuplot '" + script + "'").c_str()) != 0) throw std::runtime_error("gnuplot failed on " + script);
  return svg;
}

}  // namespace

std::vector<DivergenceRow> run_divergence(const DivergenceOptions& o, const fixtures::Subject* sampler,
                                          std::vector<SamplerDivergence>* beside) {
  std::vector<DivergenceRow> out;
  const kernels::Kernel* base = kernels::find_kernel("baseline");
  const kernels::FusedConfig cfg{};  // production tiling
  for (float T : o.temperatures) {
    DivergenceRow rows[2];
    std::vector<double> full_bounds[2];
    std::int64_t ambiguous[2] = {0, 0};
    SamplerDivergence sd{T};
    std::int64_t sampler_ambiguous = 0;
    for (int batch = 0; batch < o.batches; ++batch) {
      const fixtures::Batch b = realistic(o, T, o.seed + std::uint64_t(batch) * 7919 + std::uint64_t(T * 1e4));
      const auto base_run = fixtures::run_kernel(*base, b);
      if (!base_run.status.ok) throw std::runtime_error("baseline: " + base_run.status.message);
      const auto base_v = b.decide(base->contract());
      for (int oi = 0; oi < 2; ++oi) {
        const kernels::Kernel* k = kernels::find_kernel(oi == 0 ? "fused-post" : "fused-pre");
        DivergenceRow& d = rows[oi];
        d.temperature = T;
        d.order = oi == 0 ? "post" : "pre";
        kernels::RunOptions opt;
        opt.config = cfg;
        const auto run = fixtures::run_kernel(*k, b, opt);
        if (!run.status.ok) throw std::runtime_error(k->name + ": " + run.status.message);
        const auto v = b.decide(k->contract());
        kernel_stage1(b, run, *k, d);
        if (sampler && oi == 0) {  // the sampler beside fused-post, on the same noise
          const auto srun = sampler->run(b);
          if (!srun.status.ok) throw std::runtime_error(sampler->name() + ": " + srun.status.message);
          const auto sv = b.decide(sampler->contract());
          for (std::int64_t r = 0; r < b.rows; ++r) {
            const auto ts = srun.tokens[std::size_t(r)], tf = run.tokens[std::size_t(r)];
            const auto& vr = sv[std::size_t(r)];
            ++sd.rows;
            sampler_ambiguous += vr.ambiguous.size() > 1;
            const bool bad = oracle::is_failure(oracle::judge(vr, ts, b.vocab));
            sd.unexplained += bad;
            if (ts != tf) {
              ++sd.differ;
              sd.explained += !bad && !oracle::is_failure(oracle::judge(v[std::size_t(r)], tf, b.vocab));
            }
          }
        }
        deciding_keys(b, *k, cfg.block_v, d);
        for (std::int64_t r = 0; r < b.rows; ++r) {
          const auto& vr = v[std::size_t(r)];
          ++d.rows;
          full_bounds[oi].push_back(vr.rho);
          ambiguous[oi] += vr.ambiguous.size() > 1;
          const auto outcome = oracle::judge(vr, run.tokens[std::size_t(r)], b.vocab);
          d.explained += outcome == oracle::Outcome::explained;
          d.unexplained += oracle::is_failure(outcome);
          const auto bo = oracle::judge(base_v[std::size_t(r)], base_run.tokens[std::size_t(r)], b.vocab);
          d.base_explained += bo == oracle::Outcome::explained;
          d.base_unexplained += oracle::is_failure(bo);
        }
      }
    }
    if (sampler && beside) {
      sd.ambiguous_fraction = sd.rows ? double(sampler_ambiguous) / double(sd.rows) : 0;
      beside->push_back(sd);
    }
    for (int oi = 0; oi < 2; ++oi) {
      rows[oi].median_full_bound = median(full_bounds[oi]);
      rows[oi].ambiguous_fraction = rows[oi].rows ? double(ambiguous[oi]) / double(rows[oi].rows) : 0;
      out.push_back(rows[oi]);
    }
    std::fprintf(stderr, "  .. T=%g done\n", T);
  }
  return out;
}

int divergence(const DivergenceOptions& o) {
  std::printf("raceoracle divergence: %lld rows x %d batch(es) per temperature, V=%lld, %s logits, backend %s\n",
              static_cast<long long>(o.rows), o.batches, static_cast<long long>(o.vocab), oracle::to_string(o.dtype),
              kernels::backend_name());
  std::unique_ptr<protocol::ExternalSampler> sampler;
  if (o.sampler.given()) {
    sampler = open_sampler(o.sampler);
    std::printf("sampler %s: %s\n", sampler->name().c_str(), protocol::describe_contract(sampler->contract()).c_str());
  }
  std::vector<SamplerDivergence> beside;
  const auto rows = run_divergence(o, sampler.get(), &beside);
  std::printf("%-6s %-5s %6s %12s %12s %7s %12s %10s %10s %17s %17s\n", "T", "order", "rows", "top-8 error",
              "top-8 bound", "ratio", "win bound", "ambiguous", "kernel s1", "fused expl/UNEX", "baseline expl/UNEX");
  std::filesystem::create_directories(o.out_dir);
  std::ofstream csv(o.out_dir + "/divergence.csv");
  csv << "temperature,order,rows,max_actual_rel_error,max_bound,worst_ratio,median_winner_bound,ambiguous_fraction,"
         "kernel_stage1_ratio,fused_explained,fused_unexplained,baseline_explained,baseline_unexplained\n";
  nlohmann::json j = nlohmann::json::array();
  std::int64_t failures = 0;
  for (const auto& r : rows) {
    std::printf("%-6g %-5s %6lld %12.3e %12.3e %7.3f %12.3e %9.2f%% %10.3f %8lld/%-8lld %8lld/%-8lld\n", r.temperature,
                r.order.c_str(), static_cast<long long>(r.rows), r.max_actual, r.max_bound, r.worst_ratio,
                r.median_full_bound, 100 * r.ambiguous_fraction, r.kernel_stage1_ratio, static_cast<long long>(r.explained),
                static_cast<long long>(r.unexplained), static_cast<long long>(r.base_explained),
                static_cast<long long>(r.base_unexplained));
    csv << fmt::format("{},{},{},{:.6e},{:.6e},{:.4f},{:.6e},{:.6f},{:.4f},{},{},{},{}\n", r.temperature, r.order, r.rows,
                       r.max_actual, r.max_bound, r.worst_ratio, r.median_full_bound, r.ambiguous_fraction,
                       r.kernel_stage1_ratio, r.explained, r.unexplained, r.base_explained, r.base_unexplained);
    j.push_back({{"temperature", r.temperature}, {"order", r.order}, {"rows", r.rows}, {"max_actual", r.max_actual},
                 {"max_bound", r.max_bound}, {"worst_ratio", r.worst_ratio}, {"median_winner_bound", r.median_full_bound},
                 {"ambiguous_fraction", r.ambiguous_fraction}, {"kernel_stage1_ratio", r.kernel_stage1_ratio},
                 {"fused_explained", r.explained}, {"fused_unexplained", r.unexplained},
                 {"baseline_explained", r.base_explained}, {"baseline_unexplained", r.base_unexplained}});
    failures += r.unexplained + r.base_unexplained + (r.worst_ratio > 1.0) + (r.kernel_stage1_ratio > 1.0);
  }
  if (sampler) {
    std::printf("\n%s beside fused-post, same inputs and noise (judged under each one's contract):\n", sampler->name().c_str());
    std::printf("%-6s %8s %8s %10s %12s %10s\n", "T", "rows", "differ", "explained", "UNEXPLAINED", "ambiguous");
    std::ofstream scsv(o.out_dir + "/sampler.csv");
    scsv << "temperature,rows,differ,explained,unexplained,ambiguous_fraction\n";
    nlohmann::json sj = nlohmann::json::array();
    for (const auto& d : beside) {
      std::printf("%-6g %8lld %8lld %10lld %12lld %9.2f%%\n", d.temperature, static_cast<long long>(d.rows),
                  static_cast<long long>(d.differ), static_cast<long long>(d.explained),
                  static_cast<long long>(d.unexplained), 100 * d.ambiguous_fraction);
      scsv << fmt::format("{},{},{},{},{},{:.6f}\n", d.temperature, d.rows, d.differ, d.explained, d.unexplained,
                          d.ambiguous_fraction);
      sj.push_back({{"temperature", d.temperature}, {"rows", d.rows}, {"differ", d.differ}, {"explained", d.explained},
                    {"unexplained", d.unexplained}, {"ambiguous_fraction", d.ambiguous_fraction}});
      failures += d.unexplained;
    }
    std::ofstream(o.out_dir + "/sampler.json") << nlohmann::json{{"sampler", sampler->name()}, {"rows", sj}}.dump(2) << "\n";
    std::printf("wrote %s/sampler.csv, %s/sampler.json\n", o.out_dir.c_str(), o.out_dir.c_str());
  }
  std::ofstream(o.out_dir + "/divergence.json") << j.dump(2) << "\n";
  const std::string svg = svg_plot(rows, o.out_dir);
  std::printf("wrote %s/divergence.csv, %s/divergence.json%s\n", o.out_dir.c_str(), o.out_dir.c_str(),
              svg.empty() ? " (no plot: gnuplot not found)" : (", " + svg).c_str());
  std::printf("verdict: %s\n", failures == 0 ? "PASS (no unexplained mismatch, every key inside its bound)" : "FAIL");
  return failures == 0 ? 0 : 1;
}

}  // namespace raceoracle::cli
