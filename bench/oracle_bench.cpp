// Throughput of the float64 oracle (elements/s) on realistic rows: the
// production shape must never make the oracle the slow part of a check.
// Results and the machine they came from: bench/README.md.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "fixtures/llm_like.h"
#include "oracle/oracle.h"
#include "oracle/reference.h"

namespace ro = raceoracle::oracle;
namespace fx = raceoracle::fixtures;

namespace {

/// bf16 (the production dtype) LLM-like rows.
raceoracle::subject::Batch make(int rows, int vocab, float temperature) {
  raceoracle::subject::Batch b = raceoracle::subject::Batch::make(rows, vocab, ro::Dtype::bf16);
  fx::fill_llm_like(b, 1, {.sigma = 3.0f});
  std::fill(b.temperatures.begin(), b.temperatures.end(), temperature);
  b.storage();
  return b;
}

void BM_DecideBatch(benchmark::State& state) {
  const int rows = int(state.range(0)), vocab = 163840, threads = int(state.range(1));
  const float T = state.range(2) / 100.0f;
  const raceoracle::subject::Batch b = make(rows, vocab, T);
  const ro::BatchView v = b.view();
  for (auto _ : state) benchmark::DoNotOptimize(ro::decide_batch(v, ro::NumericsContract{}, {}, threads));
  state.SetItemsProcessed(state.iterations() * std::int64_t(rows) * vocab);
}
// rows, threads, T x 100 (0 = greedy)
BENCHMARK(BM_DecideBatch)->Args({256, 2, 100})->Args({256, 1, 100})->Args({256, 2, 0})->Args({16, 2, 70})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

/// The reference path (every id's float64 key) on one thread: the ratio to
/// BM_DecideBatch/256/1/100 is what the screen buys.
void BM_DecideReference(benchmark::State& state) {
  const int rows = int(state.range(0)), vocab = 163840;
  const raceoracle::subject::Batch b = make(rows, vocab, 1.0f);
  const ro::BatchView v = b.view();
  for (auto _ : state)
    for (std::int64_t r = 0; r < rows; ++r) benchmark::DoNotOptimize(ro::decide_reference(v.row(r), ro::NumericsContract{}));
  state.SetItemsProcessed(state.iterations() * std::int64_t(rows) * vocab);
}
BENCHMARK(BM_DecideReference)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
