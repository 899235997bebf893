#include "analysis/verify_lossless.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

#include "analysis/verify_file.h"
#include "protocol/dump.h"
#include "oracle/verify_distribution.h"

namespace raceoracle::analysis {
namespace {

/// Why run `out` (k + 1 ids) is no verify output: an emitted prefix of ids in
/// [0, V), then the placeholder. Empty when it is one.
std::string malformed(const std::int32_t* out, std::int64_t k, std::int64_t V) {
  std::int64_t emitted = 0;
  while (emitted <= k && out[emitted] != race::kVerifyPlaceholder) ++emitted;
  if (emitted == 0) return "no token emitted (position 0 holds the placeholder)";
  for (std::int64_t j = 0; j < emitted; ++j)
    if (out[j] < 0 || out[j] >= V)
      return out[j] == INT_MIN ? fmt::format("position {} holds a value past int32", j)
                               : fmt::format("position {} holds {}, outside [0, {})", j, out[j], V);
  for (std::int64_t j = emitted; j <= k; ++j)
    if (out[j] != race::kVerifyPlaceholder)
      return fmt::format("position {} holds {} after the placeholder at {}", j, out[j], emitted);
  return {};
}

FrequencySettings one_look(const LosslessSettings& s, double alpha, std::int64_t n) {
  FrequencySettings f;
  f.alpha = alpha;
  f.draws = f.first_look = n;
  f.min_expected = s.min_expected;
  f.power = s.power;
  return f;
}

/// The frequency law on `rows`, each with its n tokens given.
FrequencyReport judge(const std::vector<oracle::Distribution>& rows, std::vector<std::int64_t> tokens, std::int64_t vocab,
                      std::int64_t n, double alpha, const LosslessSettings& s) {
  return frequency_test(rows, vocab, [&](std::int64_t) { return std::move(tokens); }, one_look(s, alpha, n));
}

/// The requests whose first-token law (a sampling row of two ids or more)
/// the runs could not see at `s.max_tv`: the binned TV the test sees falls
/// as 1 / sqrt(n), so n (tv / max_tv)^2 runs is about what would.
void require_power(const std::vector<oracle::Distribution>& laws, std::int64_t n, const LosslessSettings& s,
                   LosslessReport& rep) {
  for (const RowResult& row : rep.first.rows) {
    const oracle::Distribution& d = laws[std::size_t(row.row)];
    const auto ids = std::count_if(d.p.begin(), d.p.end(), [](double p) { return p > 0; });
    if (row.row_class != oracle::RowClass::sampling || ids + std::int64_t(d.boundary.size()) < 2 || row.power.tv <= s.max_tv)
      continue;
    if (++rep.underpowered_requests > 10) continue;
    const std::string need = std::isfinite(row.power.tv)
                                 ? fmt::format("about {} runs would", std::int64_t(std::ceil(double(n) * std::pow(row.power.tv / s.max_tv, 2))))
                                 : fmt::format("its {} runs make a single bin of {} ids", n, ids);
    rep.underpowered.push_back(fmt::format("request {}: {} runs see a binned TV of {:.3g} with probability {:g}, not {:g}: {}",
                                           row.row, n, row.power.tv, s.power, s.max_tv, need));
  }
}

}  // namespace

void check(const LosslessSettings& s) {
  auto bad = [](const char* what) { throw std::invalid_argument(std::string("lossless settings: ") + what); };
  if (!(s.alpha > 0 && s.alpha < 1)) bad("alpha must lie in (0, 1)");
  if (!(s.min_expected >= 1 && std::isfinite(s.min_expected))) bad("min_expected must be a finite number >= 1");
  if (!(s.power > 0 && s.power < 1)) bad("power must lie in (0, 1)");
  if (!(s.max_tv > 0 && s.max_tv <= 1)) bad("max_tv must lie in (0, 1]");
}

nlohmann::json to_json(const LosslessSettings& s) {
  return {{"alpha", s.alpha}, {"min_expected", s.min_expected}, {"power", s.power}, {"max_tv", s.max_tv}};
}

LosslessSettings lossless_settings_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("lossless settings must be a JSON object");
  LosslessSettings s;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_number()) throw std::invalid_argument("lossless settings: '" + key + "' must be a number");
    if (key == "alpha") s.alpha = value.get<double>();
    else if (key == "min_expected") s.min_expected = value.get<double>();
    else if (key == "power") s.power = value.get<double>();
    else if (key == "max_tv") s.max_tv = value.get<double>();
    else throw std::invalid_argument("lossless settings: unknown field '" + key + "'");
  }
  check(s);
  return s;
}

