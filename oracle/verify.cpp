#include "oracle/verify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "oracle/filter.h"
#include "oracle/probability.h"

namespace raceoracle::oracle {
namespace {


VerifyVerdict invalid(InvalidReason reason, std::int64_t position, std::int64_t id) {
  VerifyVerdict v;
  v.request_class = RowClass::invalid;
  v.reason = reason;
  v.reason_position = position;
  v.reason_id = id;
  v.token = -1;
  return v;
}

/// The first input out of SPEC §11's contract that every chain reads: the
/// temperature, the target logits, the drafts and their probabilities, the
/// uniforms, the filters of a sampling request.
VerifyVerdict check_inputs(const VerifyView& r, bool greedy) {
  const float T = r.temperature;
  if (std::isnan(T)) return invalid(InvalidReason::nan_temperature, -1, -1);
  if (T == std::numeric_limits<float>::infinity()) return invalid(InvalidReason::inf_temperature, -1, -1);
  if (!r.draft_count_in_contract) return invalid(InvalidReason::bad_draft_count, -1, -1);
  for (std::int64_t j = 0; j <= r.drafts; ++j) {
    const RowView row = r.target_row(j, nullptr);
    for (std::int64_t i = 0; i < r.vocab; ++i) {
      const double x = row.logit(i);
      if (std::isnan(x)) return invalid(InvalidReason::nan_logit, j, i);
      if (x == kInf) return invalid(InvalidReason::pos_inf_logit, j, i);
    }
  }
  for (std::int64_t j = 0; j < r.drafts; ++j) {
    const std::int64_t d = r.draft_ids[j];
    if (d < 0 || d >= r.vocab) return invalid(InvalidReason::bad_draft, j, d);
  }
  if (greedy) return {};
  if (r.filter && race::filtered(*r.filter, r.vocab) && !race::filter_valid(*r.filter))
    return invalid(InvalidReason::bad_filter, -1, -1);
  for (std::int64_t j = 0; j < r.drafts; ++j) {
    const double u = r.uniforms[j];
    if (!(u >= 0 && u < 1)) return invalid(InvalidReason::bad_uniform, j, -1);
    if (r.draft_probs)
      for (std::int64_t i = 0; i < r.vocab; ++i) {
        const float q = r.draft_probs[j * r.vocab + i];
        if (!(q >= 0) || std::isinf(q)) return invalid(InvalidReason::bad_draft, j, i);
      }
  }
  return {};
}

/// The residual race's E out of contract (SPEC §1's noise rules), or none.
VerifyVerdict check_recovery_noise(const VerifyView& r, float eps) {
  for (std::int64_t i = 0; i < r.vocab; ++i) {
    const float e = r.recovery_noise[i];
    if (std::isnan(e)) return invalid(InvalidReason::nan_noise, -1, i);
    if (e < 0) return invalid(InvalidReason::negative_noise, -1, i);
    if (std::isinf(e)) return invalid(InvalidReason::inf_noise, -1, i);
    if (e == 0 && eps == 0) return invalid(InvalidReason::zero_noise_without_eps, -1, i);
  }
  return {};
}

/// Draft j's acceptance: exact, and what fp32 may do (ERROR_MODEL.md, "The verify step").
Acceptance acceptance_of(const VerifyView& r, std::int64_t j, const Probabilities& P, const NumericsContract& c,
                         const VerifyRules& rules, bool& exact, double& ratio) {
  const std::int64_t d = r.draft_ids[j];
  const double q = r.draft_prob(j, d), u = r.uniforms[j];
  exact = q > 0 && P.p[std::size_t(d)] / q >= u;
  ratio = q > 0 ? P.p[std::size_t(d)] / q : kInf;
  if (!(q > 0)) return Acceptance::reject;  // the sampler's own check, on the given fp32 value
  const auto [lo, hi] = acceptance_ratio(P, d, q, c);
  // The uniform as compared: the float64 one, or rounded to fp32 (relative u, or 2^-150 below the normal range).
  const double ru = rules.uniform_f32 ? kUnitRoundoff : 0.0, au = rules.uniform_f32 ? 0x1p-150 : 0.0;
  const double u_lo = std::max(0.0, u * (1 - ru) - au), u_hi = u * (1 + ru) + au;
  if (lo >= u_hi) return Acceptance::accept;
  if (hi < u_lo) return Acceptance::reject;
  return Acceptance::either;
}

/// The residual race at position j: its exact winner and every id fp32 may
/// make win (ascending).
std::vector<std::int64_t> residual_race(const VerifyView& r, std::int64_t j, const Probabilities& P,
                                        const NumericsContract& c, float eps, std::int64_t& winner) {
  const double u = kUnitRoundoff, r_div = relative_error(c.div_ulp), r_key = c.key_reciprocal ? u : 0.0;
  std::vector<double> hi(std::size_t(r.vocab), 0.0);
  double best = -1, floor = 0;
  winner = 0;
  for (std::int64_t i = 0; i < r.vocab; ++i) {
    const std::size_t s = std::size_t(i);
    const double q = r.draft_prob(j, i), den = double(r.recovery_noise[i]) + double(eps);
    const double res = std::max(P.p[s] - q, 0.0);
    const double key = res > 0 ? res / den : 0.0;
    if (key > best) best = key, winner = i;  // ties to the lowest id; all zero: id 0
    // fl(p' - q) rounds once; fl(E + eps) once (exact when eps is 0); the division once.
    const double res_lo = std::max(P.lo[s] - q, 0.0) * (1 - u), res_hi = std::max(P.hi[s] - q, 0.0) * (1 + u);
    const double den_lo = eps == 0 ? den : den * (1 - u), den_hi = eps == 0 ? den : den * (1 + u);
    const double lo = res_lo > 0 ? std::max(0.0, res_lo / den_hi * (1 - r_div) * (1 - r_key) / kBoundSafety - 0x1p-126) : 0.0;
    hi[s] = res_hi > 0 ? (den_lo > 0 ? (res_hi / den_lo * (1 + r_div) * (1 + r_key) + 0x1p-149) * kBoundSafety : kInf) : 0.0;
    floor = std::max(floor, lo);
  }
  // Keys past fp32's range compute as inf and tie (the lowest id wins): no floor above FLT_MAX.
  floor = std::min(floor, double(FLT_MAX));
  std::vector<std::int64_t> may;
  if (floor == 0) may.push_back(0);  // every key may compute as 0: the lowest id wins
  for (std::int64_t i = 0; i < r.vocab; ++i)
    if (hi[std::size_t(i)] > 0 && hi[std::size_t(i)] >= floor) may.push_back(i);
  std::sort(may.begin(), may.end());
  may.erase(std::unique(may.begin(), may.end()), may.end());
  return may;
}

VerifyVerdict decide_greedy_request(const VerifyView& r, const NumericsContract& c, const RaceConstants& k) {
  VerifyVerdict v;
  v.request_class = RowClass::greedy;
  v.emitted.assign(std::size_t(r.drafts + 1), {});
  for (std::int64_t j = 0; j <= r.drafts; ++j) {
    RowView row = r.target_row(j, nullptr);
    row.filter = nullptr;  // greedy rows ignore filters
    const std::int64_t g = decide(row, c, k).token;
    if (j == r.drafts || r.draft_ids[j] != g) {
      v.accepted = j;
      v.token = g;
      v.emitted[std::size_t(j)] = {g};
      if (j < r.drafts) v.acceptance.push_back(Acceptance::reject);
      return v;
    }
    v.acceptance.push_back(Acceptance::accept);
  }
  return v;
}

}  // namespace

Probabilities target_probabilities(const VerifyView& r, std::int64_t j, const NumericsContract& c, float eps) {
  const RowView row = r.target_row(j, r.recovery_noise);
  const RowScale s = row_scale(row, {eps, 0.0f});
  if (r.filter && race::filtered(*r.filter, r.vocab)) {
    const KeptSet ks = kept_set(row, *r.filter, s, c);
    return probabilities(row, s, c, ks.kept, ks.boundary, c.filters.sum_depth);
  }
  return probabilities(row, s, c, {}, {}, c.filters.sum_depth);
}

RowView VerifyView::target_row(std::int64_t j, const float* noise) const {
  RowView row;
  row.logits = static_cast<const char*>(target) + std::size_t(j * stride) * size_of(dtype);
  row.dtype = dtype;
  row.noise = noise;
  row.vocab = vocab;
  row.temperature = temperature;
  row.filter = filter;
  return row;
}

VerifyView VerifyBatchView::request(std::int64_t r) const {
  VerifyView v;
  v.target = static_cast<const char*>(target) + std::size_t(r * (drafts + 1) * vocab) * size_of(dtype);
  v.dtype = dtype;
  v.vocab = vocab;
  v.stride = vocab;
  v.drafts = drafts;
  v.draft_ids = draft_ids + r * drafts;
  v.draft_probs = draft_probs ? draft_probs + r * drafts * vocab : nullptr;
  v.uniforms = uniforms + r * drafts;
  v.recovery_noise = recovery_noise + r * vocab;
  v.bonus_noise = bonus_noise + r * vocab;
  v.temperature = temperatures[r];
  if (draft_counts) {  // clamped as the kernels clamp it, so that no reader leaves the request's rows
    const std::int64_t c = draft_counts[r];
    v.drafts = std::clamp<std::int64_t>(c, 0, drafts);
    v.draft_count_in_contract = c == v.drafts;
  }
  return v;
}

double VerifyView::draft_prob(std::int64_t j, std::int64_t i) const {
  if (draft_probs) return double(draft_probs[j * vocab + i]);
  return i == draft_ids[j] ? 1.0 : 0.0;
}

std::pair<double, double> acceptance_ratio(const Probabilities& P, std::int64_t d, double q, const NumericsContract& c) {
  const std::size_t s = std::size_t(d);
  if (P.lo[s] == P.hi[s] && c.div_ulp <= 0.5) {
    // P' known exactly (probabilities(): a row tied at its max): the IEEE
    // ratio is one value; the definition's exact ratio is the other end.
    const double r32 = double(float(P.lo[s]) / float(q)), exact = P.p[s] / q;
    return {std::min(r32, exact), std::max(r32, exact)};
  }
  const double r_div = relative_error(c.div_ulp);
  return {P.lo[s] / q * (1 - r_div) / kBoundSafety, P.hi[s] / q * (1 + r_div) * kBoundSafety};
}

const char* to_string(Acceptance a) {
  switch (a) {
    case Acceptance::accept: return "accept";
    case Acceptance::reject: return "reject";
    case Acceptance::either: return "either";
  }
  return "?";
}

VerifyVerdict decide_verify(const VerifyView& r, const NumericsContract& c, const RaceConstants& request,
                            const VerifyRules& rules) {
  if (r.vocab <= 0 || r.drafts < 0 || r.drafts > race::kMaxDrafts || (r.drafts > 0 && !r.draft_ids))
    throw std::invalid_argument(fmt::format("a verify request needs V > 0 and 0 <= k <= {} drafts with their ids", race::kMaxDrafts));
  const RaceConstants k{race::race_eps(request.eps, c.conventions), request.greedy_eps};
  const bool greedy = race::is_greedy(r.temperature, k.greedy_eps, c.conventions);
  if (VerifyVerdict bad = check_inputs(r, greedy); bad.request_class == RowClass::invalid) return bad;
  if (greedy) return decide_greedy_request(r, c, request);

  VerifyVerdict v;
  v.emitted.assign(std::size_t(r.drafts + 1), {});
  std::vector<Probabilities> probs;  // per position evaluated
  bool exact_on = true, may_continue = true;
  v.accepted = r.drafts;
  std::vector<std::int64_t> stops;  // the counts a < k fp32 allows
  for (std::int64_t j = 0; j < r.drafts && may_continue; ++j) {
    probs.push_back(target_probabilities(r, j, c, k.eps));
    bool exact = false;
    double ratio = 0;
    const Acceptance a = acceptance_of(r, j, probs.back(), c, rules, exact, ratio);
    v.acceptance.push_back(a);
    v.ratio.push_back(ratio);
    if (exact_on && !exact) v.accepted = j, exact_on = false;
    if (a != Acceptance::accept) stops.push_back(j);
    may_continue = a != Acceptance::reject;
  }
  if (!stops.empty())
    if (VerifyVerdict bad = check_recovery_noise(r, k.eps); bad.request_class == RowClass::invalid) return bad;
  for (std::int64_t a : stops) {
    std::int64_t winner = 0;
    v.emitted[std::size_t(a)] = residual_race(r, a, probs[std::size_t(a)], c, k.eps, winner);
    if (a == v.accepted) v.token = winner;
  }
  if (may_continue) {  // every draft may be accepted: the bonus race
    const Verdict bonus = decide(r.target_row(r.drafts, r.bonus_noise), c, request);
    if (bonus.row_class == RowClass::invalid) {
      VerifyVerdict bad = invalid(bonus.reason, r.drafts, bonus.reason_id);
      return bad;
    }
    v.emitted[std::size_t(r.drafts)] = bonus.ambiguous;
    if (v.accepted == r.drafts) v.token = bonus.token;
  }
  return v;
}

std::string VerifyVerdict::describe() const {
  if (request_class == RowClass::invalid)
    return fmt::format("invalid ({}{}{})", to_string(reason),
                       reason_position >= 0 ? fmt::format(" at position {}", reason_position) : "",
                       reason_id >= 0 ? fmt::format(", id {}", reason_id) : "");
  std::string s = fmt::format("{}: {} of {} drafts accepted, then {}", to_string(request_class), accepted,
                              emitted.size() - 1, token);
  std::vector<std::int64_t> counts;
  for (std::size_t a = 0; a < emitted.size(); ++a)
    if (!emitted[a].empty()) counts.push_back(std::int64_t(a));
  if (!ratio.empty()) s += fmt::format(" (P/Q of the drafts: {::.6g})", ratio);
  if (counts.size() > 1) s += fmt::format("; fp32 may stop after {} drafts", fmt::join(counts, ", "));
  for (std::int64_t a : counts)
    if (emitted[std::size_t(a)].size() > 1) s += fmt::format("; after {}, any of {{{}}}", a, fmt::join(emitted[std::size_t(a)], ","));
  return s;
}

VerifyJudgement judge_verify(const VerifyVerdict& v, const VerifyView& r, const std::int32_t* out, std::int64_t slots) {
  const std::int64_t k = r.drafts;
  if (slots < k + 1) slots = k + 1;
  std::int64_t e = 0;
  while (e <= k && out[e] != race::kVerifyPlaceholder) ++e;
  if (e == 0) return {Outcome::out_of_range, "nothing emitted: position 0 holds the placeholder"};
  for (std::int64_t j = e; j < slots; ++j)
    if (out[j] != race::kVerifyPlaceholder)
      return {Outcome::out_of_range,
              j > k ? fmt::format("position {} holds {}, past the request's {} id{} (its own count of drafts is {})", j, out[j],
                                  k + 1, k == 0 ? "" : "s", k)
                    : fmt::format("position {} holds {} after the placeholder at position {}", j, out[j], e)};
  for (std::int64_t j = 0; j < e; ++j)
    if (out[j] < 0 || out[j] >= r.vocab)
      return {Outcome::out_of_range, fmt::format("position {} holds {}, outside [0, {})", j, out[j], r.vocab)};
  if (v.request_class == RowClass::invalid) return {Outcome::out_of_contract, v.describe()};
  const std::int64_t a = e - 1;
  for (std::int64_t j = 0; j < a; ++j)
    if (out[j] != r.draft_ids[j])
      return {Outcome::unexplained, fmt::format("position {} holds {}, not the draft {}: an accepted prefix is the drafts themselves", j, out[j], r.draft_ids[j])};
  if (!v.allows(a)) return {Outcome::unexplained, fmt::format("{} drafts accepted; the oracle: {}", a, v.describe())};
  const auto& may = v.emitted[std::size_t(a)];
  if (!std::binary_search(may.begin(), may.end(), out[a]))
    return {Outcome::unexplained, fmt::format("emitted {} after {} accepted drafts; the oracle: {}", out[a], a, v.describe())};
  if (a == v.accepted && out[a] == v.token) return {Outcome::identical, ""};
  return {Outcome::explained, fmt::format("{} accepted then {}, fp32's latitude; the oracle: {}", a, out[a], v.describe())};
}

}  // namespace raceoracle::oracle
