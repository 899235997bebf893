#include "oracle/oracle.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <thread>

#include "oracle/filter.h"
#include "oracle/reference.h"
#include "oracle/screen.h"
#include "oracle/verdict_rules.h"

namespace raceoracle::oracle {
namespace {

constexpr double kLog2e = 1.4426950408889634;  // log2(e), the nearest double

/// The screen's visits: their ids and ranking keys, the two best keys so far,
/// and from them the threshold below which no other id can matter: an id
/// with key < tau neither comes first or second (two visited ids have keys
/// >= k2) nor enters the ambiguity set (its hi is below the winner's lo).
/// The proof is in SCREEN.md.
class Candidates final : public ScreenVisitor {
 public:
  Candidates(const RowView& row, const RowScale& s, const rules::RowBounds& b) : row_(row), s_(s), b_(b) {}

  float visit(std::int64_t id) override {
    const double k = rules::ranking_key(row_.logit(id), row_.noise[id], s_);
    ids.push_back(id);
    keys.push_back(k);
    if (k > k1) k2 = k1, k1 = k;
    else if (k > k2) k2 = k;
    const double tau = std::min(k2, (k1 * b_.down_min - 2 * b_.abs_max) / b_.up_max);
    return threshold_for(tau);
  }

  std::vector<std::int64_t> ids;
  std::vector<double> keys;
  double k1 = -std::numeric_limits<double>::infinity(), k2 = k1;

 private:
  /// The largest fp32 threshold whose screen test skips only keys < tau.
  static float threshold_for(double tau) {
    const double t = tau / kScreenSlack;
    if (!(t > 0)) return 0.0f;  // visit everything
    if (t >= double(FLT_MAX)) return FLT_MAX;
    const float f = float(t);
    return double(f) > t ? std::nextafter(f, 0.0f) : f;
  }

  const RowView& row_;
  const RowScale& s_;
  const rules::RowBounds& b_;
};

void decide_greedy(const RowView& row, float max, Verdict& v) {
  const std::int64_t token = find_logit(row, max, 0, row.vocab);
  const LogitStats before = scan_logits(row, 0, token), after = scan_logits(row, token + 1, row.vocab);
  const bool lower = before.max >= after.max && token > 0;
  const float second = lower ? before.max : after.max;
  const std::int64_t at = lower ? find_logit(row, second, 0, token) : find_logit(row, second, token + 1, row.vocab);
  rules::greedy(v, row, token, at);
}

/// A row with filters (SPEC §9): the race over the kept set; the ambiguity
/// grows by every boundary id that can win once fp32 keeps it (ERROR_MODEL.md,
/// "The filters' boundary"). Rows that are not sampled ignore their filters.
Verdict decide_filtered(const RowView& row, const NumericsContract& c, const RaceConstants& request) {
  RowView plain = row;
  plain.filter = nullptr;
  Verdict v = decide(plain, c, request);
  if (v.row_class != RowClass::sampling) return v;
  if (!race::filter_valid(*row.filter)) {
    Verdict bad;
    bad.row_class = RowClass::invalid;
    bad.reason = InvalidReason::bad_filter;
    bad.token = -1;
    return bad;
  }
  const RowScale s = row_scale(row, {race::race_eps(request.eps, c.conventions), request.greedy_eps});
  const KeptSet ks = kept_set(row, *row.filter, s, c);
  std::vector<std::uint8_t> core = ks.kept;
  for (std::int64_t b : ks.boundary) core[std::size_t(b)] = 0;
  // The row with every id outside `keep` masked, decided as an unfiltered row.
  std::vector<float> masked(std::size_t(row.vocab));
  auto decide_masked = [&](const std::vector<std::uint8_t>& keep) {
    for (std::int64_t i = 0; i < row.vocab; ++i)
      masked[std::size_t(i)] = keep[std::size_t(i)] ? float(row.logit(i)) : -std::numeric_limits<float>::infinity();
    RowView m = plain;
    m.logits = masked.data();
    m.dtype = Dtype::f32;  // bf16 widens exactly
    return decide(m, c, request);
  };
  v = decide_masked(ks.kept);
  if (v.row_class == RowClass::forced) {  // one id kept: still a sampled row (only a forced row's token is certain)
    v.row_class = RowClass::sampling;
    const KeyBound kb = bound_key(row.logit(v.token), row.noise[v.token], s, c);
    v.key = kb.key;
    v.rho = kb.rho();
  }
  v.kept = ks.kept_count;
  v.kept_boundary = std::int64_t(ks.boundary.size());
  if (ks.boundary.empty()) return v;
  // Whatever fp32 keeps, it keeps the certain ids: their winner (or one it may
  // tie with), or a boundary id whose key may reach the certain winner's.
  const Verdict vc = decide_masked(core);
  std::vector<std::int64_t> amb = v.ambiguous;
  double floor = 0;  // no certain id: any boundary id may be kept alone
  if (vc.row_class == RowClass::sampling || vc.row_class == RowClass::forced) {
    amb.insert(amb.end(), vc.ambiguous.begin(), vc.ambiguous.end());
    floor = bound_key(row.logit(vc.token), row.noise[vc.token], s, c).lo;
  }
  for (std::int64_t b : ks.boundary)
    if (bound_key(row.logit(b), row.noise[b], s, c).hi >= floor) amb.push_back(b);
  std::sort(amb.begin(), amb.end());
  amb.erase(std::unique(amb.begin(), amb.end()), amb.end());
  v.ambiguous = std::move(amb);
  return v;
}

}  // namespace

const char* to_string(RowClass c) {
  switch (c) {
    case RowClass::greedy: return "greedy";
    case RowClass::sampling: return "sampling";
    case RowClass::forced: return "forced";
    case RowClass::fully_masked: return "fully-masked";
    case RowClass::invalid: return "invalid";
  }
  return "?";
}

const char* to_string(InvalidReason r) {
  switch (r) {
    case InvalidReason::none: return "none";
    case InvalidReason::nan_logit: return "NaN logit";
    case InvalidReason::pos_inf_logit: return "+inf logit";
    case InvalidReason::nan_temperature: return "NaN temperature";
    case InvalidReason::inf_temperature: return "infinite temperature";
    case InvalidReason::nan_noise: return "NaN noise";
    case InvalidReason::negative_noise: return "negative noise";
    case InvalidReason::inf_noise: return "infinite noise";
    case InvalidReason::zero_noise_without_eps: return "zero noise, and no eps (the sampler adds none, or the launch's eps is 0)";
    case InvalidReason::bad_filter: return "top_p outside (0, 1] or min_p outside [0, 1]";
    case InvalidReason::bad_draft: return "a draft id outside [0, V), or a draft probability negative, NaN or inf";
    case InvalidReason::bad_draft_count: return "the request's own draft count outside [0, k]";
    case InvalidReason::bad_uniform: return "an acceptance uniform outside [0, 1), or NaN";
  }
  return "?";
}

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::identical: return "identical";
    case Outcome::explained: return "explained";
    case Outcome::unexplained: return "UNEXPLAINED";
    case Outcome::out_of_range: return "OUT-OF-RANGE";
    case Outcome::out_of_contract: return "out-of-contract";
  }
  return "?";
}