LosslessReport verify_lossless(const oracle::VerifyBatchView& b, const std::vector<std::int32_t>& tokens,
                               std::int64_t n, const oracle::NumericsContract& c, const oracle::RaceConstants& k,
                               const LosslessSettings& s) {
  check(s);
  const std::int64_t R = b.requests, K = b.drafts, V = b.vocab;
  if (n < 1) throw std::invalid_argument("the losslessness law needs at least one run a request");
  if (std::int64_t(tokens.size()) != R * n * (K + 1))
    throw std::invalid_argument(fmt::format("{} ids for {} requests x {} runs x {} positions", tokens.size(), R, n, K + 1));
  LosslessReport rep;
  rep.requests = R, rep.drafts = K, rep.vocab = V, rep.draws = n;
  auto run = [&](std::int64_t r, std::int64_t i) { return tokens.data() + (r * n + i) * (K + 1); };

  // The exact law: every run is a verify output (judged once; the second token's rows skip the malformed).
  std::vector<char> well_formed(std::size_t(R * n), 1);
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t i = 0; i < n; ++i)
      if (std::string why = malformed(run(r, i), K, V); !why.empty()) {
        well_formed[std::size_t(r * n + i)] = 0;
        if (++rep.malformed_runs <= 10) rep.malformed.push_back(fmt::format("request {}, run {}: {}", r, i, why));
      }

  // The first emitted token's law: P_0 (the bonus's when there are no drafts).
  std::vector<oracle::Distribution> first;
  std::vector<std::int64_t> first_tokens;
  for (std::int64_t r = 0; r < R; ++r) {
    first.push_back(oracle::emitted_distribution(b.request(r), 0, c, k));
    if (first.back().row_class == oracle::RowClass::invalid)
      throw std::invalid_argument(fmt::format("request {} is out of SPEC §11's contract: its law is not defined", r));
    for (std::int64_t i = 0; i < n; ++i) first_tokens.push_back(run(r, i)[0]);
  }
  const bool second_possible = K >= 1;
  rep.first = judge(first, std::move(first_tokens), V, n, second_possible ? s.alpha / 2 : s.alpha, s);
  require_power(first, n, s, rep);
  if (!second_possible) {
    rep.notes.push_back("no drafts: the first token is the bonus, there is no second");
    rep.second.passed = true;
    return rep;
  }

  // The second token, among the runs that accepted the first draft: P_1
  // whether or not the first was the likeliest accepted id.
  std::vector<std::vector<std::int64_t>> groups;
  std::vector<oracle::Distribution> laws;
  for (std::int64_t r = 0; r < R; ++r) {
    const oracle::VerifyView v = b.request(r);
    const std::int64_t top = oracle::likeliest_acceptance(v, 0, c, k);
    std::vector<std::int64_t> with_top, without;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int32_t* out = run(r, i);
      if (out[1] == race::kVerifyPlaceholder || !well_formed[std::size_t(r * n + i)]) continue;
      (out[0] == top ? with_top : without).push_back(out[1]);
    }
    const oracle::Distribution law = oracle::emitted_distribution(v, 1, c, k);
    if (law.row_class == oracle::RowClass::invalid)
      throw std::invalid_argument(fmt::format("request {}'s position 1 is out of SPEC §11's contract", r));
    for (bool likeliest : {true, false}) {
      std::vector<std::int64_t>& g = likeliest ? with_top : without;
      rep.second_rows.push_back({r, likeliest, std::int64_t(g.size())});
      groups.push_back(std::move(g));
      laws.push_back(law);
    }
  }
  // One draw count for every row: the least among the rows holding at least
  // n / 16 runs (which rows those are depends on the first tokens alone).
  const std::int64_t least = std::max<std::int64_t>(1, n / 16);
  std::int64_t m = 0;
  for (const auto& row : rep.second_rows)
    if (row.available >= least) m = m == 0 ? row.available : std::min(m, row.available);
  std::vector<oracle::Distribution> kept_laws;
  std::vector<SecondTokenRow> kept_rows;
  std::vector<std::int64_t> second_tokens;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const SecondTokenRow& row = rep.second_rows[g];
    if (m == 0 || row.available < m) {
      rep.notes.push_back(fmt::format("request {}: {} runs accepted the first draft{}: fewer than {}, its second token "
                                      "not tested on them",
                                      row.request, row.available, row.likeliest ? " as the likeliest id" : " as another id",
                                      std::max(least, m)));
      continue;
    }
    kept_rows.push_back(row);
    kept_laws.push_back(laws[g]);
    second_tokens.insert(second_tokens.end(), groups[g].begin(), groups[g].begin() + m);
  }
  rep.second_rows = kept_rows;
  rep.second_draws = m;
  if (kept_rows.empty()) {
    rep.second.passed = true;
    return rep;
  }
  rep.second = judge(kept_laws, std::move(second_tokens), V, m, s.alpha / 2, s);
  return rep;
}

