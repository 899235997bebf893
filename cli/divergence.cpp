#include "cli/divergence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <sstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>
#include <tuple>

#include "analysis/key_emulation.h"
#include "cli/verify.h"
#include "fixtures/batch.h"
#include "fixtures/llm_like.h"
#include "io/files.h"
#include "kernels/device_memory.h"
#include "kernels/registry.h"
#include "oracle/error_model.h"
#include "protocol/safetensors.h"

namespace raceoracle::cli {
namespace {

/// A user's logits, rows reused in turn.
struct LogitsDump {
  oracle::Dtype dtype = oracle::Dtype::f32;
  std::int64_t rows = 0, vocab = 0;
  std::vector<float> logits;  ///< widened exactly
};

LogitsDump read_logits(const std::string& path) {
  return protocol::parse_file(path, [](const protocol::SafetensorsFile& f) {
    const protocol::TensorView t = protocol::require_logits(f);
    return LogitsDump{t.dtype == "BF16" ? oracle::Dtype::bf16 : oracle::Dtype::f32, t.shape[0], t.shape[1], t.as_f32()};
  });
}

/// The rows of one batch: from the user's dump (fresh noise), N(0, sigma^2),
/// or LLM-like rows centred at 8 with sigma 2.5, so |x| is as large as real
/// logits are: the error of x - m grows with |x|.
fixtures::Batch make_batch(const DivergenceOptions& o, const LogitsDump* dump, float T, int batch) {
  const std::uint64_t seed = o.seed + std::uint64_t(batch) * 7919 + std::uint64_t(T * 1e4);
  fixtures::Batch b;
  if (dump) {
    b = fixtures::Batch::make(o.rows, dump->vocab, dump->dtype);
    for (std::int64_t r = 0; r < b.rows; ++r) {
      const std::int64_t src = (std::int64_t(batch) * o.rows + r) % dump->rows;
      std::copy_n(dump->logits.begin() + src * dump->vocab, dump->vocab, b.logits.begin() + r * b.logit_stride);
    }
    fixtures::fill_exp1_noise(b, seed);
  } else {
    b = fixtures::Batch::make(o.rows, o.vocab, o.dtype);
    if (o.normal_sigma > 0)
      fixtures::fill_llm_like(b, seed, {.centre = 0.0f, .sigma = o.normal_sigma, .peak_one_in = 0});
    else
      fixtures::fill_llm_like(b, seed, {.centre = 8.0f, .sigma = 2.5f, .peak_one_in = 20000});
  }
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

/// Key-error statistics over some keys, mergeable across rows.
struct KeyErrors {
  std::int64_t keys = 0, off_max = 0;
  double squares = 0, off_max_squares = 0, max_actual = 0, max_bound = 0, worst_ratio = 0;
  void merge(const KeyErrors& o) {
    keys += o.keys;
    off_max += o.off_max;
    squares += o.squares;
    off_max_squares += o.off_max_squares;
    max_actual = std::max(max_actual, o.max_actual);
    max_bound = std::max(max_bound, o.max_bound);
    worst_ratio = std::max(worst_ratio, o.worst_ratio);
  }
};

/// Row r's deciding ids (competitive keys, or the top k): emulated fp32
/// error against float64 and the certified bound.
KeyErrors deciding_keys(const DivergenceOptions& o, const fixtures::Batch& b, std::int64_t r,
                        const oracle::NumericsContract& c, int block_v) {
  KeyErrors out;
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
  std::size_t n = 0;
  if (o.top_k > 0) {
    n = std::min<std::size_t>(std::size_t(o.top_k), keys.size());
    std::partial_sort(keys.begin(), keys.begin() + std::ptrdiff_t(n), keys.end(), std::greater<>());
  } else {
    const double best = std::max_element(keys.begin(), keys.end())->first;
    n = std::size_t(std::partition(keys.begin(), keys.end(), [&](const auto& q) { return q.first >= o.competitive * best; }) -
                    keys.begin());
  }
  for (std::size_t q = 0; q < n; ++q) {
    const std::int64_t i = keys[q].second;
    const auto kb = oracle::bound_key(b.x(r, i), b.e(r, i), oracle::RowScale{double(M), t, b.eps}, c);
    if (!(kb.key > 1e-30)) continue;
    const float emulated = analysis::emulated_key(b.x(r, i), b.e(r, i), b.eps, b.temperatures[std::size_t(r)],
                                                  tile_max[std::size_t(i / block_v)], M, c.order);
    const double err = std::abs(emulated / kb.key - 1.0);
    ++out.keys;
    out.squares += err * err;
    if (b.x(r, i) != tile_max[std::size_t(i / block_v)]) {  // x - m_t is not 0: the scaling order shows
      ++out.off_max;
      out.off_max_squares += err * err;
    }
    out.max_actual = std::max(out.max_actual, err);
    out.max_bound = std::max(out.max_bound, kb.rho());
    out.worst_ratio = std::max(out.worst_ratio, err / kb.rho());
  }
  return out;
}

/// deciding_keys over every row of `b`, on every core.
KeyErrors deciding_keys(const DivergenceOptions& o, const fixtures::Batch& b, const oracle::NumericsContract& c,
                        int block_v) {
  const int n = std::max(1, std::min<int>(int(std::thread::hardware_concurrency()), int(b.rows)));
  std::vector<KeyErrors> part(static_cast<std::size_t>(n));
  std::vector<std::thread> pool;
  for (int w = 0; w < n; ++w)
    pool.emplace_back([&, w] {
      for (std::int64_t r = w; r < b.rows; r += n) part[std::size_t(w)].merge(deciding_keys(o, b, r, c, block_v));
    });
  for (auto& t : pool) t.join();
  KeyErrors all;
  for (const auto& p : part) all.merge(p);
  return all;
}

/// Each sampling row's top-two gap against the gap the contract tolerates.
void collect_gaps(const fixtures::Batch& b, const std::vector<oracle::Verdict>& v, const oracle::NumericsContract& c,
                  std::vector<analysis::RowGap>& out) {
  const oracle::BatchView view = b.view();
  for (std::int64_t r = 0; r < b.rows; ++r) {
    const auto& vr = v[std::size_t(r)];
    if (vr.row_class != oracle::RowClass::sampling || vr.runner_up < 0) continue;
    const oracle::RowView row = view.row(r);
    const oracle::RowScale s = oracle::row_scale(row, {b.eps, b.greedy_eps});
    analysis::RowGap g;
    g.gap = vr.runner_up_key > 0 ? vr.gap : 1.0;
    g.threshold = oracle::tolerated_gap(row.logit(vr.token), row.noise[vr.token], row.logit(vr.runner_up),
                                        row.noise[vr.runner_up], s, c);
    out.push_back(g);
  }
}

std::string svg_plot(const std::vector<DivergenceRow>& rows, const std::string& dir, const std::string& keys) {
  const std::string data = dir + "/divergence.dat", svg = dir + "/divergence.svg";
  {
    std::ostringstream d;
    for (const char* order : {"post", "pre"}) {
      d << "# " << order << "\n";
      for (const auto& r : rows)
        if (r.order == order)
          d << r.temperature << " " << std::max(r.max_actual, 1e-12) << " " << r.max_bound << "\n";
      d << "\n\n";
    }
    io::write_file(data, d.str());
  }
  const std::string script = dir + "/divergence.gp";
  std::ostringstream gp;
  gp << "set terminal svg size 800,500 font 'sans,12'\nset output '" << svg
                        << "'\nset logscale xy\nset xlabel 'temperature'\nset ylabel 'relative key error'\n"
                           "set title 'fp32 key error vs certified bound ("
                        << keys << ", fused kernel order)'\n"
                           "set key left bottom\nset grid\n"
                           "plot '"
                        << data << "' index 0 using 1:2 with linespoints title 'post-scale: measured', '" << data
                        << "' index 0 using 1:3 with lines dt 2 title 'post-scale: bound', '" << data
                        << "' index 1 using 1:2 with linespoints title 'pre-scale: measured', '" << data
                        << "' index 1 using 1:3 with lines dt 2 title 'pre-scale: bound'\n";
  io::write_file(script, gp.str());
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return "";
  if (std::system(("gnuplot '" + script + "'").c_str()) != 0) throw std::runtime_error("gnuplot failed on " + script);
  return svg;
}

/// The contract the rate is estimated under: the kernel's, with the ulps asked for.
oracle::NumericsContract rate_contract(const DivergenceOptions& o, oracle::NumericsContract c) {
  if (o.exp_ulp) c.exp_ulp = *o.exp_ulp;
  if (o.div_ulp) c.div_ulp = *o.div_ulp;
  return c;
}

std::string keys_label(const DivergenceOptions& o) {
  return o.top_k > 0 ? fmt::format("top-{} keys of each row", o.top_k)
                     : fmt::format("keys >= {:g} x the winner key", o.competitive);
}

/// One temperature's sampler table row from its tokens and verdicts beside
/// the reference tokens and verdicts.
void tally_beside(const std::vector<std::int32_t>& ref, const std::vector<oracle::Verdict>& ref_v,
                  const std::vector<std::int64_t>& other, const std::vector<oracle::Verdict>& other_v,
                  std::int64_t vocab, const std::vector<std::int64_t>& rows, SamplerDivergence& sd,
                  std::int64_t& ambiguous) {
  for (std::int64_t r : rows) {
    const auto ts = other[std::size_t(r)];
    const auto tf = std::int64_t(ref[std::size_t(r)]);
    const auto& vr = other_v[std::size_t(r)];
    ++sd.rows;
    ambiguous += vr.ambiguous.size() > 1;
    const bool bad = oracle::is_failure(oracle::judge(vr, ts, vocab));
    const bool ref_bad = oracle::is_failure(oracle::judge(ref_v[std::size_t(r)], tf, vocab));
    sd.unexplained += bad || ref_bad;
    if (ts != tf) {
      ++sd.differ;
      sd.explained += !bad && !ref_bad;
    }
  }
}

void print_beside(const std::vector<SamplerDivergence>& beside, const std::string& out_dir, const std::string& name) {
  std::printf("%-6s %8s %8s %10s %12s %10s\n", "T", "rows", "differ", "explained", "UNEXPLAINED", "ambiguous");
  std::ostringstream scsv;
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
  }
  io::write_file(out_dir + "/sampler.csv", scsv.str());
  io::write_file(out_dir + "/sampler.json", nlohmann::json{{"sampler", name}, {"rows", sj}}.dump(2) + "\n");
  std::printf("wrote %s/sampler.csv, %s/sampler.json\n", out_dir.c_str(), out_dir.c_str());
}

}  // namespace

DivergenceResult run_divergence(const DivergenceOptions& o, const fixtures::Subject* sampler) {
  DivergenceResult out;
  const std::unique_ptr<LogitsDump> dump = o.logits_file.empty() ? nullptr : std::make_unique<LogitsDump>(read_logits(o.logits_file));
  const kernels::Kernel* base = kernels::find_kernel("baseline");
  const kernels::FusedConfig cfg{};  // production tiling
  analysis::NoiseTally noise;
  for (float T : o.temperatures) {
    DivergenceRow rows[2];
    std::vector<double> full_bounds[2];
    std::vector<analysis::RowGap> gaps[2];
    KeyErrors key_errors[2];
    std::int64_t ambiguous[2] = {0, 0};
    SamplerDivergence sd{T};
    std::int64_t sampler_ambiguous = 0;
    for (int batch = 0; batch < o.batches; ++batch) {
      const fixtures::Batch b = make_batch(o, dump.get(), T, batch);
      noise.add(b.noise.data(), std::int64_t(b.noise.size()));
      fixtures::KernelRun base_run;
      if (o.kernels) {
        base_run = fixtures::run_kernel(*base, b);
        if (!base_run.status.ok) throw std::runtime_error("baseline: " + base_run.status.message);
      }
      const auto base_v = o.kernels ? b.decide(base->contract()) : std::vector<oracle::Verdict>{};
      for (int oi = 0; oi < 2; ++oi) {
        const kernels::Kernel* k = kernels::find_kernel(oi == 0 ? "fused-post" : "fused-pre");
        DivergenceRow& d = rows[oi];
        d.temperature = T;
        d.order = oi == 0 ? "post" : "pre";
        d.kernels_ran = o.kernels;
        const auto v = b.decide(k->contract());
        const oracle::NumericsContract rc = rate_contract(o, k->contract());
        std::vector<oracle::Verdict> overridden;  // verdicts under --rate-*-ulp, when given
        if (o.exp_ulp || o.div_ulp) overridden = b.decide(rc);
        const auto& rate_v = overridden.empty() ? v : overridden;
        collect_gaps(b, rate_v, rc, gaps[oi]);
        key_errors[oi].merge(deciding_keys(o, b, k->contract(), cfg.block_v));
        for (std::int64_t r = 0; r < b.rows; ++r) {
          ++d.rows;
          full_bounds[oi].push_back(v[std::size_t(r)].rho);
          ambiguous[oi] += rate_v[std::size_t(r)].ambiguous.size() > 1;
        }
        if (!o.kernels) continue;
        kernels::RunOptions opt;
        opt.config = cfg;
        const auto run = fixtures::run_kernel(*k, b, opt);
        if (!run.status.ok) throw std::runtime_error(k->name + ": " + run.status.message);
        kernel_stage1(b, run, *k, d);
        if (sampler && oi == 0) {  // the sampler beside fused-post, on the same noise
          const auto srun = sampler->run(b);
          if (!srun.status.ok) throw std::runtime_error(sampler->name() + ": " + srun.status.message);
          std::vector<std::int64_t> tokens(srun.tokens.begin(), srun.tokens.end()), all(std::size_t(b.rows));
          std::iota(all.begin(), all.end(), 0);
          tally_beside(run.tokens, v, tokens, b.decide(sampler->contract()), b.vocab, all, sd, sampler_ambiguous);
        }
        for (std::int64_t r = 0; r < b.rows; ++r) {
          const auto outcome = oracle::judge(v[std::size_t(r)], run.tokens[std::size_t(r)], b.vocab);
          d.explained += outcome == oracle::Outcome::explained;
          d.unexplained += oracle::is_failure(outcome);
          const auto bo = oracle::judge(base_v[std::size_t(r)], base_run.tokens[std::size_t(r)], b.vocab);
          d.base_explained += bo == oracle::Outcome::explained;
          d.base_unexplained += oracle::is_failure(bo);
        }
      }
    }
    if (sampler) {
      sd.ambiguous_fraction = sd.rows ? double(sampler_ambiguous) / double(sd.rows) : 0;
      out.beside.push_back(sd);
    }
    for (int oi = 0; oi < 2; ++oi) {
      rows[oi].median_full_bound = median(full_bounds[oi]);
      rows[oi].ambiguous_fraction = rows[oi].rows ? double(ambiguous[oi]) / double(rows[oi].rows) : 0;
      const KeyErrors& ke = key_errors[oi];
      rows[oi].keys = ke.keys;
      rows[oi].max_actual = ke.max_actual;
      rows[oi].max_bound = ke.max_bound;
      rows[oi].worst_ratio = ke.worst_ratio;
      rows[oi].rms_actual = ke.keys ? std::sqrt(ke.squares / double(ke.keys)) : 0;
      rows[oi].off_max_keys = ke.off_max;
      rows[oi].rms_off_max = ke.off_max ? std::sqrt(ke.off_max_squares / double(ke.off_max)) : 0;
      rows[oi].rate = analysis::estimate_rate(gaps[oi], rows[oi].rows, o.window);
      out.rows.push_back(rows[oi]);
    }
    std::fprintf(stderr, "  .. T=%g done\n", T);
  }
  out.noise = noise.finish();
  return out;
}

DivergenceResult compare_dumps(const std::string& path_a, const std::string& path_b) {
  const protocol::Dump a = protocol::read_dump(path_a), b = protocol::read_dump(path_b);
  const auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
  };
  if (a.rows != b.rows || a.vocab != b.vocab)
    throw std::invalid_argument(fmt::format("{} is {} x {} but {} is {} x {}: not the same inputs", path_a, a.rows, a.vocab,
                                            path_b, b.rows, b.vocab));
  for (const auto& [name, x, y] : {std::tuple{"logits", &a.logits, &b.logits}, std::tuple{"noise", &a.noise, &b.noise},
                                   std::tuple{"temperatures", &a.temperatures, &b.temperatures}})
    if (!same(*x, *y))
      throw std::invalid_argument(fmt::format("{} and {} hold different {}: a comparison needs the same inputs and noise",
                                              path_a, path_b, name));
  if (a.constants.eps != b.constants.eps || a.constants.greedy_eps != b.constants.greedy_eps)
    throw std::invalid_argument(path_a + " and " + path_b + " declare different eps or greedy_eps");
  const auto va = oracle::decide_batch(a.view(), a.contract, a.constants);
  const auto vb = oracle::decide_batch(b.view(), b.contract, b.constants);
  std::map<float, std::vector<std::int64_t>> by_t;
  for (std::int64_t r = 0; r < a.rows; ++r) by_t[a.temperatures[std::size_t(r)]].push_back(r);
  const std::vector<std::int32_t> ref(a.tokens.begin(), a.tokens.end());
  DivergenceResult out;
  for (const auto& [T, rows] : by_t) {
    SamplerDivergence sd{T};
    std::int64_t amb = 0;
    tally_beside(ref, va, b.tokens, vb, a.vocab, rows, sd, amb);
    sd.ambiguous_fraction = sd.rows ? double(amb) / double(sd.rows) : 0;
    out.beside.push_back(sd);
  }
  analysis::NoiseTally noise;
  noise.add(a.noise.data(), std::int64_t(a.noise.size()));
  out.noise = noise.finish();
  return out;
}

