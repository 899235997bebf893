#include "analysis/divergence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "analysis/divergence_parts.h"
#include "analysis/divergence_state.h"
#include "analysis/rate_study.h"
#include "subject/batch.h"
#include "fixtures/llm_like.h"
#include "kernels/device_memory.h"
#include "kernels/host_api.h"
#include "kernels/registry.h"
#include "oracle/error_model.h"
#include "protocol/dump.h"
#include "protocol/safetensors.h"

namespace raceoracle::analysis {
namespace {

/// The rows of one batch: from the user's dump (fresh noise), or drawn from
/// the study's distribution (logit_distribution) with their noise.
subject::Batch make_batch(const DivergenceOptions& o, const LogitsDump* dump, float T, int batch) {
  const std::uint64_t seed = o.seed + std::uint64_t(batch) * 7919 + std::uint64_t(T * 1e4);
  subject::Batch b;
  if (dump) {
    b = subject::Batch::make(o.rows, dump->vocab, dump->dtype);
    for (std::int64_t r = 0; r < b.rows; ++r) {
      const std::int64_t src = (std::int64_t(batch) * o.rows + r) % dump->rows;
      std::copy_n(dump->logits.begin() + src * dump->vocab, dump->vocab, b.logits.begin() + r * b.logit_stride);
    }
    fixtures::fill_exp1_noise(b, seed);
  } else {
    b = subject::Batch::make(o.rows, o.vocab, o.dtype);
    fixtures::fill_llm_like(b, seed, logit_distribution(o));
  }
  std::fill(b.temperatures.begin(), b.temperatures.end(), T);
  return b;
}

/// The real kernel's stage-1 keys (tile winners) against their certified bound.
void kernel_stage1(const subject::Batch& b, const subject::KernelRun& run, const kernels::Kernel& k, DivergenceRow& out) {
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

/// Every row's fused-kernel tile maxima, [rows][tiles]: what the emulated keys scale against.
std::vector<std::vector<float>> tile_maxima(const subject::Batch& b, int block_v) {
  std::vector<std::vector<float>> out(std::size_t(b.rows));
  for (std::int64_t r = 0; r < b.rows; ++r) {
    std::vector<float>& tile_max = out[std::size_t(r)];
    tile_max.assign(std::size_t((b.vocab + block_v - 1) / block_v), -INFINITY);
    for (std::int64_t i = 0; i < b.vocab; ++i)
      tile_max[std::size_t(i / block_v)] = std::max(tile_max[std::size_t(i / block_v)], b.x(r, i));
  }
  return out;
}

/// Row r's deciding ids (competitive keys, or the top k): emulated fp32
/// error against float64 and the certified bound.
KeyErrors deciding_keys(const DivergenceOptions& o, const subject::Batch& b, std::int64_t r,
                        const oracle::NumericsContract& c, const std::vector<float>& tile_max, int block_v) {
  KeyErrors out;
  const double t = race::clamp_temperature(b.temperatures[std::size_t(r)]);
  const float M = *std::max_element(tile_max.begin(), tile_max.end());
  std::vector<std::pair<double, std::int64_t>> keys;
  keys.reserve(std::size_t(b.vocab));
  for (std::int64_t i = 0; i < b.vocab; ++i)
    keys.push_back({std::exp((double(b.x(r, i)) - M) / t) / (double(b.e(r, i)) + double(b.eps)), i});
  const oracle::RowScale s{double(M), t, b.eps, b.vocab};
  for (std::int64_t i : deciding_ids(std::move(keys), o))
    out.add(b.x(r, i), b.e(r, i), b.eps, b.temperatures[std::size_t(r)], tile_max[std::size_t(i / block_v)], s, c);
  return out;
}

/// deciding_keys over every row of `b`, on every core.
KeyErrors deciding_keys(const DivergenceOptions& o, const subject::Batch& b, const oracle::NumericsContract& c,
                        const std::vector<std::vector<float>>& tile_max, int block_v) {
  const int n = std::max(1, std::min<int>(int(std::thread::hardware_concurrency()), int(b.rows)));
  std::vector<KeyErrors> part(static_cast<std::size_t>(n));
  std::vector<std::thread> pool;
  for (int w = 0; w < n; ++w)
    pool.emplace_back([&, w] {
      for (std::int64_t r = w; r < b.rows; r += n) part[std::size_t(w)].merge(deciding_keys(o, b, r, c, tile_max[std::size_t(r)], block_v));
    });
  for (auto& t : pool) t.join();
  KeyErrors all;
  for (const auto& p : part) all.merge(p);
  return all;
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
    if ((bad || ref_bad) && sd.unexplained_rows.size() < 10)
      sd.unexplained_rows.push_back(fmt::format("row {} (T = {:g}): the reference wrote {}{}, the other {}{}", r,
                                                sd.temperature, tf, ref_bad ? " (unexplained)" : "", ts,
                                                bad ? " (unexplained)" : ""));
    if (ts != tf) {
      ++sd.differ;
      sd.explained += !bad && !ref_bad;
    }
  }
}

}  // namespace

BaselineLaunch baseline_launch(oracle::Dtype dtype, std::int64_t logit_offset, std::int64_t noise_offset) {
  const int logit_bytes = int(oracle::size_of(dtype));
  const bool aligned = (logit_offset * logit_bytes) % 16 == 0 && (noise_offset * 4) % 16 == 0;
  return {kernels::kBaselineRaceThreads, kernels::warp_size(), aligned ? 16 / logit_bytes : 1};
}

BaselineLaunch baseline_launch(const subject::Batch& b, std::int64_t r) {
  return baseline_launch(b.dtype, r * b.logit_stride, r * b.noise_stride);
}

std::string keys_label(const DivergenceOptions& o) {
  return o.top_k > 0 ? fmt::format("top-{} keys of each row", o.top_k)
                     : fmt::format("keys >= {:g} x the winner key", o.competitive);
}

std::int64_t DivergenceResult::failures() const {
  std::int64_t n = 0;
  for (const auto& r : rows) n += r.failures();
  for (const auto& d : beside) n += d.unexplained;
  return n;
}

DivergenceResult run_divergence(const DivergenceOptions& o, const subject::Subject* sampler) {
  return finish(divergence_state(o, sampler));
}

DivergenceState divergence_state(const DivergenceOptions& o, const subject::Subject* sampler) {
  if (!o.kernels && !sampler) return run_rate_study(o);
  DivergenceState out;
  out.options = o;
  out.backend = kernels::backend_name();
  if (sampler) out.sampler = sampler->name();
  const std::unique_ptr<LogitsDump> dump = o.logits_file.empty() ? nullptr : std::make_unique<LogitsDump>(read_logits(o.logits_file));
  const kernels::Kernel* base = kernels::find_kernel("baseline");
  const kernels::FusedConfig cfg{};  // production tiling
  for (std::size_t ti = 0; ti < o.temperatures.size(); ++ti) {
    const float T = o.temperatures[ti];
    TemperatureState& ts = out.temperatures.emplace_back();
    ts.temperature = T;
    ts.beside.temperature = T;
    DivergenceRow* rows = ts.rows;
    OrderTally* tally = ts.tally;
    for (int oi = 0; oi < 2; ++oi) {
      const race::ScalingOrder order = oi == 0 ? race::ScalingOrder::post : race::ScalingOrder::pre;
      rows[oi].temperature = T;
      rows[oi].order = order;
      rows[oi].kernels_ran = o.kernels;
      rows[oi].rate_contract = rate_contract(o, kernels::fused_kernel(order).contract());
    }
    for (int batch = 0; batch < o.batches; ++batch) {
      if (!o.shard.owns(ti * std::size_t(o.batches) + std::size_t(batch))) continue;  // another shard's batch
      const subject::Batch b = make_batch(o, dump.get(), T, batch);
      out.noise.add(b.noise.data(), std::int64_t(b.noise.size()));
      subject::KernelRun base_run;
      if (o.kernels) {
        base_run = subject::run_kernel(*base, b);
        if (!base_run.status.ok) throw std::runtime_error("baseline: " + base_run.status.message);
      }
      const auto base_v = o.kernels ? b.decide(base->contract()) : std::vector<oracle::Verdict>{};
      const oracle::BatchView view = b.view();
      const std::vector<std::vector<float>> tile_max = tile_maxima(b, cfg.block_v);
      std::vector<oracle::Verdict> verdicts[2];
      std::vector<std::int32_t> tokens[2];  // the kernels', when they ran
      for (int oi = 0; oi < 2; ++oi) {
        const kernels::Kernel* k = &kernels::fused_kernel(rows[oi].order);
        DivergenceRow& d = rows[oi];
        const auto& v = verdicts[oi] = b.decide(k->contract());
        const oracle::NumericsContract& rc = d.rate_contract;
        std::vector<oracle::Verdict> overridden;  // verdicts under --rate-*-ulp, when given
        if (o.exp_ulp || o.div_ulp) overridden = b.decide(rc);
        const auto& rate_v = overridden.empty() ? v : overridden;
        for (std::int64_t r = 0; r < b.rows; ++r) {
          const oracle::RowView row = view.row(r);
          tally[oi].add(v[std::size_t(r)], rate_v[std::size_t(r)], row, oracle::row_scale(row, {b.eps, b.greedy_eps}), rc);
        }
        tally[oi].keys.merge(deciding_keys(o, b, k->contract(), tile_max, cfg.block_v));
        if (!o.kernels) continue;
        kernels::RunOptions opt;
        opt.config = cfg;
        const auto run = subject::run_kernel(*k, b, opt);
        if (!run.status.ok) throw std::runtime_error(k->name + ": " + run.status.message);
        kernel_stage1(b, run, *k, d);
        tokens[oi] = run.tokens;
        if (sampler && oi == 0) {  // the sampler beside fused-post, on the same noise
          const auto srun = sampler->run(b);
          if (!srun.status.ok) throw std::runtime_error(sampler->name() + ": " + srun.status.message);
          std::vector<std::int64_t> tokens(srun.tokens.begin(), srun.tokens.end()), all(std::size_t(b.rows));
          std::iota(all.begin(), all.end(), 0);
          tally_beside(run.tokens, v, tokens, b.decide(sampler->contract()), b.vocab, all, ts.beside,
                       ts.sampler_ambiguous);
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
      // fused-pre beside fused-post: predicted from their emulated keys; counted on the kernels when they ran.
      for (std::int64_t r = 0; r < b.rows; ++r) {
        const oracle::RowView row = view.row(r);
        const EmulatedPair e = emulate_pair(verdicts[0][std::size_t(r)], verdicts[1][std::size_t(r)], row,
                                            oracle::row_scale(row, {b.eps, b.greedy_eps}), tile_max[std::size_t(r)],
                                            cfg.block_v);
        tally[1].add_apart(e, o.kernels ? tokens[0][std::size_t(r)] != tokens[1][std::size_t(r)] : e.post != e.pre);
        if (!o.kernels) continue;
        // The baseline beside fused-post: predicted from its emulated race, counted on the kernels' tokens.
        const BaselineRace race(row, b.eps, baseline_launch(b, r));
        tally[1].add_base_apart(emulate_baseline(e, verdicts[0][std::size_t(r)], row, race),
                                tokens[0][std::size_t(r)] != base_run.tokens[std::size_t(r)]);
      }
    }
    std::fprintf(stderr, "  .. T=%g done\n", T);
  }
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
  NoiseTally noise;
  noise.add(a.noise.data(), std::int64_t(a.noise.size()));
  out.noise = noise.finish();
  return out;
}

}  // namespace raceoracle::analysis
