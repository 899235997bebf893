#include "analysis/rate_study.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include "analysis/divergence_parts.h"
#include "analysis/lazy_noise.h"
#include "kernels/registry.h"
#include "oracle/error_model.h"
#include "oracle/verdict_rules.h"

namespace raceoracle::analysis {
namespace {

/// An undrawn id's key is below kappa (1 + 2^-23) (lazy_noise.h) and the
/// oracle's float64 keys are within 1 + 2^-39 of exact: drawing down to
/// kappa = tau / kSlack leaves out only ids with keys below tau.
constexpr double kSlack = 1 + 0x1p-20;
/// Rows drawn in full per temperature, at least: the self-check and the noise report.
constexpr std::int64_t kFullDraws = std::int64_t(1) << 22;

struct PoolRow {
  std::vector<float> owned;  ///< a drawn row's logits (a file's rows stay in the file's buffer)
  SortedRow sorted;
  std::vector<float> tile_max;  ///< per fused-kernel tile, for the emulated keys
};

/// The verdicts of one row: fused-post's and fused-pre's (kernel contracts),
/// and the single-pass baseline's.
constexpr int kVerdicts = 3, kBase = 2;

/// One scaling order: the kernel's contract and the rate's (the same unless --rate-*-ulp).
struct OrderContracts {
  race::ScalingOrder order;
  oracle::NumericsContract kernel, rate;
  bool rate_differs = false;  ///< --rate-exp-ulp or --rate-div-ulp given
};

/// What one temperature's rows share.
struct TemperatureRun {
  const DivergenceOptions& o;
  const std::vector<PoolRow>& pool;
  float T;
  double t;
  std::uint64_t stream_base;  ///< the temperature's index, high bits of every row's stream
  std::vector<double> mass;   ///< per pool row: sum of exp((x - M) / t), where the first kappa is aimed
  OrderContracts orders[2];
  oracle::NumericsContract base;  ///< the single-pass baseline's contract
  float eps = 0;               ///< the race's eps, the same under every contract here
  bool lazy = true;            ///< false: every row is drawn in full (a greedy T, eps 0, or contracts that differ in eps)
  int block_v = 0;
  /// The baseline's race on each pool row (baseline_emulation.h), as a row
  /// that starts on 16 bytes walks it and, where the rows of a batch do not
  /// all start so, as the others do (id by id).
  std::vector<std::optional<BaselineRace>> base_aligned, base_unaligned;
  oracle::Dtype dtype = oracle::Dtype::f32;  ///< the logits' dtype, as the kernels would load them
};

/// A thread's work space and sums.
struct Worker {
  std::vector<float> noise;  ///< a full row of noise: the drawn ids' entries are the ones read
  OrderTally tally[2];
  std::int64_t full_rows = 0;  ///< rows decided over every id (the lazy draw could not serve)
};

/// The drawn ids in ascending order with their keys: what rules::sampling reads.
struct Decided {
  std::vector<std::int64_t> ids;
  std::vector<double> keys;
};

/// The deciding ids among `d` (divergence_parts.h): their key errors into `ke`.
void add_key_errors(KeyErrors& ke, const TemperatureRun& run, const PoolRow& p, const float* noise, const Decided& d,
                    const oracle::RowScale& s, const oracle::NumericsContract& c) {
  std::vector<std::pair<double, std::int64_t>> keys;
  for (std::size_t q = 0; q < d.ids.size(); ++q) keys.push_back({d.keys[q], d.ids[q]});
  for (std::int64_t i : deciding_ids(std::move(keys), run.o))
    ke.add(p.sorted.logits[i], noise[i], run.eps, run.T, p.tile_max[std::size_t(i / run.block_v)], s, c);
}

/// fused-pre beside fused-post on the row, and the baseline beside
/// fused-post, emulated, into fused-pre's tally: predicted from the keys of
/// the top two, counted on the emulated tokens (row `r` of the study, from
/// pool row `pool_index`).
void add_pairs(const TemperatureRun& run, const PoolRow& p, std::size_t pool_index, std::int64_t r,
               const oracle::RowView& row, const oracle::RowScale& s, const oracle::Verdict (&v)[kVerdicts], Worker& w) {
  const EmulatedPair e = emulate_pair(v[0], v[1], row, s, p.tile_max, run.block_v);
  w.tally[1].add_apart(e, e.post != e.pre);
  // The row's place in a batch of o.rows rows (divergence with kernels uploads batches) sets its loads.
  const std::int64_t at = (r % run.o.rows) * p.sorted.vocab;
  const BaselineLaunch launch = baseline_launch(run.dtype, at, at);
  const BaselineRace& race = *(launch.load_ids > 1 ? run.base_aligned : run.base_unaligned)[pool_index];
  const oracle::Verdict& b = v[kBase];
  const std::int64_t token = b.row_class == oracle::RowClass::sampling ? race.token(b.ambiguous, row.noise) : -1;
  w.tally[1].add_base_apart(emulate_baseline(e, v[0], row, race), e.post >= 0 && token >= 0 && token != e.post);
}

oracle::RowView view(const PoolRow& p, const float* noise, float T) {
  return oracle::RowView{p.sorted.logits, oracle::Dtype::f32, noise, p.sorted.vocab, T, nullptr};
}

/// A row with every id's noise in w.noise, decided over every id, as `divergence` with kernels does.
void full_row(const TemperatureRun& run, const PoolRow& p, std::size_t pool_index, std::int64_t r, Worker& w,
              oracle::Verdict (*out)[kVerdicts] = nullptr) {
  const oracle::RowView row = view(p, w.noise.data(), run.T);
  Decided all;
  const oracle::RowScale s{double(p.sorted.max), run.t, run.eps, p.sorted.vocab};
  for (std::int64_t i = 0; i < p.sorted.vocab; ++i)
    if (std::isfinite(p.sorted.logits[i])) all.ids.push_back(i);
  for (std::int64_t i : all.ids) all.keys.push_back(oracle::rules::ranking_key(row.logit(i), w.noise[std::size_t(i)], s));
  oracle::Verdict v[kVerdicts];
  for (int oi = 0; oi < 2; ++oi) {
    const OrderContracts& c = run.orders[oi];
    v[oi] = oracle::decide(row, c.kernel);
    const oracle::Verdict rv = !c.rate_differs ? v[oi] : oracle::decide(row, c.rate);
    w.tally[oi].add(v[oi], rv, row, s, c.rate);
    add_key_errors(w.tally[oi].keys, run, p, w.noise.data(), all, s, c.kernel);
  }
  v[kBase] = oracle::decide(row, run.base);
  add_pairs(run, p, pool_index, r, row, s, v, w);
  if (out) std::copy(std::begin(v), std::end(v), *out);
  ++w.full_rows;
}

enum class Drawn { lazily, in_full };

/// A row drawn in full: `n` completed (every id's noise), decided over every id.
Drawn in_full(const TemperatureRun& run, const PoolRow& p, std::size_t pool_index, std::int64_t r, LazyNoise& n,
              Worker& w, oracle::Verdict (*out)[kVerdicts]) {
  n.materialize(w.noise.data());
  full_row(run, p, pool_index, r, w, out);
  return Drawn::in_full;
}

/// Row `r` from the ids that can matter; where the oracle decides over every
/// id (a row out of contract, forced or fully masked, pre-scale past fp32's
/// range, keys near its overflow; a temperature drawn in full), the same draw
/// completed and decided over every id, so that no draw is ever thrown back.
/// `complete`, when given and the row was decided lazily, receives the
/// completed noise (LazyNoise::materialize) for the check.
Drawn decide_row(const TemperatureRun& run, const PoolRow& p, std::size_t pool_index, std::int64_t r, UniformStream& rng,
                 Worker& w, oracle::Verdict (*out)[kVerdicts] = nullptr, float* complete = nullptr) {
  const SortedRow& sr = p.sorted;
  LazyNoise n(sr, run.t, run.eps, rng);
  if (!run.lazy || sr.nan_or_pos_inf || sr.by_logit.size() < 2) return in_full(run, p, pool_index, r, n, w, out);
  const oracle::RowScale s{double(sr.max), run.t, run.eps, sr.vocab};
  oracle::rules::RowBounds bounds[kVerdicts][2];  // [post, pre][kernel, rate]; [kBase] the baseline's, twice
  for (int oi = 0; oi < 2; ++oi) {
    bounds[oi][0] = oracle::rules::row_bounds(sr.min_finite, s, run.orders[oi].kernel);
    bounds[oi][1] = oracle::rules::row_bounds(sr.min_finite, s, run.orders[oi].rate);
  }
  bounds[kBase][0] = bounds[kBase][1] = oracle::rules::row_bounds(sr.min_finite, s, run.base);
  for (const auto& o : bounds)
    for (const auto& b : o)
      if (std::isinf(b.up_max)) return in_full(run, p, pool_index, r, n, w, out);
  const auto oracle_tau = [&](double k1, double k2) {  // oracle/SCREEN.md: no id below it can matter
    double tau = k2;
    for (const auto& o : bounds)
      for (const auto& b : o) tau = std::min(tau, (k1 * b.down_min - 2 * b.abs_max) / b.up_max);
    return tau;
  };
  Decided d;
  std::vector<double> best;  // the drawn keys, largest first (the first top_k of them, at least two)
  const std::size_t need_keys = std::max<std::size_t>(2, std::size_t(std::max(run.o.top_k, 0)));
  double kappa = run.mass[pool_index] / 4;  // about four ids reach it in a flat row
  if (!(kappa > 0) || !std::isfinite(kappa)) kappa = 0.25;
  bool ok = false;
  for (int step = 0; step < 200 && !ok; ++step) {
    n.lower_to(kappa);
    for (std::size_t q = d.keys.size(); q < n.ids().size(); ++q) {
      const std::int64_t i = n.ids()[q];
      d.keys.push_back(oracle::rules::ranking_key(sr.logits[i], n.noise()[q], s));
      best.insert(std::upper_bound(best.begin(), best.end(), d.keys.back(), std::greater<>()), d.keys.back());
    }
    double need = 0;
    if (best.size() >= 2) {
      need = oracle_tau(best[0], best[1]);
      need = std::min(need, run.o.top_k > 0 ? (best.size() >= need_keys ? best[need_keys - 1] : 0.0)
                                            : run.o.competitive * best[0]);
      ok = need > 0 && n.kappa() * kSlack <= need;
    }
    // Next: exactly what is needed once two keys are known; before, a quarter
    // lower, or down to where the largest undrawn weight is likely drawn (a
    // peaked row at a low T: its runner-up's key may be 1e-100 of the winner's).
    kappa = best.size() >= 2 && need > 0 ? need / kSlack : std::min(n.kappa(), n.largest_undrawn_weight()) / 4;
    if (!(kappa > 1e-280)) break;
  }
  if (!ok) return in_full(run, p, pool_index, r, n, w, out);
  for (const auto& o : bounds)
    for (const auto& b : o)
      if (!(best[0] * b.up_max < double(FLT_MAX) / 4)) return in_full(run, p, pool_index, r, n, w, out);  // the oracle's reference decides
  // The drawn ids in ascending order, their noise in the row's buffer.
  std::vector<std::size_t> order(n.ids().size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return n.ids()[a] < n.ids()[b]; });
  Decided sorted;
  for (std::size_t q : order) {
    sorted.ids.push_back(n.ids()[q]);
    sorted.keys.push_back(d.keys[q]);
    w.noise[std::size_t(n.ids()[q])] = n.noise()[q];
  }
  const oracle::RowView row = view(p, w.noise.data(), run.T);
  oracle::Verdict v[kVerdicts];
  for (int oi = 0; oi < 2; ++oi) {
    const OrderContracts& c = run.orders[oi];
    oracle::Verdict rv;
    oracle::rules::sampling(v[oi], row, s, c.kernel, bounds[oi][0], sorted.ids, sorted.keys);
    if (!c.rate_differs) rv = v[oi];
    else oracle::rules::sampling(rv, row, s, c.rate, bounds[oi][1], sorted.ids, sorted.keys);
    w.tally[oi].add(v[oi], rv, row, s, c.rate);
    add_key_errors(w.tally[oi].keys, run, p, w.noise.data(), sorted, s, c.kernel);
  }
  oracle::rules::sampling(v[kBase], row, s, run.base, bounds[kBase][0], sorted.ids, sorted.keys);
  add_pairs(run, p, pool_index, r, row, s, v, w);
  if (out) std::copy(std::begin(v), std::end(v), *out);
  if (complete) n.materialize(complete);
  return Drawn::lazily;
}

bool same_verdict(const oracle::Verdict& a, const oracle::Verdict& b) {
  return a.token == b.token && a.row_class == b.row_class && a.runner_up == b.runner_up && a.key == b.key &&
         a.runner_up_key == b.runner_up_key && a.gap == b.gap && a.rho == b.rho && a.ambiguous == b.ambiguous;
}

/// f(i) for i in [0, n) on `threads` threads, i interleaved.
template <class F>
void parallel_for(std::int64_t n, int threads, F f) {
  std::vector<std::thread> ts;
  for (int w = 0; w < threads; ++w)
    ts.emplace_back([&, w] {
      for (std::int64_t i = w; i < n; i += threads) f(i);
    });
  for (auto& t : ts) t.join();
}

/// The same deciding keys (the same ids' errors, summed in another order) and the same pair of orders.
bool same_tally(const OrderTally& ta, const OrderTally& tb) {
  const KeyErrors &a = ta.keys, &b = tb.keys;
  const auto same_gaps = [](const std::vector<RowGap>& x, const std::vector<RowGap>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i].gap != y[i].gap || x[i].threshold != y[i].threshold) return false;
    return true;
  };
  if (ta.apart_counted != tb.apart_counted || !same_gaps(ta.apart, tb.apart)) return false;
  if (ta.base_rows != tb.base_rows || ta.base_apart_counted != tb.base_apart_counted || !same_gaps(ta.base_apart, tb.base_apart))
    return false;
  const auto close = [](double x, double y) { return std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y)); };
  return a.keys == b.keys && a.off_max == b.off_max && a.max_actual == b.max_actual && a.max_bound == b.max_bound &&
         a.worst_ratio == b.worst_ratio && close(a.squares, b.squares) && close(a.off_max_squares, b.off_max_squares);
}

