// Cost of the sampler protocol: round trips of a small request and the time
// to move one production-shape batch (256 x 163840 bf16 logits + fp32 noise,
// 252 MB) to a Python sampler and its tokens back. The sampler
// (bench/echo_sampler.py) answers zeros, so only the protocol is timed:
// encoding, the pipe, and the decoding raceoracle.serve does before calling fn.
// Results and the machine they came from: bench/README.md.
#include <benchmark/benchmark.h>

#include "fixtures/llm_like.h"
#include "protocol/external_sampler.h"

namespace ro = raceoracle;

namespace {

const char* kModes[] = {"raw", "numpy", "torch"};

ro::subject::Batch make(int rows, int vocab) {
  ro::subject::Batch b = ro::subject::Batch::make(rows, vocab, ro::oracle::Dtype::bf16);
  ro::fixtures::fill_llm_like(b, 1, {.sigma = 3.0f});
  return b;
}

void BM_RoundTrip(benchmark::State& state) {
  const int rows = int(state.range(0)), vocab = int(state.range(1));
  ro::protocol::SamplerSpec spec;
  spec.command = std::string(RACEORACLE_BENCH_PYTHON) + " " + RACEORACLE_BENCH_DIR + "/echo_sampler.py " + kModes[state.range(2)];
  ro::protocol::ExternalSampler sampler(spec);
  const ro::subject::Batch b = make(rows, vocab);
  sampler.run(b);  // warm: imports, first-touch pages of the buffers both sides reuse
  for (auto _ : state) {
    const auto r = sampler.run(b);
    if (!r.status.ok) state.SkipWithError(r.status.message.c_str());
  }
  state.SetLabel(kModes[state.range(2)]);
  state.SetBytesProcessed(state.iterations() * std::int64_t(rows) * vocab * (2 + 4));
}
// rows, vocab, sampler mode (0 raw, 1 numpy, 2 torch)
BENCHMARK(BM_RoundTrip)->Args({4, 4097, 0})->Args({4, 4097, 1})->Args({4, 4097, 2})
    ->Args({256, 163840, 0})->Args({256, 163840, 1})->Args({256, 163840, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