namespace {

LosslessReport judge_file(const verify_files::Lookup& require, const verify_files::Has& has,
                          const std::map<std::string, std::string>& metadata, const LosslessSettings& s) {
  using verify_files::require_shape;
  verify_files::Targets x = verify_files::read_targets(require);
  const std::int64_t R = x.requests, k = x.drafts, V = x.vocab;
  const protocol::TensorView temps = require("temperatures"), tok = require("tokens");
  require_shape(temps, "temperatures", {R}, {"F32"});
  if (tok.shape.size() != 3 || tok.shape[0] != R || tok.shape[1] < 1 || tok.shape[2] != k + 1)
    throw protocol::SafetensorsError(fmt::format("tokens must be [{}, runs >= 1, {}], got {}", R, k + 1,
                                                 protocol::shape_string(tok.shape)));
  require_shape(tok, "tokens", tok.shape, {"I32", "I64"});
  std::vector<float> q;
  std::vector<std::int32_t> draft_ids(std::size_t(R * k), 0);
  if (has("draft_probs")) {
    const protocol::TensorView qv = require("draft_probs");
    require_shape(qv, "draft_probs", {R, k, V}, {"F32"});
    q = qv.as_f32();
    if (has("draft_ids")) throw protocol::SafetensorsError("give draft_probs (drawn drafts) or draft_ids (fixed drafts), not both");
  } else if (k > 0) {
    if (!has("draft_ids")) throw protocol::SafetensorsError("needs draft_probs (drawn drafts) or draft_ids (fixed drafts)");
    const protocol::TensorView ids = require("draft_ids");
    require_shape(ids, "draft_ids", {R, k}, {"I32", "I64"});
    draft_ids = verify_files::ids_of(ids);
  }
  const verify_files::Metadata m = verify_files::read_metadata(metadata, false);
  const std::vector<float> T = temps.as_f32();
  const std::vector<double> no_uniforms(std::size_t(R * k), 0.0);  // drawn by the sampler: not read
  const std::vector<float> no_noise(std::size_t(R * V), 1.0f);
  const oracle::VerifyBatchView batch{x.logits.data(), oracle::Dtype::f32 /* widened exactly */, R, k, V,
                                      draft_ids.data(), q.empty() ? nullptr : q.data(), no_uniforms.data(),
                                      no_noise.data(), no_noise.data(), T.data()};
  try {
    return verify_lossless(batch, verify_files::ids_of(tok), tok.shape[1], m.contract, m.constants, s);
  } catch (const std::invalid_argument& e) {
    throw protocol::SafetensorsError(e.what());
  }
}

}  // namespace

LosslessReport verify_lossless_file(const std::string& path, const LosslessSettings& s) {
  return protocol::parse_file(path, [&](const protocol::SafetensorsFile& f) {
    return judge_file([&](const std::string& n) { return f.require(n); }, [&](const std::string& n) { return f.has(n); },
                      f.metadata(), s);
  });
}

LosslessReport verify_lossless_document(const protocol::Safetensors& doc, const LosslessSettings& s) {
  return judge_file([&](const std::string& n) { return doc.require(n).view(); },
                    [&](const std::string& n) { return doc.has(n); }, doc.metadata, s);
}

nlohmann::json to_json(const LosslessReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.second_rows)
    rows.push_back({{"request", row.request}, {"first_likeliest", row.likeliest}, {"runs", row.available}});
  return {{"verdict", r.verdict()},
          {"underpowered_requests", r.underpowered_requests},
          {"underpowered", r.underpowered},
          {"requests", r.requests},
          {"drafts", r.drafts},
          {"vocab", r.vocab},
          {"runs", r.draws},
          {"malformed_runs", r.malformed_runs},
          {"malformed", r.malformed},
          {"first_token", to_json(r.first)},
          {"second_token_rows", rows},
          {"second_token_runs", r.second_draws},
          {"second_token", r.second_draws > 0 ? to_json(r.second) : nlohmann::json()},
          {"notes", r.notes}};
}

std::string describe(const LosslessReport& r) {
  std::string s = fmt::format("verify losslessness: {} ({} requests x {} runs, {} drafts, V = {})\n", r.verdict(),
                              r.requests, r.draws, r.drafts, r.vocab);
  if (!r.conclusive()) {
    s += fmt::format("  {} requests' first-token law is beyond what these runs can see (too few runs: no verdict):\n",
                     r.underpowered_requests);
    for (const auto& u : r.underpowered) s += "    " + u + "\n";
  }
  if (r.malformed_runs > 0) {
    s += fmt::format("  {} runs are no verify output:\n", r.malformed_runs);
    for (const auto& m : r.malformed) s += "    " + m + "\n";
  }
  s += "\nthe first emitted token against P_0, a row per request:\n" + describe(r.first);
  if (r.second_draws > 0) {
    s += fmt::format("\nthe second token against P_1 among the runs that accepted the first draft, {} runs a row:\n",
                     r.second_draws);
    for (std::size_t i = 0; i < r.second_rows.size(); ++i)
      s += fmt::format("  row {}: request {}, the first {} the likeliest accepted id ({} such runs)\n", i,
                       r.second_rows[i].request, r.second_rows[i].likeliest ? "was" : "was not",
                       r.second_rows[i].available);
    s += describe(r.second);
  }
  for (const auto& n : r.notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace raceoracle::analysis