int divergence(const DivergenceOptions& o) {
  if (!o.dumps.empty()) {
    if (o.dumps.size() != 2) throw std::invalid_argument("divergence compares two dumps: A.safetensors B.safetensors");
    const DivergenceResult res = compare_dumps(o.dumps[0], o.dumps[1]);
    std::printf("raceoracle divergence: %s beside %s, same inputs and noise (each judged under its own contract):\n",
                o.dumps[1].c_str(), o.dumps[0].c_str());
    std::filesystem::create_directories(o.out_dir);
    print_beside(res.beside, o.out_dir, o.dumps[1]);
    std::printf("%s", res.noise.describe().c_str());
    std::int64_t failures = 0;
    for (const auto& d : res.beside) failures += d.unexplained;
    std::printf("verdict: %s\n", failures == 0 ? "PASS (every difference explained)" : "FAIL");
    return failures == 0 ? 0 : 1;
  }
  std::string source = fmt::format("V={}, LLM-like {} logits", o.vocab, oracle::to_string(o.dtype));
  if (!o.logits_file.empty()) source = o.logits_file + " (rows reused with fresh Exp(1) noise)";
  else if (o.normal_sigma > 0) source = fmt::format("V={}, N(0, {:g}^2) {} logits", o.vocab, o.normal_sigma, oracle::to_string(o.dtype));
  std::printf("raceoracle divergence: %lld rows x %d batch(es) per temperature, %s, backend %s\n",
              static_cast<long long>(o.rows), o.batches, source.c_str(), kernels::backend_name());
  std::unique_ptr<protocol::ExternalSampler> sampler;
  if (o.sampler.given()) {
    sampler = open_sampler(o.sampler);
    std::printf("sampler %s: %s\n", sampler->name().c_str(), protocol::describe_contract(sampler->contract()).c_str());
  }
  const DivergenceResult res = run_divergence(o, sampler.get());
  const auto& rows = res.rows;
  std::filesystem::create_directories(o.out_dir);
  std::int64_t failures = 0;

  std::printf("\nfp32 key error, %s (float64 reference, the fused kernel's operation order;\n"
              "off max: those whose logit is not their tile's max, where x - m_t is not 0):\n",
              keys_label(o).c_str());
  std::printf("%-6s %-5s %7s %9s %11s %11s %9s %11s %11s %7s %11s %10s %17s %17s\n", "T", "order", "rows", "keys",
              "max error", "rms error", "off max", "rms off", "max bound", "ratio", "win bound", "kernel s1",
              "fused expl/UNEX", "baseline expl/UNEX");
  for (const auto& r : rows) {
    const std::string kernel_columns =
        r.kernels_ran ? fmt::format("{:10.3f} {:>8}/{:<8} {:>8}/{:<8}", r.kernel_stage1_ratio, r.explained, r.unexplained,
                                    r.base_explained, r.base_unexplained)
                      : fmt::format("{:>10} {:>17} {:>17}", "-", "(no kernels)", "(no kernels)");
    std::printf("%-6g %-5s %7lld %9lld %11.3e %11.3e %9lld %11.3e %11.3e %7.3f %11.3e %s\n", r.temperature,
                r.order.c_str(), static_cast<long long>(r.rows), static_cast<long long>(r.keys), r.max_actual,
                r.rms_actual, static_cast<long long>(r.off_max_keys), r.rms_off_max, r.max_bound, r.worst_ratio,
                r.median_full_bound, kernel_columns.c_str());
    failures += r.unexplained + r.base_unexplained + (r.worst_ratio > 1.0) + (r.kernel_stage1_ratio > 1.0);
  }

  std::printf("\nHow often two samplers under the contract may disagree (rows whose top-two keys lie within the bound):\n");
  std::printf("%-6s %-5s %-24s %12s %28s %9s %8s %11s %9s\n", "T", "order", "contract", "estimate", "95% interval",
              "counted", "window", "in window", "flat p");
  for (const auto& r : rows) {
    const auto& e = r.rate;
    const oracle::NumericsContract c = rate_contract(o, kernels::find_kernel("fused-" + r.order)->contract());
    std::printf("%-6g %-5s %-24s %12.3g   [%11.3g, %11.3g] %9lld %8.3g %11lld %9.3f%s\n", r.temperature, r.order.c_str(),
                fmt::format("exp {:g} ulp, div {:g} ulp", c.exp_ulp, c.div_ulp).c_str(), e.rate, e.lo, e.hi,
                static_cast<long long>(std::llround(r.ambiguous_fraction * double(r.rows))), e.window,
                static_cast<long long>(e.in_window), e.flatness_p,
                r.ambiguous_fraction > 0 && !e.contains(r.ambiguous_fraction) ? "  counted rate OUTSIDE the interval" : "");
  }
  std::printf("(estimate: the density of the top-two gap near 0, read over the window, times each row's tolerated gap;\n"
              " counted: rows with more than one legitimate id, a check where the rate is large enough to count)\n");
  std::printf("\n%s", res.noise.describe().c_str());

  std::ostringstream csv;
  csv << "temperature,order,rows,keys,max_actual_rel_error,rms_actual_rel_error,off_max_keys,rms_off_max_rel_error,max_bound,worst_ratio,median_winner_bound,"
         "ambiguous_fraction,rate,rate_lo,rate_hi,rate_window,rate_in_window,rate_flatness_p,kernel_stage1_ratio,"
         "fused_explained,fused_unexplained,baseline_explained,baseline_unexplained\n";
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    csv << fmt::format("{},{},{},{},{:.6e},{:.6e},{},{:.6e},{:.6e},{:.4f},{:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{:.4g},{},{:.4f},{:.4f},{},{},{},{}\n",
                       r.temperature, r.order, r.rows, r.keys, r.max_actual, r.rms_actual, r.off_max_keys, r.rms_off_max,
                       r.max_bound, r.worst_ratio,
                       r.median_full_bound, r.ambiguous_fraction, r.rate.rate, r.rate.lo, r.rate.hi, r.rate.window,
                       r.rate.in_window, r.rate.flatness_p, r.kernel_stage1_ratio, r.explained, r.unexplained,
                       r.base_explained, r.base_unexplained);
    j.push_back({{"temperature", r.temperature}, {"order", r.order}, {"rows", r.rows}, {"keys", r.keys},
                 {"max_actual", r.max_actual}, {"rms_actual", r.rms_actual}, {"off_max_keys", r.off_max_keys},
                 {"rms_off_max", r.rms_off_max}, {"max_bound", r.max_bound},
                 {"worst_ratio", r.worst_ratio}, {"median_winner_bound", r.median_full_bound},
                 {"ambiguous_fraction", r.ambiguous_fraction},
                 {"rate", {{"estimate", r.rate.rate}, {"lo", r.rate.lo}, {"hi", r.rate.hi}, {"window", r.rate.window},
                           {"in_window", r.rate.in_window}, {"flatness_p", r.rate.flatness_p},
                           {"mean_threshold", r.rate.mean_threshold}}},
                 {"kernel_stage1_ratio", r.kernel_stage1_ratio}, {"fused_explained", r.explained},
                 {"fused_unexplained", r.unexplained}, {"baseline_explained", r.base_explained},
                 {"baseline_unexplained", r.base_unexplained}});
  }
  if (sampler) {
    std::printf("\n%s beside fused-post, same inputs and noise (judged under each one's contract):\n", sampler->name().c_str());
    print_beside(res.beside, o.out_dir, sampler->name());
    for (const auto& d : res.beside) failures += d.unexplained;
  }
  io::write_file(o.out_dir + "/divergence.csv", csv.str());
  io::write_file(o.out_dir + "/divergence.json",
                 nlohmann::json{{"keys", keys_label(o)}, {"rows", j}, {"noise", noise_json(res.noise)}}.dump(2) + "\n");
  const std::string svg = svg_plot(rows, o.out_dir, keys_label(o));
  std::printf("wrote %s/divergence.csv, %s/divergence.json%s\n", o.out_dir.c_str(), o.out_dir.c_str(),
              svg.empty() ? " (no plot: gnuplot not found)" : (", " + svg).c_str());
  std::printf("verdict: %s\n", failures == 0 ? "PASS (no unexplained mismatch, every key inside its bound)" : "FAIL");
  return failures == 0 ? 0 : 1;
}

}  // namespace raceoracle::cli
