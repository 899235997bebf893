#include "properties/laws.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <limits>
#include <mutex>

#include "fixtures/case.h"
#include "kernels/device_memory.h"
#include "protocol/contract_fields.h"

namespace raceoracle::properties {
namespace {

using subject::Batch;
using oracle::Outcome;
using oracle::RowClass;
using oracle::Verdict;
constexpr float kInf = std::numeric_limits<float>::infinity();

std::mutex g_ratio_mutex;
double g_worst_ratio = 0;

struct Ran {
  std::string error;  // launch failure, empty when the kernel ran
  subject::KernelRun run;
};

Ran launch(const subject::Subject& k, const Batch& b, const kernels::FusedConfig& cfg,
           std::function<void(const kernels::Partials&)> hook = {}) {
  kernels::RunOptions o;
  o.config = cfg;
  o.between_stages = std::move(hook);
  Ran r;
  r.run = k.run(b, o);
  if (!r.run.status.ok) r.error = k.name() + " failed to run: " + r.run.status.message;
  return r;
}

std::string row_report(const Batch& b, std::int64_t r, const Verdict& v, std::int64_t token, const std::string& what) {
  std::vector<std::int64_t> ids{v.token, token, v.runner_up};
  for (auto a : v.ambiguous)
    if (ids.size() < 8) ids.push_back(a);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return fmt::format("{}\n  kernel returned {} ({})\n  oracle: {}\n  {}", what, token,
                     oracle::to_string(oracle::judge(v, token, b.vocab)), v.describe(), b.describe_row(r, ids));
}

/// The first row whose token fails `bad`, reported; empty if none.
template <class Bad>
std::string first_bad_row(const Batch& b, const std::vector<Verdict>& v, const std::vector<std::int32_t>& t,
                          const std::string& what, Bad bad) {
  for (std::int64_t r = 0; r < b.rows; ++r)
    if (bad(r, v[std::size_t(r)], t[std::size_t(r)])) return row_report(b, r, v[std::size_t(r)], t[std::size_t(r)], what);
  return {};
}

/// The laws that launch once and judge each row on its own: the first row
/// for which `bad(row, verdict, token)` holds, reported; empty if none.
template <class Bad>
std::string each_row(const LawContext& c, const std::string& what, Bad bad) {
  const Ran r = launch(c.subject, c.batch, c.config);
  if (!r.error.empty()) return r.error;
  return first_bad_row(c.batch, c.batch.decide(c.subject.contract()), r.run.tokens, what, bad);
}

bool is_fused(const subject::Subject& s) { return s.kernel() && s.kernel()->family == kernels::Family::fused; }

const subject::Subject& partner(const subject::Subject& s) {
  // The fused kernels and external samplers are compared with the baseline,
  // the baseline with fused-post; the filtered kernels with each other.
  const kernels::Family f = s.kernel() ? s.kernel()->family : kernels::Family::fused;
  const char* other = f == kernels::Family::baseline         ? "fused-post"
                      : f == kernels::Family::fused_filtered ? "sort-filtered"
                      : f == kernels::Family::sort_filtered  ? "fused-filtered"
                                                             : "baseline";
  return subject::subject_of(*kernels::find_kernel(other));
}

bool valid(const Verdict& v) { return v.row_class != RowClass::invalid; }

/// Two runs that gave different tokens for one valid row must both be inside
/// its ambiguity set; true when they are not.
bool unexplained_split(const Verdict& v, std::int32_t t1, std::int32_t t2, std::int64_t vocab) {
  return t1 != t2 && valid(v) &&
         (oracle::is_failure(oracle::judge(v, t1, vocab)) || oracle::is_failure(oracle::judge(v, t2, vocab)));
}

}  // namespace

namespace {
/// The certified interval of id `i`'s stage-1 key in row `row` of `b`.
oracle::KeyBound stage1_bound(const kernels::Kernel& k, const Batch& b, std::int64_t row, std::int64_t i, float tile_max) {
  return oracle::bound_stage1_key(b.x(row, i), b.e(row, i), tile_max, b.temperatures[std::size_t(row)], b.eps, k.contract());
}
}  // namespace

double worst_key_error_ratio() {
  std::lock_guard lock(g_ratio_mutex);
  return g_worst_ratio;
}

/// For a token the subject's contract leaves unexplained: the single
/// arithmetic terms it does not declare under which the token would be
/// explained (protocol::missing_terms), as a line of the report.
std::string missing_term_hint(const LawContext& c, std::int64_t row, std::int32_t token) {
  const oracle::RowView view = c.batch.view().row(row);
  const oracle::RaceConstants constants{c.batch.eps, c.batch.greedy_eps};
  auto explains = [&](const oracle::RowView& v, const oracle::NumericsContract& contract) {
    return !oracle::is_failure(oracle::judge(oracle::decide(v, contract, constants), token, c.batch.vocab));
  };
  // The gross defect first: a token the race wins when the row's filters are
  // not applied at all (a sampler that ignores them) is not a semantics question.
  std::string unfiltered_line;
  if (view.filter && race::filtered(*view.filter, view.vocab)) {
    oracle::RowView unfiltered = view;
    unfiltered.filter = nullptr;
    if (explains(unfiltered, c.subject.contract()))
      unfiltered_line = fmt::format("\n  explained by the race without the row's filters (top_k {}, top_p {}, min_p {}): "
                                    "does the sampler apply them?",
                                    view.filter->top_k, view.filter->top_p, view.filter->min_p);
  }
  std::vector<std::string> explaining;
  for (const protocol::TermWidening& w : protocol::missing_terms(c.subject.contract()))
    if (explains(view, w.contract)) explaining.push_back(w.label);
  if (explaining.empty())
    return unfiltered_line.empty() ? "\n  no single arithmetic term the contract leaves out explains it (oracle/ERROR_MODEL.md)"
                                   : unfiltered_line;
  return unfiltered_line + fmt::format("\n  {}xplained had the contract also declared: {}", unfiltered_line.empty() ? "e" : "or e",
                                       fmt::join(explaining, "; or "));
}

std::string agrees_with_oracle(const LawContext& c) {
  const Ran ran = launch(c.subject, c.batch, c.config);
  if (!ran.error.empty()) return ran.error;
  // A sampler that echoed the noise it drew (checked against its stream) is
  // judged on that noise exactly: no transform error left to allow.
  Batch echoed;
  oracle::NumericsContract contract = c.subject.contract();
  if (!ran.run.echoed_noise.empty()) {
    echoed = c.batch;
    echoed.noise = ran.run.echoed_noise;
    echoed.noise_stride = echoed.vocab;
    contract.noise_ulp = contract.noise_abs = 0;
  }
  const Batch& b = ran.run.echoed_noise.empty() ? c.batch : echoed;
  const auto v = b.decide(contract);
  for (std::int64_t r = 0; r < b.rows; ++r) {
    const Verdict& vr = v[std::size_t(r)];
    const std::int32_t t = ran.run.tokens[std::size_t(r)];
    const oracle::Outcome o = oracle::judge(vr, t, b.vocab);
    if (oracle::is_failure(o))
      return row_report(b, r, vr, t, &b == &echoed ? "disagrees with the oracle on the noise it echoed"
                                                   : "disagrees with the oracle beyond explained divergence") +
             (o == oracle::Outcome::unexplained ? missing_term_hint(c, r, t) : "");
  }
  return {};
}

std::string greedy_is_exact(const LawContext& c) {
  // Run twice: with the case's noise, then with noise that differs id by id
  // (NaN, 0, -1, +inf, subnormal, huge, -0, 2^-24 in turn). A greedy row reads
  // no noise, so both must give the oracle's token exactly; noise changed the
  // same way on every id could hide a kernel that reads some ids' noise.
  Batch blind = c.batch;
  const float uneven[] = {std::numeric_limits<float>::quiet_NaN(), 0.0f, -1.0f, std::numeric_limits<float>::infinity(),
                          1e-40f, 3.4e38f, -0.0f, 0x1p-24f};
  for (std::size_t i = 0; i < blind.noise.size(); ++i) blind.noise[i] = uneven[(i * 5 + i / 7) % 8];
  const auto v = c.batch.decide(c.subject.contract());
  for (const Batch* b : std::initializer_list<const Batch*>{&c.batch, &blind}) {
    const Ran r = launch(c.subject, *b, c.config);
    if (!r.error.empty()) return r.error;
    const std::string bad = first_bad_row(
        *b, v, r.run.tokens, b == &c.batch ? "greedy row not bit-exact" : "greedy row changed when its noise changed id by id",
        [&](std::int64_t row, const Verdict& vr, std::int32_t t) {
          // Greedy by the rule the subject is judged by (race/definition.h's conventions).
          // A greedy verdict explains its token alone (a fully masked row of a sampler that declares any id: any).
          return race::is_greedy(b->temperatures[std::size_t(row)], b->greedy_eps, c.subject.contract().conventions) &&
                 valid(vr) && oracle::is_failure(oracle::judge(vr, t, b->vocab));
        });
    if (!bad.empty()) return bad;
  }
  return {};
}

std::string masked_ids_never_win(const LawContext& c) {
  return each_row(c, "a masked id won while an unmasked id existed", [&](std::int64_t row, const Verdict& vr, std::int32_t t) {
    if (!valid(vr) || vr.row_class == RowClass::fully_masked) return false;
    return t < 0 || t >= c.batch.vocab || c.batch.x(row, t) == -kInf;
  });
}

std::string forced_row_gives_forced_id(const LawContext& c) {
  return each_row(c, "forced row did not give its forced id", [](std::int64_t, const Verdict& vr, std::int32_t t) {
    return vr.row_class == RowClass::forced && t != vr.token;
  });
}

std::string fully_masked_row_is_zero(const LawContext& c) {
  return each_row(c, "fully masked row did not give id 0", [](std::int64_t, const Verdict& vr, std::int32_t t) {
    return vr.row_class == RowClass::fully_masked && t != 0;
  });
}

std::string tokens_in_range(const LawContext& c) {
  return each_row(c, "token out of [0, V)",
                  [&](std::int64_t, const Verdict&, std::int32_t t) { return t < 0 || t >= c.batch.vocab; });
}

std::string partials_are_finite(const LawContext& c) {
  const Ran r = launch(c.subject, c.batch, c.config);
  if (!r.error.empty()) return r.error;
  const auto v = c.batch.decide(c.subject.contract());
  const auto& p = r.run.partials;
  for (std::int64_t row = 0; row < c.batch.rows; ++row) {
    // Keys and maxima are judged on rows in contract; a tile's id on every
    // row: no input makes an id outside the tile (past V, say) a tile's winner.
    const bool judged = valid(v[std::size_t(row)]);
    const bool greedy = race::is_greedy(c.batch.temperatures[std::size_t(row)], c.batch.greedy_eps);
    for (std::int64_t t = 0; t < p.tiles; ++t) {
      const std::size_t k = std::size_t(row * p.tiles + t);
      const std::int64_t lo = t * c.config.block_v, hi = std::min(c.batch.vocab, lo + c.config.block_v);
      const bool key_ok = !judged || (greedy ? !std::isnan(p.key[k]) : (std::isfinite(p.key[k]) && p.key[k] >= 0));
      // The max is exact arithmetic: the tile's largest logit (NaN ignored,
      // -inf for a masked tile), whatever the scaling order (docs/SPEC.md §2).
      float tile_max = -kInf;
      for (std::int64_t i = lo; i < hi; ++i) tile_max = std::fmax(tile_max, c.batch.x(row, i));
      const bool m_ok = !judged || (!std::isnan(p.m[k]) && p.m[k] != kInf && p.m[k] == tile_max);
      const bool idx_ok = p.idx[k] >= lo && p.idx[k] < hi;
      if (!key_ok || !m_ok || !idx_ok)
        return fmt::format("partials of row {} tile {} (ids {}..{}) are part_m={} part_key={} part_idx={} (tile max {})\n  {}",
                           row, t, lo, hi - 1, p.m[k], p.key[k], p.idx[k], tile_max,
                           c.batch.describe_row(row, {lo, std::clamp<std::int64_t>(p.idx[k], 0, c.batch.vocab - 1)}));
    }
  }
  return {};
}

std::string fused_matches_baseline(const LawContext& c) {
  const subject::Subject& other = partner(c.subject);
  // A partner that applies no filters (SPEC §9) runs, and is judged, on the rows without them.
  subject::Batch unfiltered;
  const bool strip = !c.batch.filters.empty() && !other.contract().filters.applied;
  if (strip) unfiltered = c.batch, unfiltered.filters.clear();
  const subject::Batch& theirs_batch = strip ? unfiltered : c.batch;
  const Ran a = launch(c.subject, c.batch, c.config), b = launch(other, theirs_batch, c.config);
  if (!a.error.empty()) return a.error;
  if (!b.error.empty()) return b.error;
  // Each token judged under its own kernel's contract: the fused kernel's
  // two stages, the baseline's online max (pre-scale), an external sampler's
  // declared arithmetic and conventions (docs/CONVENTIONS.md; the partner,
  // one of raceoracle's kernels, follows SPEC §1's). A split is a defect
  // unless both tokens are explained, each by its own arithmetic.
  const auto va = c.batch.decide(c.subject.contract()), vb = theirs_batch.decide(other.contract());
  for (std::int64_t r = 0; r < c.batch.rows; ++r) {
    const auto ta = a.run.tokens[std::size_t(r)], tb = b.run.tokens[std::size_t(r)];
    const Verdict &mine = va[std::size_t(r)], &theirs = vb[std::size_t(r)];
    if (ta == tb || !valid(mine) || !valid(theirs)) continue;
    const bool a_bad = oracle::is_failure(oracle::judge(mine, ta, c.batch.vocab));
    if (a_bad || oracle::is_failure(oracle::judge(theirs, tb, c.batch.vocab)))
      return row_report(c.batch, r, a_bad ? mine : theirs, a_bad ? ta : tb,
                        fmt::format("{} gave {} and {} gave {}, each judged by its own contract: not both explained",
                                    c.subject.name(), ta, other.name(), tb));
  }
  return {};
}

std::string rows_are_independent(const LawContext& c) {
  const Ran all = launch(c.subject, c.batch, c.config);
  if (!all.error.empty()) return all.error;
  const auto v = c.batch.decide(c.subject.contract());
  // Each row against itself elsewhere: the batch reversed (rows with their
  // filters, temperatures and seeds), and each row alone. A token may move
  // only where drawn noise moves with the row's place, and then both must be explained.
  auto compare = [&](const Batch& other, const std::vector<std::int64_t>& order, const std::string& how) -> std::string {
    const Ran o = launch(c.subject, other, c.config);
    if (!o.error.empty()) return o.error;
    const auto vo = other.decide(c.subject.contract());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::int64_t r = order[k];
      const auto ta = all.run.tokens[std::size_t(r)], tb = o.run.tokens[k];
      if (ta == tb || !valid(v[std::size_t(r)])) continue;
      const bool a_bad = oracle::is_failure(oracle::judge(v[std::size_t(r)], ta, c.batch.vocab));
      if (a_bad || oracle::is_failure(oracle::judge(vo[k], tb, c.batch.vocab)))
        return row_report(a_bad ? c.batch : other, a_bad ? r : std::int64_t(k), a_bad ? v[std::size_t(r)] : vo[k], a_bad ? ta : tb,
                          fmt::format("row {} gave {} in the batch and {} {}: not both explained", r, ta, tb, how));
    }
    return {};
  };
  std::vector<std::int64_t> reversed(std::size_t(c.batch.rows));
  for (std::int64_t r = 0; r < c.batch.rows; ++r) reversed[std::size_t(r)] = c.batch.rows - 1 - r;
  if (c.batch.rows > 1)
    if (std::string f = compare(c.batch.take_rows(reversed), reversed, "with the rows reversed"); !f.empty()) return f;
  for (std::int64_t r = 0; r < c.batch.rows && c.batch.rows > 1; ++r)
    if (std::string f = compare(c.batch.take_rows({r}), {r}, "alone"); !f.empty()) return f;
  return {};
}

