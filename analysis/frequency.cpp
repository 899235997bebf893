#include "analysis/frequency.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/tail_bounds.h"

namespace raceoracle::analysis {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
using oracle::Distribution;
using oracle::RowClass;

/// The bins of one row at one look: ids with an expected count of at least
/// m alone; the rest by decade of probability, a decade that expects less
/// than m merged with the decades below it (the last into the one above).
/// Built from the null and n alone, never from the counts. A decade's bin
/// is the far tail's mass, what a noise floor starves (STATISTICS.md).
struct Bins {
  std::vector<std::int64_t> of;  ///< id -> bin, -1 off the certain set
  std::vector<double> p, lo, hi;  ///< the null's centre and band per bin
};

Bins make_bins(const Distribution& d, std::int64_t n, double m) {
  Bins b;
  b.of.assign(d.p.size(), -1);
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < d.p.size(); ++i)
    if (d.p[i] > 0) ids.push_back(std::int64_t(i));
  std::stable_sort(ids.begin(), ids.end(), [&](auto x, auto y) { return d.p[std::size_t(x)] > d.p[std::size_t(y)]; });
  auto open = [&] {
    b.p.push_back(0), b.lo.push_back(0), b.hi.push_back(0);
    return std::int64_t(b.p.size() - 1);
  };
  auto add = [&](std::int64_t bin, std::int64_t id) {
    b.of[std::size_t(id)] = bin;
    b.p[std::size_t(bin)] += d.p[std::size_t(id)];
    b.lo[std::size_t(bin)] += d.low(id);
    b.hi[std::size_t(bin)] += d.high(id);
  };
  auto decade = [&](std::int64_t id) { return int(std::floor(std::log10(d.p[std::size_t(id)]))); };
  std::int64_t merged = -1, last_merged = -1;
  for (std::size_t j = 0; j < ids.size(); ++j) {
    const std::int64_t id = ids[j];
    if (double(n) * d.p[std::size_t(id)] >= m) {
      add(open(), id);
      continue;
    }
    if (merged < 0) merged = open();
    add(merged, id);
    const bool decade_ends = j + 1 == ids.size() || decade(ids[j + 1]) != decade(id);
    if (decade_ends && double(n) * b.p[std::size_t(merged)] >= m) last_merged = merged, merged = -1;
  }
  if (merged >= 0 && last_merged >= 0) {  // a short last bin joins the one above it
    for (std::size_t i = 0; i < b.of.size(); ++i)
      if (b.of[i] == merged) b.of[i] = last_merged;
    b.p[std::size_t(last_merged)] += b.p[std::size_t(merged)];
    b.lo[std::size_t(last_merged)] += b.lo[std::size_t(merged)];
    b.hi[std::size_t(last_merged)] += b.hi[std::size_t(merged)];
    b.p.pop_back(), b.lo.pop_back(), b.hi.pop_back();
  }
  for (double& h : b.hi) h = std::min(h, 1.0);
  return b;
}

struct Look {
  Bins bins;
  std::vector<std::int64_t> counts;  ///< per bin
  std::int64_t n_certain = 0;       ///< draws on the certain set (the G test's n)
  double statistic = 0, threshold = kInf, alpha_bin = 0;
};

/// The binned TV a look detects with probability `power` (FREQUENCY.md, "What it could see").
double tv_power(const Look& l, double power) {
  const auto k = std::int64_t(l.bins.p.size());
  if (k <= 1 || l.n_certain == 0 || !std::isfinite(l.threshold)) return kInf;
  double slack = 0;  // E[sum a_b log(hi_b / lo_b)]: the band's width as the statistic sees it
  for (std::int64_t b = 0; b < k; ++b)
    if (l.bins.lo[std::size_t(b)] > 0) slack += l.bins.hi[std::size_t(b)] * std::log(l.bins.hi[std::size_t(b)] / l.bins.lo[std::size_t(b)]);
    else return kInf;
  const double x = 2 * (l.threshold + double(l.n_certain) * slack);
  return std::sqrt(noncentrality_for_power(double(k - 1), x, power) / (4 * double(l.n_certain)));
}

