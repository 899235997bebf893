// Throughput of the float64 oracle (elements/s) on realistic rows: the
// production shape must never make the oracle the slow part of a check.
// Results and the machine they came from: bench/README.md.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "analysis/divergence.h"
#include "fixtures/llm_like.h"
#include "oracle/noise_streams.h"
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

/// Filtered rows (SPEC §9), top_k and top_p of each row as in production
/// (k = 50, p = 0.9; 0 / 1 leave that filter off), T = 0.7, on 2 threads: the
/// ratio to the unfiltered row at the same T in the same run is what the kept
/// set and its boundary cost. Counters: ids on the boundary and ids in the
/// ambiguity set, per row.
void BM_DecideFiltered(benchmark::State& state) {
  const int rows = 64, vocab = 163840;
  raceoracle::subject::Batch b = make(rows, vocab, 0.7f);
  const int k = int(state.range(0));
  const float p = state.range(1) / 100.0f;
  if (k > 0 || p < 1) b.filters.assign(std::size_t(rows), {k, p, 0.0f});
  const ro::BatchView v = b.view();
  std::vector<ro::Verdict> out;
  for (auto _ : state) benchmark::DoNotOptimize(out = ro::decide_batch(v, ro::NumericsContract{}, {}, 2));
  double boundary = 0, ambiguous = 0;
  for (const ro::Verdict& x : out) boundary += double(x.kept_boundary), ambiguous += double(x.ambiguous.size());
  state.counters["boundary/row"] = boundary / rows;
  state.counters["ambiguous/row"] = ambiguous / rows;
  state.SetItemsProcessed(state.iterations() * std::int64_t(rows) * vocab);
}
// top_k, top_p x 100 (0, 100: that filter off)
BENCHMARK(BM_DecideFiltered)->Args({0, 100})->Args({50, 100})->Args({0, 90})->Args({50, 90})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

/// Replaying a noise stream (oracle/noise_streams.h) over 256 x 163840 on 2
/// threads: 0 raceoracle-philox, 1 torch's one draw over the batch, 2 torch
/// with a generator per row.
void BM_StreamReplay(benchmark::State& state) {
  const std::int64_t rows = 256, vocab = 163840;
  ro::NoiseStream s;
  if (state.range(0) > 0) s.kind = ro::StreamKind::torch_exponential, s.per_row = state.range(0) == 2;
  std::vector<std::uint64_t> seeds(rows, 0x123456789abcdefull), offsets(rows, 4 * 1000);
  if (s.kind == ro::StreamKind::raceoracle_philox || s.per_row)
    for (std::int64_t r = 0; r < rows; ++r) seeds[std::size_t(r)] += std::uint64_t(r);
  std::vector<float> out(std::size_t(rows * vocab));
  for (auto _ : state) {
    ro::stream_noise_batch(s, seeds.data(), offsets.data(), rows, vocab, out.data(), vocab, 2);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * vocab);
}
BENCHMARK(BM_StreamReplay)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

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

/// `raceoracle divergence --no-kernels` on LLM-like bf16 rows of V = 163840
/// at T = 1: the rows x 1000 given, over its default pool of 256 logit rows,
/// on every core, setup included (the pool drawn and sorted, the first 26
/// rows drawn in full and checked). Elements: rows x V, as if every id's
/// noise were drawn; BM_DecideBatch/256/2/100 in the same run is the ratio's
/// other side (docs/DIVERGENCE.md, "Noise drawn only where it can matter").
void BM_DivergenceRates(benchmark::State& state) {
  raceoracle::analysis::DivergenceOptions o;
  o.kernels = false;
  o.temperatures = {1.0f};
  o.rows = 1000;
  o.batches = int(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(raceoracle::analysis::run_divergence(o));
  state.SetItemsProcessed(state.iterations() * o.rows * o.batches * o.vocab);
}
// rows / 1000
BENCHMARK(BM_DivergenceRates)->Arg(10)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();