RowScale row_scale(const RowView& row, const RaceConstants& k) {
  return {double(scan_logits(row).max), double(race::clamp_temperature(row.temperature)), k.eps, row.vocab};
}

namespace {

/// A sampler whose ties go to the highest id (race::TieRule::highest_id) is
/// judged by the definition's rule on its row read backwards, id i as
/// V - 1 - i: every tie the definition breaks toward the lowest id (equal
/// maxima, equal keys, a filter boundary) then breaks toward the highest, and
/// nothing else changes (the oracle's arithmetic does not depend on the ids'
/// order). The verdict's ids are mapped back. A row with no tie to break
/// (invalid, fully masked: id 0 still) is decided as it stands.
Verdict decide_highest_id(const RowView& row, NumericsContract c, const RaceConstants& request) {
  c.conventions.ties = race::TieRule::lowest_id;
  const std::int64_t V = row.vocab;
  std::vector<float> x(static_cast<std::size_t>(V)), e(row.noise ? static_cast<std::size_t>(V) : 0);
  for (std::int64_t i = 0; i < V; ++i) {
    x[std::size_t(V - 1 - i)] = float(row.logit(i));  // bf16 widens exactly
    if (row.noise) e[std::size_t(V - 1 - i)] = row.noise[i];
  }
  RowView backwards = row;
  backwards.logits = x.data();
  backwards.dtype = Dtype::f32;
  backwards.noise = row.noise ? e.data() : nullptr;
  Verdict v = decide(backwards, c, request);
  if (v.row_class == RowClass::invalid || v.row_class == RowClass::fully_masked) return decide(row, c, request);
  const auto back = [V](std::int64_t i) { return i < 0 ? i : V - 1 - i; };
  v.token = back(v.token);
  v.runner_up = back(v.runner_up);
  for (std::int64_t& a : v.ambiguous) a = back(a);
  std::sort(v.ambiguous.begin(), v.ambiguous.end());
  return v;
}

}  // namespace