/// The least shift of bin b's probability past its band that its count shows with probability `power`.
double shift_seen(const Look& l, std::size_t b, bool up, double power) {
  const std::int64_t n = l.n_certain;
  const double edge = up ? l.bins.hi[b] : l.bins.lo[b];
  const std::int64_t c = up ? binomial_upper_critical(n, edge, l.alpha_bin) : binomial_lower_critical(n, edge, l.alpha_bin);
  const double room = up ? 1 - edge : edge;
  auto seen = [&](double delta) {
    return up ? binomial_at_least(n, edge + delta, c) >= power : binomial_at_most(n, edge - delta, c) >= power;
  };
  if ((up && c > n) || (!up && c < 0) || !seen(room)) return kInf;
  double lo = 0, hi = room;
  for (int i = 0; i < 60 && hi - lo > 1e-3 * hi; ++i) {  // three digits: a report, not a verdict
    const double mid = 0.5 * (lo + hi);
    (seen(mid) ? hi : lo) = mid;
  }
  return hi;
}

RowPower row_power(const Distribution& d, const Look& l, double power) {
  RowPower out;
  out.tv = tv_power(l, power);
  // Per decade, its worst id: the one of least p in each bin it meets.
  std::vector<std::pair<int, std::size_t>> worst;  // (decade, bin) pairs seen, and the id
  std::vector<std::int64_t> pick;
  for (std::size_t i = 0; i < d.p.size(); ++i) {
    if (!(d.p[i] > 0)) continue;
    const int e = int(std::floor(std::log10(d.p[i])));
    auto it = std::find_if(out.decades.begin(), out.decades.end(), [&](const Decade& x) { return x.exponent == e; });
    if (it == out.decades.end()) out.decades.push_back({e, 0, 0, 0}), it = out.decades.end() - 1;
    ++it->ids;
    const std::size_t b = std::size_t(l.bins.of[i]);
    auto w = std::find_if(worst.begin(), worst.end(), [&](auto& x) { return x.first == e && x.second == b; });
    if (w == worst.end()) worst.push_back({e, b}), pick.push_back(std::int64_t(i));
    else if (d.p[i] < d.p[std::size_t(pick[std::size_t(w - worst.begin())])]) pick[std::size_t(w - worst.begin())] = std::int64_t(i);
  }
  std::vector<double> up_shift(l.bins.p.size(), -1), down_shift(l.bins.p.size(), -1);
  for (std::size_t j = 0; j < worst.size(); ++j) {
    const int e = worst[j].first;
    const std::size_t b = worst[j].second;
    const double p = d.p[std::size_t(pick[j])];
    if (up_shift[b] < 0) up_shift[b] = shift_seen(l, b, true, power), down_shift[b] = shift_seen(l, b, false, power);
    const double up = (l.bins.hi[b] - l.bins.p[b] + up_shift[b]) / p;
    double down = (l.bins.p[b] - l.bins.lo[b] + down_shift[b]) / p;
    if (down > 1) down = kInf;  // not even the id's absence would show
    Decade& dec = *std::find_if(out.decades.begin(), out.decades.end(), [&](const Decade& x) { return x.exponent == e; });
    dec.up = std::max(dec.up, up);
    dec.down = std::max(dec.down, down);
  }
  std::sort(out.decades.begin(), out.decades.end(), [](auto& a, auto& b) { return a.exponent > b.exponent; });
  return out;
}

std::string ids_of(const Bins& b, std::size_t bin) {
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < b.of.size() && ids.size() < 4; ++i)
    if (b.of[i] == std::int64_t(bin)) ids.push_back(std::int64_t(i));
  std::int64_t total = std::count(b.of.begin(), b.of.end(), std::int64_t(bin));
  if (total == 1) return fmt::format("id {}", ids[0]);
  return fmt::format("{} ids ({}{})", total, fmt::join(ids, ", "), total > 4 ? ", ..." : "");
}