/// Batch sizes the law embeds each row in: both sides of every count a kernel or an engine may switch its
/// path on (a vector of 8, a warp of 32, 64-row and 128-row launches, a 256-row grid; issue reports).
inline constexpr std::int64_t kBatchmateSizes[] = {2, 7, 8, 9, 16, 33, 64, 65, 128, 257};

std::string batchmate_invariance(const LawContext& c) {
  const oracle::NumericsContract contract = c.subject.contract();
  // Exact only where the row's noise goes with it: a stream that puts the row's index into the draw gives
  // it other noise elsewhere (alone too), and its token is then judged within the contract on that noise.
  const std::optional<race::NoiseStream> stream = c.subject.noise_stream();
  const bool exact = contract.batch_invariance == race::BatchInvariance::exact && (!stream || race::keyed_by_request(*stream));
  // Each row alone, with its verdict there.
  std::vector<std::int32_t> alone;
  std::vector<oracle::Verdict> va;
  for (std::int64_t r = 0; r < c.batch.rows; ++r) {
    const Batch one = c.batch.take_rows({r});
    const Ran a = launch(c.subject, one, c.config);
    if (!a.error.empty()) return a.error;
    alone.push_back(a.run.tokens[0]);
    va.push_back(one.decide(contract)[0]);
  }
  // The case's rows repeated to each size: every row meets the others as batchmates, first, last and in
  // between; its noise (or its seed and offset) travels with it.
  for (const std::int64_t n : kBatchmateSizes) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k) order[std::size_t(k)] = k % c.batch.rows;
    const Batch big = c.batch.take_rows(order);
    const Ran o = launch(c.subject, big, c.config);
    if (!o.error.empty()) return o.error;
    std::vector<oracle::Verdict> vb;  // the batch's verdicts, decided at its first moved token
    for (std::int64_t k = 0; k < n; ++k) {
      const std::size_t r = std::size_t(order[std::size_t(k)]);
      const std::int32_t a = alone[r], t = o.run.tokens[std::size_t(k)];
      if (t == a) continue;
      const std::string where = fmt::format("row {} gave {} alone and {} as row {} of a batch of {}", r, a, t, k, n);
      if (exact) return row_report(c.batch, std::int64_t(r), va[r], t, where + " (it declares batch_invariance = exact)");
      if (!valid(va[r])) continue;
      if (vb.empty()) vb = big.decide(contract);
      if (oracle::is_failure(oracle::judge(va[r], a, c.batch.vocab)))
        return row_report(c.batch.take_rows({std::int64_t(r)}), 0, va[r], a, where + ": not both explained (alone)");
      if (oracle::is_failure(oracle::judge(vb[std::size_t(k)], t, c.batch.vocab)))
        return row_report(big, k, vb[std::size_t(k)], t, where + ": not both explained (in the batch)");
    }
  }
  return {};
}

