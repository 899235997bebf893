// kernels::LaunchGraph (device_memory.h): a kernel's launches captured into a
// graph on a stream of its own and replayed give the tokens the same launch
// gives call by call, for every real kernel; the cpu layer refuses graphs in
// words.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixtures/llm_like.h"
#include "kernels/device_memory.h"
#include "subject/batch.h"

namespace raceoracle {
namespace {

TEST(LaunchGraph, ReplayGivesTheTokensOfTheDirectLaunch) {
  if (kernels::device_count() == 0) GTEST_SKIP() << "no " << kernels::backend_name() << " device found";
  if (!kernels::graphs_supported()) GTEST_SKIP() << "the " << kernels::backend_name() << " backend has no graphs";
  for (const kernels::Kernel& k : kernels::kernels())
    for (oracle::Dtype dtype : {oracle::Dtype::bf16, oracle::Dtype::f32}) {
      SCOPED_TRACE(k.name + " " + oracle::to_string(dtype));
      subject::Batch b = subject::Batch::make(8, 20000, dtype);
      fixtures::fill_llm_like(b, 7, {.sigma = 3.0f});
      b.temperatures = {0.7f, 1.0f, 0.0f, 2.0f, 0.3f, 0.7f, 1.0f, 0.1f};
      if (k.noise == kernels::NoiseSource::drawn) b.draw_noise(std::uint64_t(b.rows * b.vocab));
      b.round_logits();
      kernels::DeviceArray<float> x32;
      kernels::DeviceArray<std::uint16_t> x16;
      const void* logits = nullptr;
      if (dtype == oracle::Dtype::f32) x32 = kernels::DeviceArray<float>(b.logits), logits = x32.get();
      else x16 = kernels::DeviceArray<std::uint16_t>(b.bf16_logits()), logits = x16.get();
      const kernels::DeviceArray<float> noise(b.noise), T(b.temperatures);
      kernels::DeviceArray<std::int32_t> tokens(std::size_t(b.rows));
      kernels::SampleArgs a = subject::device_args(b, logits, b.vocab, noise.get(), T.get(), tokens.get());
      const subject::DeviceSeeds seeds = subject::upload_seeds(k, b);
      seeds.attach(k, a);
      const subject::DeviceFilters filters = subject::upload_filters(k, b);
      filters.attach(a);

      kernels::RunOptions direct;
      ASSERT_TRUE(k.run(a, direct).ok);
      const std::vector<std::int32_t> want = tokens.download();
      const std::vector<std::int32_t> cleared(want.size(), -7);
      tokens.upload(cleared);
      {
        const kernels::LaunchStream stream;
        kernels::RunOptions queued;
        queued.synchronize = false;
        const kernels::LaunchGraph graph([&](int) { ASSERT_TRUE(k.run(a, queued).ok); }, 1);
        EXPECT_EQ(tokens.download(), cleared) << "capture ran the kernel instead of recording it";
        graph.replay();
        graph.replay();  // twice: a replay leaves the graph as it was
      }  // the stream's work done
      EXPECT_EQ(tokens.download(), want);
    }
}

TEST(LaunchGraph, TheCpuLayerRefusesGraphsInWords) {
  if (kernels::graphs_supported()) GTEST_SKIP() << "the " << kernels::backend_name() << " backend has graphs";
  const kernels::LaunchStream stream;
  try {
    const kernels::LaunchGraph graph([](int) {}, 1);
    ADD_FAILURE() << "a graph on the cpu layer";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no graphs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace raceoracle