/// The G test and the per-bin tests of one row at one look; the failure, or "".
std::string judge_look(Look& l, double alpha_row) {
  const auto k = std::int64_t(l.bins.p.size());
  if (l.n_certain == 0 || k == 0) return "";
  std::vector<double> a(static_cast<std::size_t>(k));
  for (std::int64_t b = 0; b < k; ++b) a[std::size_t(b)] = double(l.counts[std::size_t(b)]) / double(l.n_certain);
  const std::vector<double>&lo = l.bins.lo, &hi = l.bins.hi;
  l.threshold = multinomial_kl_threshold(k, alpha_row / 2);
  l.statistic = k > 1 ? double(l.n_certain) * min_kl_in_box(a, lo, hi) : 0;
  l.alpha_bin = alpha_row / (4 * double(k));
  for (std::int64_t b = 0; b < k; ++b) {
    const std::int64_t c = l.counts[std::size_t(b)], n = l.n_certain;
    const std::int64_t up = binomial_upper_critical(n, hi[std::size_t(b)], l.alpha_bin);
    const std::int64_t down = binomial_lower_critical(n, lo[std::size_t(b)], l.alpha_bin);
    if (c >= up || c <= down)
      return fmt::format("{} drawn {} times in {} (frequency {:.4g}); its probability lies in [{:.4g}, {:.4g}], "
                         "where a count outside [{}, {}] has probability below {:.2g}",
                         ids_of(l.bins, std::size_t(b)), c, n, double(c) / double(n), lo[std::size_t(b)],
                         hi[std::size_t(b)], down + 1, up - 1, l.alpha_bin);
  }
  if (l.statistic >= l.threshold)
    return fmt::format("the G test over {} bins: n KL(counts || band) = {:.4g} >= {:.4g}, which a correct sampler "
                       "reaches with probability below {:.2g}",
                       k, l.statistic, l.threshold, alpha_row / 2);
  return "";
}
}  // namespace