std::string deterministic(const LawContext& c) {
  const Ran first = launch(c.subject, c.batch, c.config), again = launch(c.subject, c.batch, c.config);
  if (!first.error.empty()) return first.error;
  if (!again.error.empty()) return again.error;
  const auto v = c.batch.decide(c.subject.contract());
  for (std::int64_t r = 0; r < c.batch.rows; ++r)
    if (first.run.tokens[std::size_t(r)] != again.run.tokens[std::size_t(r)])
      return row_report(c.batch, r, v[std::size_t(r)], again.run.tokens[std::size_t(r)],
                        fmt::format("repeated launch changed the token from {}", first.run.tokens[std::size_t(r)]));
  if (!is_fused(c.subject)) return {};
  // Another tile size may round differently, but only inside the ambiguity set.
  for (const auto& other : kernels::kFusedConfigs) {
    if (other.block_v == c.config.block_v) continue;
    const Ran o = launch(c.subject, c.batch, other);
    if (!o.error.empty()) return o.error;
    for (std::int64_t r = 0; r < c.batch.rows; ++r) {
      const auto t1 = first.run.tokens[std::size_t(r)], t2 = o.run.tokens[std::size_t(r)];
      const Verdict& vr = v[std::size_t(r)];
      if (unexplained_split(vr, t1, t2, c.batch.vocab))
        return row_report(c.batch, r, vr, t2,
                          fmt::format("BLOCK_V={} gave {}, BLOCK_V={} gave {}: not both explained", c.config.block_v, t1,
                                      other.block_v, t2));
    }
  }
  return {};
}