std::vector<PoolRow> make_pool(const DivergenceOptions& o, const LogitsDump* dump, std::int64_t n, int threads,
                               int block_v) {
  std::vector<PoolRow> pool(static_cast<std::size_t>(n));
  const std::int64_t V = dump ? dump->vocab : o.vocab;
  parallel_for(n, threads, [&](std::int64_t r) {
    PoolRow& p = pool[std::size_t(r)];
    const float* x = nullptr;
    if (dump) {
      x = dump->logits.data() + r * V;
    } else {
      p.owned = drawn_logit_row(o, r);
      x = p.owned.data();
    }
    p.sorted = sort_row(x, V);
    p.tile_max.assign(std::size_t((V + block_v - 1) / block_v), -INFINITY);
    for (std::int64_t i = 0; i < V; ++i)
      if (!std::isnan(x[i])) p.tile_max[std::size_t(i / block_v)] = std::max(p.tile_max[std::size_t(i / block_v)], x[i]);
  });
  return pool;
}

}  // namespace

DivergenceState run_rate_study(const DivergenceOptions& o) {
  if (o.logit_rows < 1) throw std::invalid_argument("--logit-rows must be at least 1");
  const std::unique_ptr<LogitsDump> dump = o.logits_file.empty() ? nullptr : std::make_unique<LogitsDump>(read_logits(o.logits_file));
  const std::int64_t rows = o.rows * o.batches;
  const std::int64_t pool_n = std::min({rows, o.logit_rows, dump ? dump->rows : rows});
  // This shard's rows of each temperature: o.shard.index, then every o.shard.count-th.
  const std::int64_t count = o.shard.count, mine = rows > o.shard.index ? (rows - o.shard.index + count - 1) / count : 0;
  const auto row_of = [&](std::int64_t j) { return o.shard.index + j * count; };
  const int threads = std::max(1, std::min<int>(int(std::thread::hardware_concurrency()), int(std::max<std::int64_t>(mine, 1))));
  const int block_v = kernels::FusedConfig{}.block_v;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<PoolRow> pool = make_pool(o, dump.get(), pool_n, threads, block_v);
  const std::int64_t V = dump ? dump->vocab : o.vocab;
  const oracle::Dtype dtype = dump ? dump->dtype : o.dtype;
  const std::int64_t checked = std::min(rows, std::max<std::int64_t>(1, (kFullDraws + V - 1) / V));
  DivergenceState out;
  out.options = o;
  out.backend = kernels::backend_name();
  out.pool_rows = pool_n;
  out.checked_rows = checked;
  for (std::size_t ti = 0; ti < o.temperatures.size(); ++ti) {
    const float T = o.temperatures[ti];
    TemperatureRun run{o, pool, T, double(race::clamp_temperature(T)), std::uint64_t(ti) << 40};
    run.block_v = block_v;
    run.dtype = dtype;
    for (int oi = 0; oi < 2; ++oi) {
      const race::ScalingOrder order = oi == 0 ? race::ScalingOrder::post : race::ScalingOrder::pre;
      const oracle::NumericsContract kc = kernels::fused_kernel(order).contract();
      run.orders[oi] = {order, kc, rate_contract(o, kc), o.exp_ulp.has_value() || o.div_ulp.has_value()};
    }
    run.base = kernels::find_kernel("baseline")->contract();
    const race::RaceConstants request{};
    run.eps = race::race_eps(request.eps, run.orders[0].kernel.conventions);
    for (const oracle::NumericsContract* k : {&run.orders[0].kernel, &run.orders[0].rate, &run.orders[1].kernel,
                                              &run.orders[1].rate, &run.base})
      if (race::race_eps(request.eps, k->conventions) != run.eps || run.eps <= 0 ||
          race::is_greedy(T, request.greedy_eps, k->conventions))
        run.lazy = false;
    run.mass.assign(pool.size(), 0);
    const float base_eps = race::race_eps(request.eps, run.base.conventions);
    const auto races = [&](const BaselineLaunch& launch) {  // the baseline's race on every pool row at T
      std::vector<std::optional<BaselineRace>> out(pool.size());
      parallel_for(std::int64_t(pool.size()), threads, [&](std::int64_t p) {
        out[std::size_t(p)].emplace(view(pool[std::size_t(p)], nullptr, T), base_eps, launch);
      });
      return out;
    };
    // A batch's first row starts on 16 bytes; its second, V elements on, starts as every unaligned row does.
    const BaselineLaunch row0 = baseline_launch(dtype, 0, 0), row1 = baseline_launch(dtype, V, V);
    run.base_aligned = races(row0);
    if (o.rows > 1 && row1.load_ids != row0.load_ids) run.base_unaligned = races(row1);
    if (run.lazy)  // the first threshold's sums: only a row drawn lazily reads them
      parallel_for(std::int64_t(pool.size()), threads, [&](std::int64_t p) {
        const SortedRow& sr = pool[std::size_t(p)].sorted;
        for (std::int32_t i : sr.by_logit) run.mass[std::size_t(p)] += std::exp((double(sr.logits[i]) - double(sr.max)) / run.t);
      });

    std::vector<Worker> workers(static_cast<std::size_t>(threads));
    for (auto& w : workers) w.noise.assign(std::size_t(V), 0.0f);
    // The first rows: drawn lazily and decided from the ids that can matter, then the rest of their noise
    // drawn and decided over every id. The verdicts and the deciding keys must be the same; the noise is
    // the report's.
    Worker& first = workers[0];
    std::int64_t j = 0, checked_here = 0;
    for (; j < mine && row_of(j) < checked; ++j, ++checked_here) {
      const std::int64_t r = row_of(j);
      const std::size_t pi = std::size_t(r % pool_n);
      Worker lazy_w, full_w;
      lazy_w.noise.assign(std::size_t(V), 0.0f);
      full_w.noise.assign(std::size_t(V), 0.0f);
      oracle::Verdict lazy[kVerdicts], full[kVerdicts];
      UniformStream rng(o.seed, run.stream_base + std::uint64_t(r));
      if (decide_row(run, pool[pi], pi, r, rng, lazy_w, &lazy, full_w.noise.data()) == Drawn::in_full) {
        full_w = std::move(lazy_w);  // decided over every id already
      } else {
        full_row(run, pool[pi], pi, r, full_w, &full);
        for (int oi = 0; oi < 2; ++oi)
          if (!same_verdict(lazy[oi], full[oi]) || !same_tally(lazy_w.tally[oi], full_w.tally[oi]))
            throw std::logic_error(fmt::format(
                "divergence: row {} at T = {:g} ({}): decided from the ids that can matter ({}; {} deciding keys) it "
                "differs from the oracle over every id ({}; {} deciding keys)",
                r, T, race::to_string(run.orders[oi].order), lazy[oi].describe(), lazy_w.tally[oi].keys.keys,
                full[oi].describe(), full_w.tally[oi].keys.keys));
        if (!same_verdict(lazy[kBase], full[kBase]))  // its pair is in fused-pre's tally, compared above
          throw std::logic_error(fmt::format(
              "divergence: row {} at T = {:g} (the baseline): decided from the ids that can matter ({}) it differs "
              "from the oracle over every id ({})",
              r, T, lazy[kBase].describe(), full[kBase].describe()));
      }
      out.noise.add(full_w.noise.data(), V);
      for (int oi = 0; oi < 2; ++oi) first.tally[oi].merge(std::move(full_w.tally[oi]));
      first.full_rows += full_w.full_rows;
    }
    const std::int64_t first_lazy = j;
    std::atomic<std::int64_t> done{checked_here};
    std::vector<std::thread> ts;
    for (int wi = 0; wi < threads; ++wi)
      ts.emplace_back([&, wi] {
        Worker& w = workers[std::size_t(wi)];
        auto last = std::chrono::steady_clock::now();
        for (std::int64_t k = first_lazy + wi; k < mine; k += threads) {
          const std::int64_t r = row_of(k);
          const std::size_t pi = std::size_t(r % pool_n);
          UniformStream rng(o.seed, run.stream_base + std::uint64_t(r));
          decide_row(run, pool[pi], pi, r, rng, w);
          const std::int64_t now_done = ++done;
          if (wi == 0 && std::chrono::steady_clock::now() - last > std::chrono::seconds(5)) {
            last = std::chrono::steady_clock::now();
            std::fprintf(stderr, "  .. T=%g: %lld of %lld rows\n", T, static_cast<long long>(now_done),
                         static_cast<long long>(mine));
          }
        }
      });
    for (auto& t : ts) t.join();
    for (const auto& w : workers) out.fallback_rows += w.full_rows;
    out.fallback_rows -= checked_here;
    TemperatureState& tstate = out.temperatures.emplace_back();
    tstate.temperature = T;
    for (int oi = 0; oi < 2; ++oi) {
      for (auto& w : workers) tstate.tally[oi].merge(std::move(w.tally[oi]));
      tstate.rows[oi].temperature = T;
      tstate.rows[oi].order = run.orders[oi].order;
      tstate.rows[oi].rate_contract = run.orders[oi].rate;
      tstate.rows[oi].kernels_ran = false;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "  .. T=%g done (%lld rows, %.1f s in all)\n", T, static_cast<long long>(mine), s);
  }
  return out;
}

}  // namespace raceoracle::analysis