FrequencyReport frequency_test(const std::vector<Distribution>& rows, std::int64_t vocab, const DrawFn& draw,
                               const FrequencySettings& s) {
  check(s);
  std::vector<std::int64_t> looks;
  for (std::int64_t n = std::min(s.first_look, s.draws);; n = std::min(n * 4, s.draws)) {
    looks.push_back(n);
    if (n == s.draws) break;
  }
  const auto R = std::int64_t(rows.size());
  FrequencyReport rep;
  rep.alpha = s.alpha;
  rep.planned_looks = int(looks.size());
  rep.rows.resize(std::size_t(R));
  // The family: each sampling row's tests and each pair of rows with no boundary ids, at every look.
  std::vector<std::int64_t> sampling, pairable;
  for (std::int64_t r = 0; r < R; ++r) {
    rep.rows[std::size_t(r)].row = r;
    rep.rows[std::size_t(r)].row_class = rows[std::size_t(r)].row_class;
    if (rows[std::size_t(r)].row_class == RowClass::sampling) {
      sampling.push_back(r);
      if (rows[std::size_t(r)].boundary.empty() && std::isfinite(rows[std::size_t(r)].hi)) pairable.push_back(r);
    }
  }
  const double pairs = double(pairable.size()) * double(pairable.size() - (pairable.empty() ? 0 : 1)) / 2;
  const double alpha_unit = s.alpha / double(looks.size()) / std::max(1.0, double(sampling.size()) + pairs);
  // Per pair, the chance two independent draws agree (its upper bound).
  std::vector<double> agree_max;
  for (std::size_t i = 0; i < pairable.size(); ++i)
    for (std::size_t j = i + 1; j < pairable.size(); ++j) {
      const Distribution &a = rows[std::size_t(pairable[i])], &b = rows[std::size_t(pairable[j])];
      double c = 0;
      for (std::size_t t = 0; t < a.p.size(); ++t) c += a.high(std::int64_t(t)) * b.high(std::int64_t(t));
      agree_max.push_back(std::min(1.0, c));
    }
  std::vector<std::vector<std::int64_t>> tokens(static_cast<std::size_t>(R));
  std::int64_t have = 0;
  for (std::int64_t n : looks) {
    const std::vector<std::int64_t> more = draw(n - have);
    if (std::int64_t(more.size()) != R * (n - have))
      throw std::runtime_error(fmt::format("the sampler returned {} tokens for {} rows x {} draws", more.size(), R, n - have));
    for (std::int64_t r = 0; r < R; ++r)
      tokens[std::size_t(r)].insert(tokens[std::size_t(r)].end(), more.begin() + r * (n - have), more.begin() + (r + 1) * (n - have));
    const std::int64_t judged = have;  // the draws before this look passed the exact laws already
    have = n;
    ++rep.looks;
    rep.draws = n;
    bool all_resolved = s.resolution > 0;
    std::vector<Look> now(static_cast<std::size_t>(R));
    for (std::int64_t r = 0; r < R; ++r) {
      const Distribution& d = rows[std::size_t(r)];
      RowResult& out = rep.rows[std::size_t(r)];
      out.n = n;
      if (out.failed) continue;
      const auto& t = tokens[std::size_t(r)];
      // Exact laws first, on this look's new draws: a point-mass row's every draw explained; no token off the support.
      for (std::size_t j = std::size_t(judged); j < t.size() && !out.failed; ++j) {
        if (d.row_class != RowClass::sampling) {
          const oracle::Outcome o = oracle::judge(d.point, t[j], vocab);
          if (oracle::is_failure(o))
            out.failed = true, out.failure = fmt::format("draw {} is {} ({}): the row is {}, {}", j, t[j], oracle::to_string(o),
                                                         oracle::to_string(d.row_class), d.point.describe());
        } else if (!d.may_appear(t[j])) {
          out.failed = true;
          out.failure = t[j] < 0 || t[j] >= vocab
                            ? fmt::format("draw {} is {}, outside [0, {})", j, t[j], vocab)
                            : fmt::format("draw {} is id {}, which has probability 0 (masked, filtered out, or past the "
                                          "distribution's support)", j, t[j]);
        }
      }
      if (out.failed || d.row_class != RowClass::sampling) continue;
      Look& l = now[std::size_t(r)];
      l.bins = make_bins(d, n, s.min_expected);
      l.counts.assign(l.bins.p.size(), 0);
      for (std::int64_t tok : t)
        if (const std::int64_t b = l.bins.of[std::size_t(tok)]; b >= 0) ++l.counts[std::size_t(b)], ++l.n_certain;
      if (!std::isfinite(d.hi)) {
        out.failure = "not tested: the contract bounds no key of this row";
        continue;
      }
      const std::string why = judge_look(l, alpha_unit);
      out.bins = std::int64_t(l.bins.p.size());
      out.statistic = l.statistic;
      out.threshold = l.threshold;
      if (!why.empty()) {
        out.failed = true;
        out.failure = fmt::format("at {} draws: {}", n, why);
        continue;
      }
      if (s.resolution > 0 && tv_power(l, s.power) > s.resolution) all_resolved = false;
    }
    // Rows sharing noise: pairs that agree more often than independent draws allow.
    std::size_t q = 0;
    for (std::size_t i = 0; i < pairable.size(); ++i)
      for (std::size_t j = i + 1; j < pairable.size(); ++j, ++q) {
        const auto &a = tokens[std::size_t(pairable[i])], &b = tokens[std::size_t(pairable[j])];
        std::int64_t same = 0;
        for (std::int64_t x = 0; x < n; ++x) same += a[std::size_t(x)] == b[std::size_t(x)];
        const std::int64_t crit = binomial_upper_critical(n, agree_max[q], alpha_unit);
        if (same >= crit)
          rep.shared_noise.push_back(fmt::format("rows {} and {} drew the same token {} times in {} (independent draws agree "
                                                 "with probability at most {:.4g}; {} or more has probability below {:.2g})",
                                                 pairable[i], pairable[j], same, n, agree_max[q], crit, alpha_unit));
      }
    bool failed = !rep.shared_noise.empty();
    for (const auto& row : rep.rows) failed |= row.failed;
    if (failed || n == looks.back() || all_resolved) {  // the last look: what each row could see
      for (std::int64_t r : sampling)
        if (!rep.rows[std::size_t(r)].failed && std::isfinite(rows[std::size_t(r)].hi))
          rep.rows[std::size_t(r)].power = row_power(rows[std::size_t(r)], now[std::size_t(r)], s.power);
      break;
    }
  }
  for (const auto& row : rep.rows) rep.passed &= !row.failed;
  rep.passed &= rep.shared_noise.empty();
  return rep;
}

nlohmann::json to_json(const FrequencySettings& s) {
  return {{"alpha", s.alpha}, {"draws", s.draws}, {"first_look", s.first_look}, {"min_expected", s.min_expected},
          {"power", s.power}, {"resolution", s.resolution}};
}

