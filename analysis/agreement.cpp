#include "analysis/agreement.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "subject/batch.h"
#include "fixtures/llm_like.h"

namespace raceoracle::analysis {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const char* kMasks[] = {"none", "partial", "forced", "fully-masked"};
const float kTemps[] = {0.0f, 0.7f, 1.0f};
const char* kTempNames[] = {"greedy", "0.7", "1.0"};
constexpr int kCases = 4 * 3;

/// LLM-like rows (fixtures/llm_like.h), then the case's mask pattern.
subject::Batch make_batch(const AgreementSettings& s, std::uint64_t seed) {
  subject::Batch b = subject::Batch::make(s.rows, s.vocab, s.dtype);
  fixtures::fill_llm_like(b, seed);
  std::mt19937_64 rng(seed + 1);  // the masks' draws
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const int c = int(r % kCases), mask = c / 3;
    b.temperatures[std::size_t(r)] = kTemps[c % 3];
    if (mask == 1) {  // partial: a random half of the ids and one whole 4096-id block
      const std::int64_t block = std::int64_t(rng() % std::uint64_t(std::max<std::int64_t>(1, s.vocab / 4096))) * 4096;
      for (std::int64_t i = 0; i < s.vocab; ++i)
        if (rng() % 2 || (i >= block && i < block + 4096)) b.x(r, i) = -kInf;
    } else if (mask >= 2) {
      const std::int64_t keep = mask == 2 ? std::int64_t(rng() % std::uint64_t(s.vocab)) : -1;
      for (std::int64_t i = 0; i < s.vocab; ++i)
        if (i != keep) b.x(r, i) = -kInf;
    }
  }
  return b;
}

}  // namespace

std::vector<AgreementCell> run_agreement(const std::vector<const subject::Subject*>& ks, const AgreementSettings& s,
                                         const std::function<void(const std::string&)>& progress) {
  std::map<std::tuple<std::size_t, int>, AgreementCell> cells;
  for (std::size_t k = 0; k < ks.size(); ++k)
    for (int c = 0; c < kCases; ++c) cells[{k, c}] = {ks[k]->name(), kMasks[c / 3], kTempNames[c % 3]};
  for (int batch = 0; batch < s.batches; ++batch) {
    const subject::Batch tensor = make_batch(s, s.seed + std::uint64_t(batch));
    subject::Batch drawn;  // the same rows drawing their noise, for a kernel that draws it
    for (std::size_t k = 0; k < ks.size(); ++k) {
      if (subject::noise_of(*ks[k]) == race::NoiseSource::drawn &&
          (!drawn.drawn() || drawn.stream != subject::noise_stream_of(*ks[k]))) {
        drawn = tensor;
        drawn.stream = subject::noise_stream_of(*ks[k]);
        drawn.draw_noise(s.seed + std::uint64_t(batch));
      }
      const subject::Batch& b = subject::noise_of(*ks[k]) == race::NoiseSource::drawn ? drawn : tensor;
      const auto verdicts = oracle::decide_batch(b.view(), ks[k]->contract(), {b.eps, b.greedy_eps});
      const auto run = ks[k]->run(b);
      if (!run.status.ok) throw std::runtime_error(ks[k]->name() + ": " + run.status.message);
      for (std::int64_t r = 0; r < b.rows; ++r) {
        AgreementCell& cell = cells[{k, int(r % kCases)}];
        const auto& v = verdicts[std::size_t(r)];
        const auto t = run.tokens[std::size_t(r)];
        ++cell.rows;
        switch (oracle::judge(v, t, b.vocab)) {
          case oracle::Outcome::identical: ++cell.identical; break;
          case oracle::Outcome::explained: case oracle::Outcome::out_of_contract: ++cell.explained; break;
          case oracle::Outcome::unexplained: ++cell.unexplained; break;
          case oracle::Outcome::out_of_range: ++cell.out_of_range; break;
        }
        if (oracle::is_failure(oracle::judge(v, t, b.vocab)) && cell.examples.size() < 3)
          cell.examples.push_back(fmt::format("kernel {} vs oracle {}\n    {}", t, v.describe(),
                                              b.describe_row(r, {v.token, std::int64_t(t)})));
      }
      if (progress)
        progress(fmt::format("agreement batch {}/{}: {} on {} x {} {}", batch + 1, s.batches, ks[k]->name(), s.rows,
                             s.vocab, oracle::to_string(s.dtype)));
    }
  }
  std::vector<AgreementCell> out;
  for (auto& [key, cell] : cells) out.push_back(std::move(cell));
  return out;
}

}  // namespace raceoracle::analysis
