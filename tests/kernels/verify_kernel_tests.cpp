// The verify kernels (kernels/verify.hip, kernels/verify_fused.hip; SPEC
// §11) against the oracle on random batches of every class
// fixtures/verify_requests.h makes, both dtypes, deterministic and stochastic
// drafts, one to three tiles; and each named mutant of each kernel caught on
// the same batches, with the request that catches it printed.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "fixtures/verify_requests.h"
#include "kernels/device_memory.h"
#include "kernels/registry.h"
#include "race/definition.h"

namespace raceoracle {
namespace {

using kernels::Defect;

/// The batches every test here judges: 24 seeds, each shape a seed's.
fixtures::VerifyShape shape_of(int s) {
  fixtures::VerifyShape sh;
  sh.requests = 6;
  sh.drafts = std::vector<std::int64_t>{0, 1, 3, 5}[std::size_t(s % 4)];
  sh.vocab = std::vector<std::int64_t>{3, 17, 1031, 2500}[std::size_t(s / 4 % 4)];  // kVerifyTile 1024: 1 to 3 tiles
  sh.dtype = s % 2 ? race::Dtype::bf16 : race::Dtype::f32;
  return sh;
}
constexpr int kSeeds = 24;

class VerifyKernelTest : public ::testing::TestWithParam<std::string_view> {
 protected:
  void SetUp() override {
    if (kernels::device_count() == 0) GTEST_SKIP() << "no " << kernels::backend_name() << " device found";
  }
  const kernels::VerifyKernel& kernel() const { return *kernels::find_verify_kernel(GetParam()); }
};

TEST_P(VerifyKernelTest, AgreesWithTheOracleOnEveryRequest) {
  const race::NumericsContract c = kernel().contract();
  subject::VerifyTally all;
  for (int s = 0; s < kSeeds; ++s) {
    const subject::VerifyBatch b = fixtures::random_verify_batch(race::kCiSeed + std::uint64_t(s), shape_of(s), c);
    const subject::VerifyTally t = subject::judge_verify_batch(b, subject::run_verify_kernel(kernel(), b), c);
    EXPECT_FALSE(t.failed()) << "seed " << s << ": " << t.first_failure;
    all.identical += t.identical, all.explained += t.explained, all.out_of_contract += t.out_of_contract;
  }
  std::printf("[verify-kernel] %s, %d batches: %lld identical, %lld explained, %lld out of contract\n",
              std::string(GetParam()).c_str(), kSeeds, (long long)all.identical, (long long)all.explained,
              (long long)all.out_of_contract);
  EXPECT_GT(all.identical, 0);
}

TEST_P(VerifyKernelTest, EveryNamedMutantIsCaught) {
  const race::NumericsContract c = kernel().contract();
  std::vector<subject::VerifyBatch> batches;
  for (int s = 0; s < kSeeds; ++s)
    batches.push_back(fixtures::random_verify_batch(race::kCiSeed + std::uint64_t(s), shape_of(s), c));
  for (Defect d : kernels::kVerifyOnly) {
    std::string killer;
    int killed = 0;
    for (int s = 0; s < kSeeds; ++s) {
      const subject::VerifyBatch& b = batches[std::size_t(s)];
      const subject::VerifyTally t = subject::judge_verify_batch(b, subject::run_verify_kernel(kernel(), b, d), c);
      if (t.failed() && killed++ == 0) killer = fmt::format("seed {}: {}", s, t.first_failure);
    }
    std::printf("[verify-mutant] %s~%s: caught on %d of %d batches; first: %s\n", std::string(GetParam()).c_str(),
                kernels::to_string(d), killed, kSeeds, killer.c_str());
    EXPECT_GT(killed, 0) << kernels::to_string(d) << ": " << kernels::describe(d);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, VerifyKernelTest, ::testing::Values("verify-probs", "verify-fused"),
                         [](const auto& info) {
                           std::string n(info.param);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace raceoracle