std::string key_error_within_bound(const LawContext& c) {
  const kernels::Kernel& kernel = *c.subject.kernel();  // Needs::partials
  const Ran r = launch(c.subject, c.batch, c.config);
  if (!r.error.empty()) return r.error;
  const auto v = c.batch.decide(c.subject.contract());
  const auto& p = r.run.partials;
  const Batch& b = c.batch;
  double worst = 0;
  for (std::int64_t row = 0; row < b.rows; ++row) {
    const Verdict& vr = v[std::size_t(row)];
    const float T = b.temperatures[std::size_t(row)];
    if (!valid(vr) || race::is_greedy(T, b.greedy_eps)) continue;
    for (std::int64_t t = 0; t < p.tiles; ++t) {
      const std::size_t k = std::size_t(row * p.tiles + t);
      const std::int64_t lo = t * c.config.block_v, hi = std::min(b.vocab, lo + c.config.block_v);
      const float m_t = p.m[k];
      if (!(m_t > -kInf)) continue;  // fully masked tile: partials_are_finite's business
      const std::int64_t i = p.idx[k];
      if (i < lo || i >= hi) return fmt::format("row {} tile {}: part_idx {} outside the tile {}..{}", row, t, i, lo, hi - 1);
      const oracle::KeyBound kb = stage1_bound(kernel, b, row, i, m_t);
      if (!(kb.lo <= p.key[k] && p.key[k] <= kb.hi))
        return fmt::format(
            "row {} tile {}: stage-1 key of id {} is {:.9g}, exact {:.9g}, certified interval [{:.9g}, {:.9g}] "
            "(relative error {:.3g}, bound {:.3g})\n  {}",
            row, t, i, p.key[k], kb.key, kb.lo, kb.hi, std::abs(p.key[k] / kb.key - 1), kb.rho(), b.describe_row(row, {i}));
      worst = std::max(worst, oracle::error_ratio(kb, p.key[k]));
      // And the tile's winner must be one the arithmetic allows.
      std::int64_t best = lo;
      oracle::KeyBound bb = stage1_bound(kernel, b, row, lo, m_t);
      for (std::int64_t j = lo + 1; j < hi; ++j) {
        const oracle::KeyBound bj = stage1_bound(kernel, b, row, j, m_t);
        if (bj.key > bb.key) best = j, bb = bj;
      }
      const bool exact_tie_loser = i > best && b.x(row, i) == m_t && b.x(row, best) == m_t && b.e(row, i) == b.e(row, best);
      if (i != best && (!oracle::may_outrank(kb, bb) || exact_tie_loser))
        return fmt::format("row {} tile {}: stage 1 picked id {} (key {:.9g}) over id {} (key {:.9g}), beyond the bound\n  {}",
                           row, t, i, kb.key, best, bb.key, b.describe_row(row, {i, best}));
    }
  }
  std::lock_guard lock(g_ratio_mutex);
  g_worst_ratio = std::max(g_worst_ratio, worst);
  return {};
}

