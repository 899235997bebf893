// Throughput of the float64 oracle (elements/s) on realistic rows: the
// production shape must never make the oracle the slow part of a check.
// Results and the machine they came from: bench/README.md.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "oracle/oracle.h"

namespace ro = raceoracle::oracle;

namespace {

struct Batch {
  std::vector<std::uint16_t> x;  // bf16, the production dtype
  std::vector<float> e, T;
};

Batch make(int rows, int vocab, float temperature) {
  std::mt19937_64 rng(1);
  std::normal_distribution<float> g(0.0f, 3.0f);
  std::exponential_distribution<float> ex(1.0f);
  Batch b;
  b.x.resize(std::size_t(rows) * vocab);
  b.e.resize(b.x.size());
  for (auto& v : b.x) {
    const float f = g(rng);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v = std::uint16_t(bits >> 16);
  }
  for (auto& v : b.e) v = ex(rng);
  b.T.assign(rows, temperature);
  return b;
}

void BM_DecideBatch(benchmark::State& state) {
  const int rows = int(state.range(0)), vocab = 163840, threads = int(state.range(1));
  const float T = state.range(2) / 100.0f;
  const Batch b = make(rows, vocab, T);
  ro::BatchView v{b.x.data(), ro::Dtype::bf16, rows, vocab, vocab, b.e.data(), vocab, b.T.data()};
  for (auto _ : state) benchmark::DoNotOptimize(ro::decide_batch(v, ro::NumericsContract{}, {}, threads));
  state.SetItemsProcessed(state.iterations() * std::int64_t(rows) * vocab);
}
// rows, threads, T x 100 (0 = greedy)
BENCHMARK(BM_DecideBatch)->Args({256, 2, 100})->Args({256, 1, 100})->Args({256, 2, 0})->Args({16, 2, 70})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
