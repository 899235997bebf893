#include "analysis/frequency_study.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "fixtures/llm_like.h"

namespace raceoracle::analysis {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: distinct seeds from (run, row, request)
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<std::uint64_t> seeds_for(std::uint64_t run, std::int64_t rows, std::uint64_t request) {
  std::vector<std::uint64_t> s(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) s[std::size_t(r)] = mix(mix(run ^ mix(request)) + std::uint64_t(r));
  return s;
}

}  // namespace

subject::Batch frequency_batch(const FrequencyStudy& s) {
  if (s.rows < 1 || s.vocab < 1) throw std::invalid_argument("the frequency study needs at least one row and one id");
  subject::Batch b = subject::Batch::make(s.rows, s.vocab, s.dtype);
  fixtures::fill_llm_like(b, s.seed, {.sigma = 2.5f});
  const float kInf = std::numeric_limits<float>::infinity();
  std::mt19937_64 g(s.seed ^ 0x5eed);
  const float temps[8] = {1.0f, 0.7f, 0.0f, 1.0f, 1.5f, 0.3f, 1.0f, 1.0f};
  for (std::int64_t r = 0; r < s.rows; ++r) {
    b.temperatures[std::size_t(r)] = temps[r % 8];
    float top = -kInf;
    for (std::int64_t i = 0; i < s.vocab; ++i) top = std::max(top, b.x(r, i));
    switch (r % 8) {
      case 3:  // a planted far tail: 8 head ids, every odd id 14, 16, 18 or 20 units below the max, the rest 40
        for (std::int64_t i = 0; i < s.vocab; ++i)
          b.x(r, i) = i < 8 ? top - 0.5f * float(i) : i % 2 ? top - 14.0f - 2.0f * float((i / 2) % 4) : top - 40.0f;
        break;
      case 4:  // one id in ten masked
        for (std::int64_t i = 0; i < s.vocab; ++i)
          if (i % 10 == 3 && b.x(r, i) < top) b.x(r, i) = -kInf;
        break;
      case 6:  // row 0's inputs again, with its own seed
        if (r >= 6)
          for (std::int64_t i = 0; i < s.vocab; ++i) b.x(r, i) = b.x(r - 6, i);
        break;
      case 7:  // plateaus: ids tied in runs of four (bf16's coarse values)
        for (std::int64_t i = 0; i + 3 < s.vocab; i += 4)
          for (int k = 1; k < 4; ++k) b.x(r, i + k) = b.x(r, i);
        break;
      default: break;
    }
  }
  if (s.filters) {
    const race::RowFilter f[4] = {{50, 0.9f, 0.0f}, {0, 0.9f, 0.05f}, {20, 1.0f, 0.0f}, {0, 1.0f, 0.0f}};
    for (std::int64_t r = 0; r < s.rows; ++r) b.filters.push_back(f[(r % 8 == 6 ? r - 6 : r) % 4]);
  }
  b.round_logits();
  return b;
}

FrequencyRun run_frequency(const FrequencyStudy& s, const oracle::NumericsContract& contract, const Drawer& draw) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  FrequencyRun out;
  const subject::Batch b = frequency_batch(s);
  std::vector<oracle::Distribution> laws;
  const oracle::BatchView view = b.view();
  const oracle::RaceConstants k{b.eps, b.greedy_eps};
  for (std::int64_t r = 0; r < b.rows; ++r) laws.push_back(oracle::distribution(view.row(r), contract, k));
  std::uint64_t request = 0;
  std::vector<std::int64_t> first;  // the first request's tokens, asked again below
  auto ask = [&](const std::vector<std::uint64_t>& seeds, std::int64_t n) {
    const auto t0 = clock::now();
    std::vector<std::int64_t> tokens;
    const kernels::Status st = draw(b, seeds, n, tokens);
    out.sampler_seconds += std::chrono::duration<double>(clock::now() - t0).count();
    if (!st.ok) throw std::runtime_error(st.message);
    return tokens;
  };
  try {
    out.report = frequency_test(laws, b.vocab, [&](std::int64_t n) {
      const std::vector<std::uint64_t> seeds = seeds_for(s.seed, b.rows, request++);
      std::vector<std::int64_t> tokens = ask(seeds, n);
      if (request == 1) {  // same seeds, same inputs: the same tokens
        const std::vector<std::int64_t> again = ask(seeds, n);
        for (std::size_t j = 0; j < tokens.size() && j < again.size() && out.determinism.empty(); ++j)
          if (tokens[j] != again[j])
            out.determinism = fmt::format("row {} draw {}: {} the first time, {} the second, with the same seed {} and "
                                          "inputs", std::int64_t(j) / n, std::int64_t(j) % n, tokens[j], again[j],
                                          seeds[j / std::size_t(n)]);
      }
      return tokens;
    }, s.law);
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  out.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return out;
}

}  // namespace raceoracle::analysis