std::string nan_isolation(const LawContext& c) {
  const Ran r = launch(c.subject, c.batch, c.config);
  if (!r.error.empty()) return r.error;
  Batch masked = c.batch;
  for (float& x : masked.logits)
    if (std::isnan(x)) x = -kInf;
  const auto v = masked.decide(c.subject.contract());
  return first_bad_row(c.batch, v, r.run.tokens, "a NaN logit changed the outcome (it must act as a masked id)",
                       [&](std::int64_t row, const Verdict& vr, std::int32_t t) {
                         bool has_nan = false;
                         for (std::int64_t i = 0; i < c.batch.vocab && !has_nan; ++i) has_nan = std::isnan(c.batch.x(row, i));
                         if (!has_nan || !valid(vr) || vr.row_class == RowClass::fully_masked) return false;
                         return oracle::is_failure(oracle::judge(vr, t, c.batch.vocab));
                       });
}

std::string sentinel_escapes_visibly(const LawContext& c) {
  // Pretend stage 1 found nothing anywhere: every partial is the "no
  // candidate" sentinel. Stage 2 must pass it through, not clamp it.
  const Ran r = launch(c.subject, c.batch, c.config, [&](const kernels::Partials& p) {
    const std::size_t n = std::size_t(c.batch.rows * p.tiles);
    const std::vector<float> m(n, -kInf), key(n, std::numeric_limits<float>::quiet_NaN());
    const std::vector<std::int32_t> idx(n, INT_MAX);
    kernels::copy_to_device(p.m, m.data(), n * 4);
    kernels::copy_to_device(p.key, key.data(), n * 4);
    kernels::copy_to_device(p.idx, idx.data(), n * 4);
  });
  if (!r.error.empty()) return r.error;
  for (std::int64_t row = 0; row < c.batch.rows; ++row) {
    const auto t = r.run.tokens[std::size_t(row)];
    if (t >= 0 && t < c.batch.vocab)
      return fmt::format("row {}: with every partial set to the no-candidate sentinel (idx {}), stage 2 returned {}, "
                         "an id in range: the escaped sentinel was hidden (a result clamp?)",
                         row, INT_MAX, t);
  }
  return {};
}