FrequencySettings settings_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("frequency settings: expected a JSON object");
  FrequencySettings s;
  for (const auto& [key, v] : j.items()) {
    if (!v.is_number()) throw std::invalid_argument("frequency settings: '" + key + "' must be a number");
    if (key == "alpha") s.alpha = v.get<double>();
    else if (key == "draws") s.draws = v.get<std::int64_t>();
    else if (key == "first_look") s.first_look = v.get<std::int64_t>();
    else if (key == "min_expected") s.min_expected = v.get<double>();
    else if (key == "power") s.power = v.get<double>();
    else if (key == "resolution") s.resolution = v.get<double>();
    else throw std::invalid_argument("frequency settings: unknown field '" + key + "'");
  }
  check(s);
  return s;
}

void check(const FrequencySettings& s) {
  auto bad = [](const char* what) { throw std::invalid_argument(std::string("frequency settings: ") + what); };
  if (!(s.alpha > 0 && s.alpha < 1)) bad("alpha must lie in (0, 1)");
  if (s.draws < 1 || s.first_look < 1) bad("draws and first_look must be at least 1");
  if (!(s.min_expected >= 1 && std::isfinite(s.min_expected))) bad("min_expected must be a finite number >= 1");
  if (!(s.power > 0 && s.power < 1)) bad("power must lie in (0, 1)");
  if (!(s.resolution >= 0 && s.resolution < 1)) bad("resolution must lie in [0, 1)");
}

namespace {
nlohmann::json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }
}  // namespace

nlohmann::json to_json(const FrequencyReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json decades = nlohmann::json::array();
    for (const auto& d : row.power.decades)
      decades.push_back({{"exponent", d.exponent}, {"ids", d.ids}, {"up", finite_or_null(d.up)}, {"down", finite_or_null(d.down)}});
    rows.push_back({{"row", row.row}, {"class", oracle::to_string(row.row_class)}, {"draws", row.n}, {"bins", row.bins},
                    {"statistic", row.statistic}, {"threshold", finite_or_null(row.threshold)}, {"failed", row.failed},
                    {"failure", row.failure}, {"power", {{"tv", finite_or_null(row.power.tv)}, {"decades", decades}}}});
  }
  return {{"verdict", r.passed ? "PASS" : "FAIL"}, {"draws", r.draws}, {"looks", r.looks}, {"planned_looks", r.planned_looks},
          {"alpha", r.alpha}, {"shared_noise", r.shared_noise}, {"rows", rows}};
}

std::string describe(const FrequencyReport& r) {
  std::string s = fmt::format("frequency law: {} ({} draws a row, {} of {} looks, family-wise false-alarm rate {:.2g})\n",
                              r.passed ? "PASS" : "FAIL", r.draws, r.looks, r.planned_looks, r.alpha);
  for (const auto& row : r.rows) {
    if (row.failed) s += fmt::format("  row {}: FAIL: {}\n", row.row, row.failure);
    else if (!row.failure.empty()) s += fmt::format("  row {}: {}\n", row.row, row.failure);
  }
  for (const auto& line : r.shared_noise) s += "  shared noise: " + line + "\n";
  s += "  what each sampling row could see, with probability 0.99 at its draws: a binned total-variation distance\n"
       "  (TV), and per decade of p the relative error of its worst id (+: more likely, -: less likely; decades\n"
       "  where an id would need to be 10x as likely are left out: there only the decade's mass is tested)\n";
  for (const auto& row : r.rows) {
    if (row.row_class != RowClass::sampling || row.failed || row.power.decades.empty()) continue;
    s += std::isfinite(row.power.tv) ? fmt::format("  row {:>3}: TV {:.3g} ({} bins)", row.row, row.power.tv, row.bins)
                                     : fmt::format("  row {:>3}: one bin (a single certain id): its support alone is tested", row.row);
    for (const auto& d : row.power.decades) {
      if (!(d.up <= 10)) continue;
      auto rel = [](double x) { return std::isfinite(x) ? fmt::format("{:.2g}", x) : std::string("-"); };
      s += fmt::format(" | 1e{}: {} ids, +{} -{}", d.exponent, d.ids, rel(d.up), rel(d.down));
    }
    s += "\n";
  }
  return s;
}

}  // namespace raceoracle::analysis
