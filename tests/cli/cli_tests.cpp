// The subcommands on small shapes (cpu backend): safetensors reading and
// writing, `verify` on files the project writes itself (good and bad),
// the command line's checks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include "protocol/contract_fields.h"
#include "protocol/safetensors.h"
#include "tests/protocol/safetensors_files.h"
#include "analysis/verify.h"
#include "cli/verify.h"
#include "subject/batch.h"
#include "fixtures/llm_like.h"
#include "kernels/registry.h"
#include "cli/command_line.h"
#include "mutants/harness.h"
#include "mutants/report.h"
#include "tests/support/mutants_built.h"

namespace raceoracle::cli {
namespace {

namespace fs = std::filesystem;
using protocol::read_safetensors;
using protocol::Safetensors;
using protocol::Tensor;
using protocol::write_safetensors;

using protocol::testing::tensor;

class VerifyFiles : public protocol::testing::SafetensorsFiles {
 protected:
  /// rows x V realistic inputs with the fused kernel's own tokens.
  Safetensors sampled(std::int64_t rows, std::int64_t V, bool shared_noise = false) {
    subject::Batch b = subject::Batch::make(rows, V, oracle::Dtype::bf16);
    fixtures::fill_llm_like(b, 5);
    if (shared_noise) {
      b.noise_stride = 0;
      b.noise.resize(std::size_t(V));
    }
    for (std::int64_t r = 0; r < rows; ++r) b.temperatures[std::size_t(r)] = r % 3 == 0 ? 0.0f : 0.8f;
    b.round_logits();
    const auto run = subject::run_kernel(*kernels::find_kernel("fused-post"), b);
    EXPECT_TRUE(run.status.ok) << run.status.message;
    Safetensors s;
    s.tensors["logits"] = tensor("BF16", {rows, V}, b.bf16_logits());
    s.tensors["noise"] = tensor("F32", {shared_noise ? 1 : rows, V}, b.noise);
    s.tensors["temperatures"] = tensor("F32", {rows}, b.temperatures);
    s.tensors["tokens"] = tensor("I32", {rows}, run.tokens);
    s.metadata["scaling_order"] = "post";
    return s;
  }
  void expect_error(const std::string& path, const std::string& needle) {
    try {
      analysis::verify_file(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
};

TEST_F(VerifyFiles, ReadsBackWhatItWrites) {
  Safetensors s;
  s.tensors["a"] = tensor<std::uint16_t>("BF16", {2}, {0x3F80, 0xC040});    // 1, -3
  s.tensors["b"] = tensor<std::uint16_t>("F16", {3}, {0x3E00, 0x0001, 0xFC00});  // 1.5, 2^-24, -inf
  s.tensors["c"] = tensor<std::int64_t>("I64", {1}, {std::int64_t(1) << 40});
  s.metadata["eps"] = "1e-10";
  const auto r = read_safetensors(write(s, "rt.safetensors"));
  EXPECT_EQ(r.metadata.at("eps"), "1e-10");
  EXPECT_EQ(r.tensors.at("a").as_f32(), (std::vector<float>{1.0f, -3.0f}));
  const auto b = r.tensors.at("b").as_f32();
  EXPECT_EQ(b[0], 1.5f);
  EXPECT_EQ(b[1], 0x1p-24f);
  EXPECT_EQ(b[2], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(r.tensors.at("c").as_i64()[0], std::int64_t(1) << 40);
}

TEST_F(VerifyFiles, AKernelsOwnTokensPass) {
  const auto r = analysis::verify_file(write(sampled(12, 3000), "good.safetensors"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.identical + r.explained, 12);
  EXPECT_EQ(r.unexplained + r.out_of_range + r.invalid_noise(), 0);
}

TEST_F(VerifyFiles, SeedsInsteadOfNoiseAreDrawnAndJudged) {
  // A sampler that draws its noise writes each row's seed and offset; the
  // oracle draws the same E. fused-philox's tokens pass; a key of the seed's
  // low half alone (fused-philox~philox_key) draws other noise and fails.
  const std::int64_t rows = 16, V = 3000;
  subject::Batch b = subject::Batch::make(rows, V, oracle::Dtype::bf16);
  fixtures::fill_llm_like(b, 9);
  for (std::int64_t r = 0; r < rows; ++r) b.temperatures[std::size_t(r)] = r % 4 == 0 ? 0.0f : 1.0f;
  b.round_logits();
  b.draw_noise(9);
  const std::vector<std::uint64_t> seeds = b.seeds, offsets = b.offsets;
  auto dump = [&](const char* kernel) {
    const auto run = subject::run_kernel(*kernels::find_kernel(kernel), b);
    EXPECT_TRUE(run.status.ok) << run.status.message;
    Safetensors s;
    s.tensors["logits"] = tensor("BF16", {rows, V}, b.bf16_logits());
    s.tensors["seeds"] = tensor("U64", {rows}, seeds);
    s.tensors["offsets"] = tensor("I64", {rows}, offsets);
    s.tensors["temperatures"] = tensor("F32", {rows}, b.temperatures);
    s.tensors["tokens"] = tensor("I32", {rows}, run.tokens);
    return s;
  };
  const auto good = analysis::verify_file(write(dump("fused-philox"), "drawn.safetensors"));
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(good.contract.noise_ulp, race::kDrawnNoiseUlp);
  EXPECT_EQ(good.identical + good.explained, rows);
  Safetensors short_seeds = dump("fused-philox");
  short_seeds.tensors["seeds"] = tensor("U64", {rows - 1}, std::vector<std::uint64_t>(rows - 1));
  expect_error(write(short_seeds, "short.safetensors"), "seeds must be [16]");
  Safetensors no_offsets = dump("fused-philox");
  no_offsets.tensors.erase("offsets");
  expect_error(write(no_offsets, "no_offsets.safetensors"), "missing tensor 'offsets'");
  RACEORACLE_SKIP_WITHOUT_MUTANTS();
  const auto bad = analysis::verify_file(write(dump("fused-philox~philox_key"), "drawn_bad.safetensors"));
  EXPECT_FALSE(bad.ok());
  EXPECT_GT(bad.unexplained, 0);  // 5 of the 12 sampling rows: peaked rows keep their token whatever the noise
}

TEST_F(VerifyFiles, ADumpNamesItsStream) {
  // A dump of a sampler that drew from torch's CUDA stream: seeds, offsets
  // and `noise_stream` in the metadata; the oracle replays that stream, under
  // its transform's bound. Tokens raced on another seed's draws fail.
  const std::int64_t rows = 8, V = 2000;
  subject::Batch b = subject::Batch::make(rows, V, oracle::Dtype::f32);
  fixtures::fill_llm_like(b, 4);
  b.stream.kind = race::StreamKind::torch_exponential;
  b.draw_noise(5);
  subject::Batch other = b;
  other.draw_noise(6);
  const auto contract = protocol::with_stream_noise(protocol::default_sampler_contract(), b.stream);
  auto dump = [&](const subject::Batch& drew) {
    std::vector<std::int32_t> tokens;
    for (const auto& v : drew.decide(contract)) tokens.push_back(std::int32_t(v.token));
    Safetensors s;
    s.tensors["logits"] = tensor("F32", {rows, V}, b.logits);
    s.tensors["seeds"] = tensor("U64", {rows}, b.seeds);
    s.tensors["offsets"] = tensor("U64", {rows}, b.offsets);
    s.tensors["temperatures"] = tensor("F32", {rows}, b.temperatures);
    s.tensors["tokens"] = tensor("I32", {rows}, tokens);
    s.metadata = protocol::stream_fields(b.stream);
    return s;
  };
  const auto good = analysis::verify_file(write(dump(b), "torch_stream.safetensors"));
  EXPECT_TRUE(good.ok());
  EXPECT_GT(good.contract.noise_abs, 0);
  EXPECT_EQ(good.identical + good.explained, rows);
  EXPECT_GT(analysis::verify_file(write(dump(other), "torch_other_seed.safetensors")).unexplained, 0);
  Safetensors split = dump(b);
  std::vector<std::uint64_t> seeds = b.seeds;
  seeds[3] ^= 1;
  split.tensors["seeds"] = tensor("U64", {rows}, seeds);
  expect_error(write(split, "torch_split.safetensors"), "row 3 has another seed or offset than row 0");
  Safetensors tensor_noise = dump(b);
  tensor_noise.tensors.erase("seeds");
  tensor_noise.tensors.erase("offsets");
  tensor_noise.tensors["noise"] = tensor("F32", {rows, V}, b.noise);
  expect_error(write(tensor_noise, "torch_no_seeds.safetensors"), "'noise_stream' is given but the file has no seeds");
}

TEST_F(VerifyFiles, OneStageContractIsTighter) {
  Safetensors s = sampled(4, 500);
  s.metadata["stages"] = "1";
  const auto r = analysis::verify_file(write(s, "one_stage.safetensors"));
  EXPECT_EQ(r.contract.rescales, 0);
  EXPECT_TRUE(r.ok());
}

TEST_F(VerifyFiles, SharedNoiseRow) {
  EXPECT_TRUE(analysis::verify_file(write(sampled(4, 500, true), "shared.safetensors")).ok());
}

TEST_F(VerifyFiles, WrongTokensOutOfRangeAndBadNoiseFail) {
  Safetensors s = sampled(6, 1000);
  auto tokens = s.tensors["tokens"].as_i64();
  std::vector<std::int32_t> t(tokens.begin(), tokens.end());
  t[1] = (t[1] + 1) % 1000;  // another id: unexplained (keys are almost never that close)
  t[2] = 1000;               // out of range
  s.tensors["tokens"] = tensor("I32", {6}, t);
  auto noise = s.tensors["noise"].as_f32();
  noise[5] = -1.0f;
  noise[7] = 0.0f;
  s.tensors["noise"] = tensor("F32", {6, 1000}, noise);
  const auto r = analysis::verify_file(write(s, "bad_tokens.safetensors"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.unexplained, 1);
  EXPECT_EQ(r.out_of_range, 1);
  EXPECT_EQ(r.invalid_noise(), 1);
  EXPECT_EQ(r.zero_noise(), 1);
  EXPECT_EQ(r.failures.size(), 2u);
}

TEST_F(VerifyFiles, BlocksOfAnySizeAndUnalignedDataGiveTheSameReport) {
  Safetensors s = sampled(7, 1000);
  auto tokens = s.tensors["tokens"].as_i64();
  std::vector<std::int32_t> t(tokens.begin(), tokens.end());
  t[3] = (t[3] + 1) % 1000;
  t[6] = -1;
  s.tensors["tokens"] = tensor("I32", {7}, t);
  const std::string aligned = write(s, "aligned.safetensors");
  // The same document with one more header byte: every tensor starts at an odd address.
  std::ifstream in(aligned, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  bytes.insert(8 + n, " ");
  ++n;
  std::memcpy(bytes.data(), &n, 8);
  const std::string odd = (dir / "odd.safetensors").string();
  std::ofstream(odd, std::ios::binary) << bytes;

  const analysis::VerifyReport want = analysis::verify_file(aligned, 10, 0);
  EXPECT_EQ(want.unexplained, 1);
  EXPECT_EQ(want.out_of_range, 1);
  for (const auto& [path, block] : std::vector<std::pair<std::string, int>>{{aligned, 1}, {aligned, 3}, {odd, 0}, {odd, 2}}) {
    const analysis::VerifyReport r = analysis::verify_file(path, 10, block);
    SCOPED_TRACE(path + " block " + std::to_string(block));
    EXPECT_EQ(r.identical, want.identical);
    EXPECT_EQ(r.explained, want.explained);
    EXPECT_EQ(r.unexplained, want.unexplained);
    EXPECT_EQ(r.out_of_range, want.out_of_range);
    EXPECT_EQ(r.failures, want.failures);
    EXPECT_EQ(r.noise.draws, want.noise.draws);
    EXPECT_EQ(r.noise.chi_squared, want.noise.chi_squared);
  }
}

TEST_F(VerifyFiles, BadFilesAreClearErrors) {
  const Safetensors good = sampled(2, 100);
  const std::string path = write(good, "base.safetensors");
  const auto size = fs::file_size(path);

  fs::copy_file(path, dir / "truncated.safetensors");
  fs::resize_file(dir / "truncated.safetensors", size - 40);
  expect_error((dir / "truncated.safetensors").string(), "truncated");

  {  // a header length larger than the file
    std::fstream f(dir / "hdr.safetensors", std::ios::out | std::ios::binary);
    const std::uint64_t n = 1 << 20;
    f.write(reinterpret_cast<const char*>(&n), 8);
    f << "{}";
  }
  expect_error((dir / "hdr.safetensors").string(), "larger than the file");
  {
    std::ofstream(dir / "tiny.safetensors") << "abc";
  }
  expect_error((dir / "tiny.safetensors").string(), "too short");
  {
    std::fstream f(dir / "json.safetensors", std::ios::out | std::ios::binary);
    const std::uint64_t n = 5;
    f.write(reinterpret_cast<const char*>(&n), 8);
    f << "{nope";
  }
  expect_error((dir / "json.safetensors").string(), "not valid JSON");

  Safetensors s = good;
  s.tensors.erase("noise");
  expect_error(write(s, "missing.safetensors"), "missing tensor 'noise'");

  s = good;
  s.tensors["temperatures"].dtype = "I32";
  expect_error(write(s, "dtype.safetensors"), "temperatures dtype must be F32");

  s = good;
  s.tensors["tokens"] = tensor<std::int32_t>("I32", {3}, {0, 0, 0});
  expect_error(write(s, "shape.safetensors"), "tokens must be [2]");

  s = good;
  s.tensors["noise"].shape = {2, 50, 2};
  expect_error(write(s, "noise_shape.safetensors"), "noise must be [2, 100] or [1, 100]");

  s = good;
  s.metadata["scaling_order"] = "sideways";
  expect_error(write(s, "order.safetensors"), "'scaling_order' = 'sideways': must be one of 'post', 'pre'");
  s = good;
  s.metadata["eps"] = "tiny";
  expect_error(write(s, "eps.safetensors"), "not a decimal number");
  s = good;
  s.metadata["stages"] = "3";
  expect_error(write(s, "stages.safetensors"), "'stages' = '3': must be '1'");
  s = good;
  s.metadata["exp_ulp"] = "1e30";
  expect_error(write(s, "ulp.safetensors"), "'exp_ulp' = '1e30': ulps must be in [0, 1048576]");
  s = good;
  s.metadata["eps"] = "nan";
  expect_error(write(s, "eps_nan.safetensors"), "'eps' = 'nan' is not a finite fp32 number");
  s = good;
  s.metadata["greedy_eps"] = "-1";
  expect_error(write(s, "greedy_eps_negative.safetensors"), "'greedy_eps' = '-1': must be >= 0");
  s = good;  // a noise tensor is E itself: no tolerance on it
  s.metadata["noise_ulp"] = "1.5";
  expect_error(write(s, "noise_ulp_with_tensor.safetensors"), "'noise_ulp' = '1.5': only a sampler that draws its noise");
}

/// Every number a flag takes is checked before anything runs; the message
/// names the flag, the value and what is allowed (exit code 2: Cli.BadFlagExitsTwo).
TEST(CommandLine, BadNumbersAreRefusedNamingFlagValueAndRange) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"check", "--cases", "0"}, "--cases: Value 0 not in range 1 to 1000000"},
      {{"check", "--seed", "-1"}, "--seed: '-1' is not a seed: decimal digits, 0 to 18446744073709551615"},
      {{"check", "--seed", "18446744073709551616"}, "is not a seed"},
      {{"mutants", "--seed", "1e3"}, "is not a seed"},
      {{"divergence", "--temperatures", "0.5", "nan"}, "--temperatures: 'nan' is not a finite number > 0"},
      {{"divergence", "--temperatures", "inf"}, "'inf' is not a finite number > 0"},
      {{"divergence", "--temperatures", "-1"}, "'-1' is not a finite number > 0"},
      {{"check", "--sampler-timeout", "nan"}, "--sampler-timeout: 'nan' is not a finite number >= 0.001 and <= 86400"},
      {{"check", "--exp-ulp", "nan"}, "--exp-ulp: 'nan' is not a finite number >= 0 and <= 1048576"},
      {{"check", "--div-ulp", "1e30"}, "--div-ulp: '1e30' is not a finite number >= 0 and <= 1048576"},
      {{"mutants", "--timeout", "nan"}, "--timeout: 'nan' is not a finite number > 0"},
      {{"check", "--mutant-timeout", "inf"}, "--mutant-timeout: 'inf' is not a finite number > 0"},
      {{"check", "--rows", "70000"}, "--rows: Value 70000 not in range 1 to 65535"},
      {{"divergence", "--vocab", "2147483648"}, "--vocab: Value 2147483648 not in range 1 to 1073741824"},
      {{"check", "--stages", "3"}, "--stages: 3 not in {1,2}"},
      {{"bench", "--block-v", "128"}, "--block-v: 128 not in {1024,2048,4096}"},
      {{"bench", "--rows-like", "bumpy"}, "--rows-like: bumpy not in {llm,flat,wide,spread}"},
      {{"bench", "--flat", "--rows-like", "wide"}, "excludes"},
      {{"divergence", "--rows", "65535", "--vocab", "1073741824"}, "--rows 65535 x --vocab 1073741824 needs"},
      {{"check", "--sampler-fds", "3,4", "--sampler", "x"}, "excludes"},
      {{"verify"}, "file is required"},
      {{"divergence", "--competitive", "0"}, "--competitive: '0' is not a finite number > 0 and <= 1"},
      {{"divergence", "--window", "0.9"}, "--window: '0.9' is not a finite number > 0 and <= 0.5"},
      {{"divergence", "--rate-exp-ulp", "-2"}, "--rate-exp-ulp: '-2' is not a finite number >= 0"},
      {{"divergence", "a.safetensors"}, "dumps: At least 2 required"},
      {{"divergence", "--top-k", "8", "--competitive", "0.5"}, "excludes"},
      {{"divergence", "--logit-rows", "16"}, "--logit-rows requires --no-kernels"},
      {{"divergence", "--no-kernels", "--logit-rows", "0"}, "--logit-rows: Value 0 not in range 1 to 1048576"},
      {{"divergence", "--centre", "10"}, "--centre requires --normal"},
      {{"divergence", "--normal", "1", "--centre", "nan"}, "--centre: 'nan' is not a finite number"},
      // Without kernels only the logit rows are held: 10^6 rows of V = 163840 fit; 256 logit rows of 2^30 do not.
      {{"divergence", "--no-kernels", "--rows", "65535", "--vocab", "1073741824"}, "--logit-rows 256 x --vocab 1073741824 needs"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<const char*> argv{"raceoracle"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    CommandLine command_line;
    try {
      command_line.parse(int(argv.size()), argv.data());
      ADD_FAILURE() << "accepted: " << ::testing::PrintToString(args);
    } catch (const CLI::ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << ::testing::PrintToString(args) << " gave: " << e.what();
    }
  }
}

// The flags a replay command prints for an external sampler's overrides are
// the flags the command line takes: both come from kOverridableTerms.
TEST(CommandLine, EveryOverridableTermIsAFlagOfEachSamplerCommand) {
  const std::map<std::string, std::string> value{{"scaling_order", "pre"}, {"exp_ulp", "3"},     {"div_ulp", "0.5"},
                                                  {"stages", "1"},          {"rescales", "4"},    {"normalise", "sum"},
                                                  {"key_domain", "log"},    {"key_dtype", "bf16"}};
  for (const char* command : {"check", "mutants", "replay", "divergence"})
    for (const protocol::OverridableTerm& t : protocol::kOverridableTerms) {
      ASSERT_EQ(value.count(t.field), 1u) << t.field << " has no test value";
      const std::vector<const char*> argv{"raceoracle", command, "--sampler", "x", t.flag, value.at(t.field).c_str(),
                                          "--property", "TokensInRange"};
      CommandLine command_line;
      try {
        // replay needs --property; the others refuse it: parse up to the term's flag.
        command_line.parse(std::string(command) == "replay" ? 8 : 6, argv.data());
      } catch (const CLI::ParseError& e) {
        ADD_FAILURE() << command << " " << t.flag << ": " << e.what();
      }
    }
  EXPECT_STREQ(protocol::override_flag("exp_ulp"), "--exp-ulp");
  EXPECT_THROW(protocol::override_flag("noise_ulp"), std::invalid_argument);
}

}  // namespace
}  // namespace raceoracle::cli
