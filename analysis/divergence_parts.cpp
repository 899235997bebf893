#include "analysis/divergence_parts.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "analysis/key_emulation.h"
#include "fixtures/llm_like.h"
#include "oracle/error_model.h"
#include "protocol/dump.h"
#include "protocol/safetensors.h"
#include "subject/batch.h"

namespace raceoracle::analysis {

LogitsDump read_logits(const std::string& path) {
  return protocol::parse_file(path, [](const protocol::SafetensorsFile& f) {
    const protocol::TensorView t = protocol::require_logits(f);
    return LogitsDump{t.dtype == "BF16" ? oracle::Dtype::bf16 : oracle::Dtype::f32, t.shape[0], t.shape[1], t.as_f32()};
  });
}

fixtures::LlmLike logit_distribution(const DivergenceOptions& o) {
  if (o.normal_sigma > 0) return {.centre = o.normal_centre, .sigma = o.normal_sigma, .peak_one_in = 0};
  return {.centre = 8.0f, .sigma = 2.5f, .peak_one_in = 20000};
}

std::vector<float> drawn_logit_row(const DivergenceOptions& o, std::int64_t row) {
  subject::Batch b = subject::Batch::make(1, o.vocab, o.dtype);
  const std::uint64_t seed = o.seed * 0x9e3779b97f4a7c15ull + std::uint64_t(row);
  fixtures::fill_llm_like_logits(b, seed, logit_distribution(o));
  return std::vector<float>(b.logits.begin(), b.logits.begin() + o.vocab);
}

oracle::NumericsContract rate_contract(const DivergenceOptions& o, oracle::NumericsContract c) {
  if (o.exp_ulp) c.exp_ulp = *o.exp_ulp;
  if (o.div_ulp) c.div_ulp = *o.div_ulp;
  return c;
}

std::vector<std::int64_t> deciding_ids(std::vector<std::pair<double, std::int64_t>> keys, const DivergenceOptions& o) {
  std::size_t n = 0;
  if (o.top_k > 0) {
    n = std::min<std::size_t>(std::size_t(o.top_k), keys.size());
    std::partial_sort(keys.begin(), keys.begin() + std::ptrdiff_t(n), keys.end(), std::greater<>());
  } else if (!keys.empty()) {
    const double best = std::max_element(keys.begin(), keys.end())->first;
    n = std::size_t(std::partition(keys.begin(), keys.end(), [&](const auto& q) { return q.first >= o.competitive * best; }) -
                    keys.begin());
  }
  std::vector<std::int64_t> ids(n);
  for (std::size_t q = 0; q < n; ++q) ids[q] = keys[q].second;
  return ids;
}

void KeyErrors::add(float x, float e, float eps, float T, float tile_max, const oracle::RowScale& s,
                    const oracle::NumericsContract& c) {
  const auto kb = oracle::bound_key(x, e, s, c);
  if (!(kb.key > 1e-30)) return;
  const float emulated = emulated_key(x, e, eps, T, tile_max, float(s.row_max), c.order);
  const double err = std::abs(emulated / kb.key - 1.0);
  ++keys;
  squares += err * err;
  if (x != tile_max) {  // x - m_t is not 0: the scaling order shows
    ++off_max;
    off_max_squares += err * err;
  }
  max_actual = std::max(max_actual, err);
  max_bound = std::max(max_bound, kb.rho());
  worst_ratio = std::max(worst_ratio, err / kb.rho());
}

void KeyErrors::merge(const KeyErrors& o) {
  keys += o.keys;
  off_max += o.off_max;
  squares += o.squares;
  off_max_squares += o.off_max_squares;
  max_actual = std::max(max_actual, o.max_actual);
  max_bound = std::max(max_bound, o.max_bound);
  worst_ratio = std::max(worst_ratio, o.worst_ratio);
}

EmulatedPair emulate_pair(const oracle::Verdict& post, const oracle::Verdict& pre, const oracle::RowView& row,
                          const oracle::RowScale& s, const std::vector<float>& tile_max, int block_v) {
  EmulatedPair out;
  if (post.row_class != oracle::RowClass::sampling || pre.row_class != oracle::RowClass::sampling) return out;
  const float M = float(s.row_max);
  struct Keys {
    float full, stage1;
  };
  const auto keys = [&](std::int64_t i, race::ScalingOrder o) {
    const float m_t = tile_max[std::size_t(i / block_v)];
    const float x = float(row.logit(i)), e = row.noise[i];
    return Keys{emulated_key(x, e, s.eps, row.temperature, m_t, M, o), emulated_stage1_key(x, e, s.eps, row.temperature, m_t, o)};
  };
  // The fused kernels' order: the larger key; within a tile the larger stage-1 key; then the lower id.
  const auto token = [&](const oracle::Verdict& v, race::ScalingOrder o) {
    std::int64_t best = -1;
    Keys kb{};
    for (std::int64_t i : v.ambiguous) {  // ascending
      const Keys k = keys(i, o);
      const bool same_tile = best >= 0 && best / block_v == i / block_v;
      if (best < 0 || k.full > kb.full || (k.full == kb.full && same_tile && k.stage1 > kb.stage1)) best = i, kb = k;
    }
    return best;
  };
  out.post = token(post, race::ScalingOrder::post);
  out.pre = token(pre, race::ScalingOrder::pre);
  if (post.runner_up < 0 || !(post.runner_up_key > 0)) return out;
  out.has_runner_up = true;
  const auto below = [&](race::ScalingOrder o) {  // D_o, at most 0 when o cannot pick the runner-up
    const double w = double(keys(post.token, o).full) / post.key, r = double(keys(post.runner_up, o).full) / post.runner_up_key;
    return std::max(0.0, 1 - w / r);
  };
  out.below_post = below(race::ScalingOrder::post);
  out.apart = {post.gap, std::abs(out.below_post - below(race::ScalingOrder::pre))};
  return out;
}

EmulatedBaseline emulate_baseline(const EmulatedPair& pair, const oracle::Verdict& post, const oracle::RowView& row,
                                  const BaselineRace& race) {
  EmulatedBaseline out;
  if (!pair.has_runner_up) return out;  // a sampling row with a runner-up (emulate_pair)
  out.has_runner_up = true;
  const double w = double(race.key(post.token, row.noise[post.token])) / post.key,
               r = double(race.key(post.runner_up, row.noise[post.runner_up])) / post.runner_up_key;
  out.apart = {post.gap, std::abs(pair.below_post - std::max(0.0, 1 - w / r))};
  return out;
}

void OrderTally::add(const oracle::Verdict& v, const oracle::Verdict& rate_v, const oracle::RowView& row,
                     const oracle::RowScale& s, const oracle::NumericsContract& rc) {
  ++rows;
  full_bounds.push_back(v.rho);
  ambiguous += rate_v.ambiguous.size() > 1;
  if (rate_v.row_class != oracle::RowClass::sampling || rate_v.runner_up < 0) return;
  RowGap g;
  g.gap = rate_v.runner_up_key > 0 ? rate_v.gap : 1.0;
  g.threshold = oracle::tolerated_gap(row.logit(rate_v.token), row.noise[rate_v.token], row.logit(rate_v.runner_up),
                                      row.noise[rate_v.runner_up], s, rc);
  gaps.push_back(g);
}

void OrderTally::add_apart(const EmulatedPair& e, bool tokens_differ) {
  if (e.has_runner_up) apart.push_back(e.apart);
  apart_counted += tokens_differ;
}

void OrderTally::add_base_apart(const EmulatedBaseline& e, bool tokens_differ) {
  ++base_rows;
  if (e.has_runner_up) base_apart.push_back(e.apart);
  base_apart_counted += tokens_differ;
}

void OrderTally::merge(OrderTally&& o) {
  rows += o.rows;
  ambiguous += o.ambiguous;
  full_bounds.insert(full_bounds.end(), o.full_bounds.begin(), o.full_bounds.end());
  gaps.insert(gaps.end(), o.gaps.begin(), o.gaps.end());
  keys.merge(o.keys);
  apart.insert(apart.end(), o.apart.begin(), o.apart.end());
  apart_counted += o.apart_counted;
  base_apart.insert(base_apart.end(), o.base_apart.begin(), o.base_apart.end());
  base_rows += o.base_rows;
  base_apart_counted += o.base_apart_counted;
}

void OrderTally::finish(DivergenceRow& d, double window) const {
  d.rows = rows;
  if (!full_bounds.empty()) {
    std::vector<double> b = full_bounds;
    std::nth_element(b.begin(), b.begin() + std::ptrdiff_t(b.size() / 2), b.end());
    d.median_full_bound = b[b.size() / 2];
  }
  d.ambiguous_fraction = rows ? double(ambiguous) / double(rows) : 0;
  d.keys = keys.keys;
  d.max_actual = keys.max_actual;
  d.max_bound = keys.max_bound;
  d.worst_ratio = keys.worst_ratio;
  d.rms_actual = keys.keys ? std::sqrt(keys.squares / double(keys.keys)) : 0;
  d.off_max_keys = keys.off_max;
  d.rms_off_max = keys.off_max ? std::sqrt(keys.off_max_squares / double(keys.off_max)) : 0;
  d.rate = estimate_rate(gaps, rows, window);
  if (d.order == race::ScalingOrder::pre) {
    d.apart_measured = true;
    d.apart = estimate_rate(apart, rows, window);
    d.apart_counted = apart_counted;
  }
  if (base_rows > 0) {
    d.base_apart_measured = true;
    d.base_apart = estimate_rate(base_apart, base_rows, window);
    d.base_apart_counted = base_apart_counted;
  }
}

}  // namespace raceoracle::analysis