Verdict decide(const RowView& row, const NumericsContract& contract, const RaceConstants& request) {
  if (contract.conventions.ties == race::TieRule::highest_id) return decide_highest_id(row, contract, request);
  if (row.filter && race::filtered(*row.filter, row.vocab)) return decide_filtered(row, contract, request);
  // The reference decides the rare rows (out of contract, fully masked,
  // forced, pre-scale past fp32's range, keys near its overflow); the common
  // ones are decided here from one fp32 pass, plus the screen for sampling.
  const float T = row.temperature;
  if (std::isnan(T) || T == std::numeric_limits<float>::infinity()) return decide_reference(row, contract, request);
  // The sampler's conventions: the eps it adds (race/definition.h).
  const RaceConstants k{race::race_eps(request.eps, contract.conventions), request.greedy_eps};
  const LogitStats stats = scan_logits(row);
  if (stats.nan_or_pos_inf || stats.unmasked <= 1) return decide_reference(row, contract, request);
  // With no eps (none added, or a launch's eps of 0) a key divides by its draw: a zero one is out of
  // contract (the reference says so).
  if (k.eps == 0.0f && !race::is_greedy(T, k.greedy_eps, contract.conventions) &&
      std::find(row.noise, row.noise + row.vocab, 0.0f) != row.noise + row.vocab)
    return decide_reference(row, contract, request);
  Verdict v;
  if (race::is_greedy(T, k.greedy_eps, contract.conventions)) {  // fp32 compare, as the kernels do
    decide_greedy(row, stats.max, v);
    return v;
  }
  const RowScale s{double(stats.max), double(race::clamp_temperature(T)), k.eps, row.vocab};
  const rules::RowBounds b = rules::row_bounds(stats.min_finite, s, contract);
  // Pre-scale past fp32's range makes every id ambiguous. The screen's proof
  // (SCREEN.md) needs its fp32 arithmetic in range: fl(x - M) finite, the
  // scale log2(e)/t a normal float, fl(E + eps) finite for every finite E.
  const float log2e_over_t = float(kLog2e / s.t);
  const bool in_range = double(stats.max) - double(stats.min_finite) < double(FLT_MAX) && log2e_over_t >= FLT_MIN &&
                        k.eps < 0x1p100f;
  if (std::isinf(b.up_max) || !in_range) return decide_reference(row, contract, request);
  Candidates c(row, s, b);
  if (!screen_row(row, stats.max, log2e_over_t, k.eps, 0.0f, c)) return decide_reference(row, contract, request);
  if (!(c.k1 * b.up_max < double(FLT_MAX) / 4)) return decide_reference(row, contract, request);
  rules::sampling(v, row, s, contract, b, c.ids, c.keys);
  return v;
}

std::vector<Verdict> decide_batch(const BatchView& b, const NumericsContract& contract, const RaceConstants& k,
                                  int threads) {
  validate(b);
  std::vector<Verdict> out(std::size_t(b.rows));
  const int n = std::max(1, std::min<int>(threads > 0 ? threads : int(std::thread::hardware_concurrency()), int(b.rows)));
  std::vector<std::thread> pool;
  for (int w = 0; w < n; ++w)
    pool.emplace_back([&, w] {
      for (std::int64_t r = w; r < b.rows; r += n) out[std::size_t(r)] = decide(b.row(r), contract, k);
    });
  for (auto& t : pool) t.join();
  return out;
}

Outcome judge(const Verdict& v, std::int64_t token, std::int64_t vocab) {
  if (token < 0 || token >= vocab) return Outcome::out_of_range;
  if (v.row_class == RowClass::invalid) return Outcome::out_of_contract;
  if (token == v.token) return Outcome::identical;
  if (v.any_id) return Outcome::explained;
  return std::binary_search(v.ambiguous.begin(), v.ambiguous.end(), token) ? Outcome::explained
                                                                           : Outcome::unexplained;
}

void OutcomeCounts::add(Outcome o) {
  switch (o) {
    case Outcome::identical: ++identical; break;
    case Outcome::explained: ++explained; break;
    case Outcome::unexplained: ++unexplained; break;
    case Outcome::out_of_range: ++out_of_range; break;
    case Outcome::out_of_contract: ++out_of_contract; break;
  }
}

std::string Verdict::describe() const {
  if (row_class == RowClass::invalid)
    return fmt::format("invalid ({}{})", to_string(reason), reason_id >= 0 ? fmt::format(" at id {}", reason_id) : "");
  std::string s = fmt::format("{} token={}", to_string(row_class), token);
  if (row_class == RowClass::sampling)
    s += fmt::format(" key={:.9g} rho={:.3g}", key, rho);
  else if (row_class == RowClass::greedy)
    s += fmt::format(" logit={:.9g}", key);
  if (runner_up >= 0)
    s += fmt::format(" runner-up={} ({:.9g}, gap {:.3g})", runner_up, runner_up_key, gap);
  if (kept >= 0) s += fmt::format(" kept={}{}", kept, kept_boundary ? fmt::format(" ({} on the boundary)", kept_boundary) : "");
  if (ambiguous.size() > 1) s += fmt::format(" ambiguous={{{}}}", fmt::join(ambiguous, ","));
  return s;
}

}  // namespace raceoracle::oracle
