// The verify kernel (kernels/verify.hip, SPEC §11) against the oracle on
// random batches of every class fixtures/verify_requests.h makes, both
// dtypes, deterministic and stochastic drafts; and each of its named mutants
// caught on the same batches, with the request that catches it printed.
#include <gtest/gtest.h>

#include <fmt/format.h>

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
  sh.vocab = std::vector<std::int64_t>{3, 17, 300, 1031}[std::size_t(s / 4 % 4)];
  sh.dtype = s % 2 ? race::Dtype::bf16 : race::Dtype::f32;
  return sh;
}
constexpr int kSeeds = 24;

class VerifyKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernels::device_count() == 0) GTEST_SKIP() << "no " << kernels::backend_name() << " device found";
  }
};

TEST_F(VerifyKernel, AgreesWithTheOracleOnEveryRequest) {
  const race::NumericsContract c = kernels::verify_contract();
  subject::VerifyTally all;
  for (int s = 0; s < kSeeds; ++s) {
    const subject::VerifyBatch b = fixtures::random_verify_batch(race::kCiSeed + std::uint64_t(s), shape_of(s), c);
    const subject::VerifyTally t = subject::judge_verify_batch(b, subject::run_verify_kernel(b), c);
    EXPECT_FALSE(t.failed()) << "seed " << s << ": " << t.first_failure;
    all.identical += t.identical, all.explained += t.explained, all.out_of_contract += t.out_of_contract;
  }
  std::printf("[verify-kernel] %d batches: %lld identical, %lld explained, %lld out of contract\n", kSeeds,
              (long long)all.identical, (long long)all.explained, (long long)all.out_of_contract);
  EXPECT_GT(all.identical, 0);
}

class VerifyMutant : public VerifyKernel, public ::testing::WithParamInterface<Defect> {};

TEST_P(VerifyMutant, IsCaught) {
  const race::NumericsContract c = kernels::verify_contract();
  std::string killer;
  int killed = 0;
  for (int s = 0; s < kSeeds; ++s) {
    const subject::VerifyBatch b = fixtures::random_verify_batch(race::kCiSeed + std::uint64_t(s), shape_of(s), c);
    const subject::VerifyTally t = subject::judge_verify_batch(b, subject::run_verify_kernel(b, GetParam()), c);
    if (t.failed()) {
      ++killed;
      if (killer.empty()) killer = fmt::format("seed {}: {}", s, t.first_failure);
    }
  }
  std::printf("[verify-mutant] %s: caught on %d of %d batches; first: %s\n", kernels::to_string(GetParam()), killed, kSeeds,
              killer.c_str());
  EXPECT_GT(killed, 0) << kernels::describe(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Defects, VerifyMutant, ::testing::ValuesIn(kernels::kVerifyOnly),
                         [](const auto& info) { return std::string(kernels::to_string(info.param)); });

}  // namespace
}  // namespace raceoracle
