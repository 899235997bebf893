// The data model's building blocks on their own: a batch's shape, storage and
// drawn noise, and a registered kernel run as a subject.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/device_memory.h"
#include "subject/subject.h"

namespace raceoracle::subject {
namespace {

TEST(Batch, MakeLaysRowsOutWithTheirPadding) {
  Batch b = Batch::make(3, 5, Dtype::f32, 2);
  EXPECT_EQ(b.logit_stride, 7);
  EXPECT_EQ(b.noise_stride, 7);
  EXPECT_EQ(b.logits.size(), 21u);
  EXPECT_EQ(b.temperatures, std::vector<float>(3, 1.0f));
  b.x(2, 4) = 3.5f;
  EXPECT_EQ(b.logits[2 * 7 + 4], 3.5f);
  EXPECT_EQ(b.e(1, 0), 1.0f);
  EXPECT_FALSE(b.drawn());
}

TEST(Batch, Bf16StorageIsTheRoundedLogits) {
  Batch b = Batch::make(1, 2, Dtype::bf16);
  b.x(0, 0) = 1.00390625f;  // halfway between two bf16 values: rounds to even (1.0)
  b.x(0, 1) = -2.0f;
  b.round_logits();
  EXPECT_EQ(b.x(0, 0), 1.0f);
  const auto* bits = static_cast<const std::uint16_t*>(b.storage());
  EXPECT_EQ(bits[0], 0x3F80);
  EXPECT_EQ(bits[1], 0xC000);
}

TEST(Batch, DrawnNoiseIsTheSeedsDrawsAndRepeats) {
  Batch a = Batch::make(2, 64), b = Batch::make(2, 64);
  a.draw_noise(7);
  b.draw_noise(7);
  ASSERT_TRUE(a.drawn());
  EXPECT_EQ(a.seeds, b.seeds);
  EXPECT_EQ(a.noise, b.noise);
  EXPECT_NE(a.seeds[0], a.seeds[1]);
  for (float e : a.noise) EXPECT_GT(e, 0.0f);
  Batch c = Batch::make(2, 64);
  c.draw_noise(8);
  EXPECT_NE(c.noise, a.noise);
}

TEST(Subject, ARegisteredKernelRunsAsItsSubject) {
  if (kernels::device_count() == 0) GTEST_SKIP() << "no " << kernels::backend_name() << " device";
  const kernels::Kernel& k = kernels::kernels().front();
  const Subject& s = subject_of(k);
  EXPECT_EQ(&subject_of(k), &s) << "one subject per kernel, kept";
  EXPECT_EQ(s.name(), k.name);
  EXPECT_EQ(s.kernel(), &k);
  Batch b = Batch::make(2, 300);
  b.x(0, 17) = 5.0f;
  b.x(1, 299) = 5.0f;
  b.temperatures = {0.0f, 0.0f};  // greedy: the raw maximum, whatever the noise
  const KernelRun r = s.run(b);
  ASSERT_TRUE(r.status.ok) << r.status.message;
  EXPECT_EQ(r.tokens, (std::vector<std::int32_t>{17, 299}));
  EXPECT_EQ(s.replay_args(), "--kernel " + k.name);
}

}  // namespace
}  // namespace raceoracle::subject
