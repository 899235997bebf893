#include "analysis/baseline_emulation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/key_arithmetic.h"

namespace raceoracle::analysis {

namespace keys = kernels::keys;

BaselineRace::BaselineRace(const oracle::RowView& row, float eps, const BaselineLaunch& launch)
    : row_(row), eps_(eps), inv_t_(keys::inverse_temperature(row.temperature)), launch_(launch) {
  if (launch.threads <= 0 || launch.warp_size <= 0 || launch.threads % launch.warp_size != 0 ||
      launch.threads / launch.warp_size > launch.warp_size)
    throw std::invalid_argument("BaselineRace: the launch needs whole warps, at most a warp of them");
  constexpr int kMaxLoad = 8;  // 16 bytes of bf16
  if (launch.load_ids < 1 || launch.load_ids > kMaxLoad)
    throw std::invalid_argument("BaselineRace: a load is 1 to 8 ids");
  row_.noise = nullptr;
  const int vec = launch.load_ids;
  whole_ = row.vocab / vec * vec;  // with vec 1, whole loads of one id walk as for_each_vector's tail does
  first_growth_.reserve(std::size_t(launch.threads) + 1);
  load_count_.assign(std::size_t(launch.threads), 0);
  const auto scaled = [&](std::int64_t i) { return keys::scaled(float(row.logit(i)), inv_t_); };
  // for_each_vector's order: thread t the vectors t, t + threads, ..., then the tail's ids likewise.
  std::vector<float> thread_sum(std::size_t(launch.threads), 0.0f), thread_max(thread_sum.size(), -INFINITY);
  gmax_ = -INFINITY;
  for (int t = 0; t < launch.threads; ++t) {
    first_growth_.push_back(std::int32_t(growths_.size()));
    float m = -INFINITY, sum = 0.0f;
    std::int32_t load = 0;
    float xs[kMaxLoad];  // the load's scaled logits, computed once
    const auto fold = [&](std::int64_t first, int count) {
      float load_max = -INFINITY;
      for (int j = 0; j < count; ++j) load_max = std::fmax(load_max, xs[j] = scaled(first + j));
      if (load_max > m) {
        growths_.push_back({load, m, load_max});
        if (m != -INFINITY) sum *= std::exp(m - load_max);
        m = load_max;
      }
      const float m_safe = keys::guard_max(m);
      for (int j = 0; j < count; ++j) {
        const float w = std::exp(xs[j] - m_safe);
        if (w == w) sum += w;
      }
      ++load;
    };
    for (std::int64_t k = t; k < whole_ / vec; k += launch.threads) fold(k * vec, vec);
    for (std::int64_t i = whole_ + t; i < row.vocab; i += launch.threads) fold(i, 1);
    load_count_[std::size_t(t)] = load;
    thread_sum[std::size_t(t)] = sum;
    thread_max[std::size_t(t)] = m;
    gmax_ = std::fmax(gmax_, m);
  }
  first_growth_.push_back(std::int32_t(growths_.size()));
  // The block: each thread's sum rescaled to the row max, then summed as block_sum adds (kernels/race.h).
  const int w = launch.warp_size, warps = launch.threads / w;
  const auto butterfly = [w](std::vector<float> lanes) {
    for (int mask = w / 2; mask > 0; mask /= 2) {
      std::vector<float> next(lanes.size());
      for (int l = 0; l < w; ++l) next[std::size_t(l)] = lanes[std::size_t(l)] + lanes[std::size_t(l ^ mask)];
      lanes = std::move(next);
    }
    return lanes[0];
  };
  std::vector<float> per_warp(std::size_t(w), 0.0f);
  for (int q = 0; q < warps; ++q) {
    std::vector<float> lanes(static_cast<std::size_t>(w));
    for (int l = 0; l < w; ++l) {
      const std::size_t t = std::size_t(q * w + l);
      const float m = thread_max[t];
      lanes[std::size_t(l)] = thread_sum[t] * (m == -INFINITY ? 0.0f : std::exp(m - keys::guard_max(gmax_)));
    }
    per_warp[std::size_t(q)] = butterfly(std::move(lanes));
  }
  sum_ = butterfly(std::move(per_warp));
}

int BaselineRace::thread_of(std::int64_t i) const {
  if (i < 0 || i >= row_.vocab) throw std::out_of_range("BaselineRace: an id outside the row");
  return int((i < whole_ ? i / launch_.load_ids : i - whole_) % launch_.threads);
}

std::int32_t BaselineRace::load_of(int thread, std::int64_t i) const {
  const std::int64_t step = std::int64_t(launch_.threads);
  if (i < whole_) return std::int32_t(i / launch_.load_ids / step);
  return std::int32_t((whole_ / launch_.load_ids + step - 1 - thread) / step + (i - whole_) / step);
}

float BaselineRace::max_after(int thread, std::int32_t at) const {
  float m = -INFINITY;
  for (std::int32_t g = first_growth_[std::size_t(thread)]; g < first_growth_[std::size_t(thread) + 1]; ++g) {
    if (growths_[std::size_t(g)].load > at) break;
    m = growths_[std::size_t(g)].after;
  }
  return m;
}

float BaselineRace::key_until(int thread, std::int32_t at, std::int64_t i, float e, std::int32_t until) const {
  const float xs = keys::scaled(float(row_.logit(i)), inv_t_);
  float k = std::exp(xs - keys::guard_max(max_after(thread, at))) / (e + eps_);
  for (std::int32_t g = first_growth_[std::size_t(thread)]; g < first_growth_[std::size_t(thread) + 1]; ++g) {
    const Growth& growth = growths_[std::size_t(g)];
    if (growth.load > at && growth.load < until && growth.before != -INFINITY) k *= std::exp(growth.before - growth.after);
  }
  return k;
}

float BaselineRace::final_key(int thread, float k) const {
  const float m = max_after(thread, load_count_[std::size_t(thread)]);
  k *= m == -INFINITY ? 0.0f : std::exp(m - keys::guard_max(gmax_));
  return sum_ > 0 ? k / sum_ : k;
}

float BaselineRace::key(std::int64_t i, float e) const {
  const int t = thread_of(i);
  return final_key(t, key_until(t, load_of(t, i), i, e, load_count_[std::size_t(t)]));
}

std::int64_t BaselineRace::token(const std::vector<std::int64_t>& candidates, const float* noise) const {
  if (candidates.size() == 1) return candidates[0];  // most rows: the fold and the block have nothing to compare
  // Each thread's candidates, ascending (candidates are: a stable sort by thread keeps that).
  std::vector<std::pair<int, std::int64_t>> by_thread;
  by_thread.reserve(candidates.size());
  for (std::int64_t i : candidates) by_thread.push_back({thread_of(i), i});
  std::stable_sort(by_thread.begin(), by_thread.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::int64_t best = -1;
  float best_key = 0;
  for (std::size_t q = 0; q < by_thread.size();) {
    const int t = by_thread[q].first;
    // The thread's fold: a later candidate displaces the best only with a larger key at its own load.
    std::int64_t tb = -1;
    std::int32_t tb_at = 0;
    float tb_e = 0;
    for (; q < by_thread.size() && by_thread[q].first == t; ++q) {
      const std::int64_t i = by_thread[q].second;
      const std::int32_t at = load_of(t, i);
      const float e = noise[i];
      if (tb < 0 || key_until(t, at, i, e, at + 1) > key_until(t, tb_at, tb, tb_e, at + 1)) tb = i, tb_at = at, tb_e = e;
    }
    const float k = final_key(t, key_until(t, tb_at, tb, tb_e, load_count_[std::size_t(t)]));
    if (best < 0 || k > best_key || (k == best_key && tb < best)) best = tb, best_key = k;
  }
  return best;
}

}  // namespace raceoracle::analysis
