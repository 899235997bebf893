// The filtered kernels' building blocks on their own (kernels/filtered_row.h):
// the rank key the filters order ids by, its inverse, the bf16 accumulator's
// rounding and the cut in the filters' order. cpu backend: device functions
// called on the host.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "kernels/filtered_row.h"
#include "race/bf16.h"

namespace raceoracle::kernels::filtered {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// Every bf16 value but NaN (and the fp32 values below), with -0 as +0.
std::vector<float> all_bf16() {
  std::vector<float> v;
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const float f = race::widen_bf16(std::uint16_t(b));
    if (!std::isnan(f)) v.push_back(f);
  }
  return v;
}

TEST(RankKey, Bf16KeysOrderAsTheValuesAndInvertExactly) {
  const std::vector<float> v = all_bf16();
  for (float f : v) {
    const unsigned k = rank_key<std::uint16_t>(f);
    ASSERT_LT(k, 0x10000u) << f;
    ASSERT_GT(k, 0u) << f;  // NaN alone is 0
    ASSERT_EQ(std::bit_cast<std::uint32_t>(value_of<std::uint16_t>(k)), std::bit_cast<std::uint32_t>(f == 0.0f ? 0.0f : f)) << f;
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 200000; ++i) {
    const float a = v[rng() % v.size()], b = v[rng() % v.size()];
    ASSERT_EQ(a < b, rank_key<std::uint16_t>(a) < rank_key<std::uint16_t>(b)) << a << " " << b;
    ASSERT_EQ(a == b, rank_key<std::uint16_t>(a) == rank_key<std::uint16_t>(b)) << a << " " << b;
  }
  EXPECT_EQ(rank_key<std::uint16_t>(std::numeric_limits<float>::quiet_NaN()), 0u);
}

TEST(RankKey, F32KeysOrderAsTheValuesAndInvertExactly) {
  std::mt19937 rng(4);
  std::vector<float> v{-kInf, -1.0f, -0.0f, 0.0f, std::numeric_limits<float>::denorm_min(), 1.0f, kInf};
  for (int i = 0; i < 50000; ++i) {
    const float f = std::bit_cast<float>(std::uint32_t(rng()));
    if (!std::isnan(f)) v.push_back(f);
  }
  for (float f : v)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(value_of<float>(rank_key<float>(f))), std::bit_cast<std::uint32_t>(f == 0.0f ? 0.0f : f));
  for (int i = 0; i < 200000; ++i) {
    const float a = v[rng() % v.size()], b = v[rng() % v.size()];
    ASSERT_EQ(a < b, rank_key<float>(a) < rank_key<float>(b)) << a << " " << b;
  }
}

TEST(Bf16Accumulator, RoundsAsTheHostDoes) {
  std::mt19937 rng(5);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(std::uint32_t(rng()));
    if (std::isnan(f)) continue;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(round_to_bf16(f)), std::uint32_t(race::round_to_bf16(f)) << 16) << f;
  }
}

TEST(Cut, KeepsEveryIdRankedAtOrBeforeIt) {
  const Cut all;
  EXPECT_TRUE(all.keeps(0u, 0));
  EXPECT_TRUE(all.keeps(0u, std::int64_t(1) << 40));
  const Cut c{7u, 12};
  EXPECT_TRUE(c.keeps(8u, 1000));  // a larger key: ranked before, whatever its id
  EXPECT_TRUE(c.keeps(7u, 12));
  EXPECT_TRUE(c.keeps(7u, 3));
  EXPECT_FALSE(c.keeps(7u, 13));
  EXPECT_FALSE(c.keeps(6u, 0));
  const Cut none_tied{7u, -1};  // keeps the larger keys alone
  EXPECT_FALSE(none_tied.keeps(7u, 0));
  EXPECT_TRUE(none_tied.keeps(8u, 0));
}

}  // namespace
}  // namespace raceoracle::kernels::filtered