std::string large_stride_rows(const LawContext& c) {
  // The case's rows (its first kLargeStrideRows), stored 2^31 + 64 elements
  // apart: row 2 starts past 2^32 elements, where 32-bit offsets wrap. Only
  // the rows' pages are touched.
  constexpr std::int64_t kLargeStrideRows = 3;
  std::vector<std::int64_t> first;
  for (std::int64_t r = 0; r < std::min(c.batch.rows, kLargeStrideRows); ++r) first.push_back(r);
  Batch head;  // only a case of more rows is copied
  if (c.batch.rows > kLargeStrideRows) head = c.batch.take_rows(first);
  const Batch& b = c.batch.rows > kLargeStrideRows ? head : c.batch;
  const std::int64_t stride = (std::int64_t(1) << 31) + 64, slack = 4096;
  const std::size_t esize = oracle::size_of(b.dtype);
  const std::size_t total = std::size_t((b.rows - 1) * stride + b.vocab + slack) * esize;
  try {
    kernels::DeviceArray<unsigned char> logits(total);
    const auto* host = static_cast<const unsigned char*>(b.storage());
    for (std::int64_t r = 0; r < b.rows; ++r)
      kernels::copy_to_device(logits.get() + std::size_t(r * stride) * esize, host + std::size_t(r * b.logit_stride) * esize,
                              std::size_t(b.vocab) * esize);
    const kernels::Kernel& k = *c.subject.kernel();  // Needs::kernel
    kernels::DeviceArray<float> noise(b.noise), temps(b.temperatures);
    const subject::DeviceSeeds seeds = subject::upload_seeds(k, b);
    kernels::DeviceArray<std::int32_t> tokens(std::size_t(b.rows));
    kernels::SampleArgs a = subject::device_args(b, logits.get(), stride, noise.get(), temps.get(), tokens.get());
    seeds.attach(k, a);
    const subject::DeviceFilters filters = subject::upload_filters(k, b);
    filters.attach(a);
    kernels::RunOptions o;
    o.config = c.config;
    const kernels::Status s = k.run(a, o);
    if (!s.ok) return k.name + " failed to run: " + s.message;
    const auto t = tokens.download();
    const auto v = b.decide(c.subject.contract());
    return first_bad_row(b, v, t, fmt::format("row stride {} (rows * stride > 2^32): wrong token", stride),
                         [&](std::int64_t, const Verdict& vr, std::int32_t tok) {
                           return oracle::is_failure(oracle::judge(vr, tok, b.vocab));
                         });
  } catch (const std::exception& e) {
    return std::string("could not set up the large-stride batch: ") + e.what();
  }
}

}  // namespace raceoracle::properties
