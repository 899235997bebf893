// The sampler protocol's building blocks: the safetensors header checks, the
// request encoding, and the external sampler's handling of every way a
// sampler process can misbehave (tests/protocol/misbehaving_sampler.py).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "oracle/noise_streams.h"
#include "protocol/external_sampler.h"

namespace raceoracle::protocol {
namespace {

namespace fs = std::filesystem;

/// parse_header must refuse `header` with a message holding `needle`.
void expect_header_error(const std::string& header, const std::string& needle) {
  try {
    parse_header(header, 1 << 20);
    ADD_FAILURE() << "accepted " << header;
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(SafetensorsHeader, RejectsAByteCountThatWouldWrap) {
  // [4, 2^62] F32 is 2^66 bytes: as a 64-bit product it wraps to 0.
  expect_header_error(R"({"logits":{"dtype":"F32","shape":[4,4611686018427387904],"data_offsets":[0,0]}})",
                      "more bytes than 2^63");
}

TEST(SafetensorsHeader, RejectsFloatAndNegativeCounts) {
  // Found by fuzz/sampler_reply: 3.99929e+24 converted to int64 (undefined).
  for (const char* h : {R"({"t":{"dtype":"F32","shape":[3.99929e24],"data_offsets":[0,0]}})",
                        R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,0]}})",
                        R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})",
                        R"({"t":{"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,0]}})",
                        R"({"t":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})"})
    expect_header_error(h, "tensor 't'");
}

TEST(SafetensorsHeader, RejectsAShapeItsDataDoesNotHold) {
  // A vocab of 2^31 - 1 claimed with no data behind it.
  expect_header_error(R"({"logits":{"dtype":"F32","shape":[1,2147483647],"data_offsets":[0,0]}})",
                      "need 8589934588 bytes, data_offsets give 0");
}

TEST(SafetensorsHeader, AnEmptyTensorReadsAsEmpty) {
  // Found by fuzz/safetensors_reader: memcpy from the null buffer of a [0] tensor.
  const std::string h = R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})";
  const Safetensors s = assemble(parse_header(h, 0), nullptr);
  EXPECT_TRUE(s.require("t").as_f32().empty());
}

TEST(SafetensorsHeader, RejectsOverlappingTensors) {
  const std::string h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  EXPECT_THROW(parse_header(h, 64), SafetensorsError);
}

TEST(SafetensorsHeader, RejectsAKeyNamedTwice) {
  // A JSON reader keeps the last: which `tokens` did the writer mean?
  expect_header_error(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                      R"("t":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
                      "header names 't' twice");
  expect_header_error(R"({"__metadata__":{"eps":"0","eps":"1e-10"}})", "header names 'eps' twice");
  // Equal keys in different objects are not duplicates.
  EXPECT_EQ(parse_header(R"({"__metadata__":{"t":"x"},"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4)
                .metadata.at("t"),
            "x");
}

TEST(SafetensorsHeader, RejectsDataPastTheLimit) {
  const std::string h = R"({"a":{"dtype":"I64","shape":[3],"data_offsets":[0,24]}})";
  EXPECT_THROW(parse_header(h, 16), SafetensorsError);
  EXPECT_EQ(parse_header(h, 24).data_bytes, 24u);
}

// The format indexes the whole data buffer: bytes no tensor claims (a file
// appended to, a hole between tensors) are refused, not read past.
TEST(SafetensorsDocument, RefusesBytesNoTensorClaims) {
  auto document = [](const std::string& header_json, std::size_t data_bytes) {
    std::string header = header_json;
    while ((8 + header.size()) % 8) header += ' ';
    std::string bytes(8, '\0');
    const std::uint64_t n = header.size();
    std::memcpy(bytes.data(), &n, 8);
    return bytes + header + std::string(data_bytes, '\0');
  };
  auto error_of = [](const std::string& bytes) -> std::string {
    try {
      parse_safetensors(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    } catch (const SafetensorsError& e) {
      return e.what();
    }
    return "";
  };
  const std::string one = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_EQ(error_of(document(one, 8)), "");
  EXPECT_NE(error_of(document(one, 11)).find("3 bytes follow the last tensor's data"), std::string::npos);
  const std::string hole = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                           R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  EXPECT_NE(error_of(document(hole, 12)).find("bytes 4 to 8 of the data belong to no tensor"), std::string::npos);
}

/// A safetensors file of one F32 tensor of `n` values, written at `path`.
void write_floats(const std::string& path, std::size_t n) {
  Safetensors s;
  Tensor t{"F32", {std::int64_t(n)}, std::vector<unsigned char>(n * 4, 0x3f)};
  s.tensors["logits"] = t;
  write_safetensors(path, s);
}

TEST(SafetensorsFile, RefusesAFifoByNameWithoutBlocking) {
  const std::string dir = fs::temp_directory_path() / ("raceoracle-fifo-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string fifo = dir + "/in.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // no writer: an open for reading would block
  try {
    SafetensorsFile f(fifo);
    ADD_FAILURE() << "opened a FIFO";
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find("a FIFO, not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SafetensorsFile("/dev/zero"), SafetensorsError);
  fs::remove_all(dir);
}

TEST(SafetensorsFile, AFileTruncatedUnderTheReaderIsAnErrorNotASignalDeath) {
  const std::string path = fs::temp_directory_path() / ("raceoracle-shrink-" + std::to_string(::getpid()) + ".safetensors");
  write_floats(path, 1 << 20);  // 4 MiB of data: pages past the new end fault
  EXPECT_EXIT(
      {
        SafetensorsFile f(path);
        const TensorView v = f.require("logits");
        ::truncate(path.c_str(), 0);
        volatile unsigned char sink = 0;
        for (std::size_t i = 0; i < v.bytes; i += 4096) sink = sink + v.data[i];
        std::exit(0);  // not reached: the first touched page past the end raises SIGBUS
      },
      ::testing::ExitedWithCode(2), "changed size while it was read");
  fs::remove(path);
}

TEST(WriteSafetensors, AFailedWriteLeavesNoFile) {
  EXPECT_THROW(write_floats("/no-such-dir/x.safetensors", 4), SafetensorsError);
  EXPECT_FALSE(fs::exists("/no-such-dir/x.safetensors"));
}

/// A request as a sampler reads it: `header` (length prefix included) and the `data` pieces after it.
Safetensors decoded(const std::string& header, const std::vector<Piece>& data) {
  std::string bytes;
  for (const Piece& p : data) bytes.append(static_cast<const char*>(p.data), p.bytes);
  return assemble(parse_header(header.substr(8), bytes.size()), reinterpret_cast<const unsigned char*>(bytes.data()));
}

TEST(Request, PacksPaddedRowsAndKeepsASharedNoiseRow) {
  subject::Batch b = subject::Batch::make(3, 5, oracle::Dtype::f32, /*pad=*/2);
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t i = 0; i < 5; ++i) b.x(r, i) = float(10 * r + i);
  b.noise_stride = 0;  // one noise row for every row
  b.noise.assign(5, 0.5f);
  std::vector<Piece> data;
  std::vector<std::vector<unsigned char>> scratch;
  const std::string header = encode_request(b, 42, data, scratch);
  std::uint64_t n = 0;
  std::memcpy(&n, header.data(), 8);
  ASSERT_EQ(header.size(), 8 + n);
  ASSERT_EQ(header.size() % 8, 0u) << "data must start 8-aligned";
  const Safetensors s = decoded(header, data);
  EXPECT_EQ(s.metadata.at("id"), "42");
  EXPECT_EQ(s.metadata.at("type"), "sample");
  EXPECT_EQ(s.require("logits").shape, (std::vector<std::int64_t>{3, 5}));
  EXPECT_EQ(s.require("noise").shape, (std::vector<std::int64_t>{1, 5}));
  const auto x = s.require("logits").as_f32();
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 5; ++i) EXPECT_EQ(x[std::size_t(r * 5 + i)], float(10 * r + i));
}

TEST(Request, CarriesEachRowsFiltersWithItsRow) {
  subject::Batch b = subject::Batch::make(3, 4);
  b.filters = {{5, 0.9f, 0.0f}, {0, 1.0f, 0.25f}, {-1, 0.5f, 0.0f}};
  std::vector<Piece> data;
  std::vector<std::vector<unsigned char>> scratch;
  const std::string header = encode_request(b, 7, data, scratch);
  const Safetensors s = decoded(header, data);
  EXPECT_EQ(s.require("top_k").dtype, "I32");
  EXPECT_EQ(s.require("top_k").as_i64(), (std::vector<std::int64_t>{5, 0, -1}));
  EXPECT_EQ(s.require("top_p").as_f32(), (std::vector<float>{0.9f, 1.0f, 0.5f}));
  EXPECT_EQ(s.require("min_p").as_f32(), (std::vector<float>{0.0f, 0.25f, 0.0f}));
  b.filters.clear();  // a batch without filters sends none
  encode_request(b, 8, data, scratch);
  EXPECT_EQ(data.size(), 3u);  // logits, temperatures, noise
}

TEST(Request, ADrawsRequestCarriesSeedsAndTheCountAndNoNoise) {
  subject::Batch b = subject::Batch::make(2, 4);
  b.filters = {{2, 0.9f, 0.0f}, {0, 1.0f, 0.0f}};
  const std::vector<std::uint64_t> seeds = {7, (std::uint64_t(1) << 63) + 5};
  std::vector<Piece> data;
  std::vector<std::vector<unsigned char>> scratch;
  const std::string header = encode_draws_request(b, seeds, 4096, 9, data, scratch);
  const Safetensors s = decoded(header, data);
  EXPECT_EQ(s.metadata.at("type"), "draws");
  EXPECT_EQ(s.metadata.at("draws"), "4096");
  EXPECT_EQ(s.metadata.at("id"), "9");
  EXPECT_EQ(s.tensors.count("noise"), 0u);
  EXPECT_EQ(s.require("seeds").dtype, "U64");
  EXPECT_EQ(s.require("top_k").as_i64(), (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(s.require("seeds").view().as_u64(), seeds);
  EXPECT_THROW(encode_draws_request(b, {1}, 4, 10, data, scratch), std::invalid_argument);
}

TEST(Reply, ADrawsReplyIsRowsByDrawsAndEchoesNoNoise) {
  auto reply = [](std::vector<std::int64_t> shape, std::vector<std::int64_t> tokens) {
    Safetensors m;
    m.metadata = {{"type", "tokens"}, {"id", "3"}};
    Tensor t;
    t.dtype = "I64";
    t.shape = std::move(shape);
    t.bytes.resize(tokens.size() * 8);
    std::memcpy(t.bytes.data(), tokens.data(), t.bytes.size());
    m.tensors["tokens"] = t;
    return m;
  };
  const Reply ok = read_reply(reply({2, 3}, {0, 1, 2, 3, 4, 5}), 3, 2, 8, 3);
  ASSERT_EQ(ok.kind, Reply::Kind::tokens) << ok.message;
  EXPECT_EQ(ok.wide_tokens, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  const Reply flat = read_reply(reply({6}, {0, 1, 2, 3, 4, 5}), 3, 2, 8, 3);
  EXPECT_EQ(flat.kind, Reply::Kind::violation);
  EXPECT_NE(flat.message.find("tokens shape [6], expected [2, 3]"), std::string::npos) << flat.message;
}

TEST(Hello, OwnRandomnessIsDeclaredAloneInVersionTwo) {
  Safetensors hello;
  hello.metadata = {{"type", "hello"}, {"protocol", "2"}, {"name", "x"}, {"randomness", "own"}};
  EXPECT_TRUE(read_hello(hello, {}).own_randomness);
  hello.metadata["randomness"] = "given";
  EXPECT_FALSE(read_hello(hello, {}).own_randomness);
  hello.metadata["randomness"] = "mine";
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
  hello.metadata["randomness"] = "own";
  hello.metadata["noise_stream"] = "torch-cuda-exponential";  // one or the other
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
  hello.metadata.erase("noise_stream");
  hello.metadata["protocol"] = "1";
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
}

/// Two requests of 2 drafts over V = 3, with counts of their own and draft probabilities.
subject::VerifyBatch small_verify_batch() {
  subject::VerifyBatch b;
  b.requests = 2, b.drafts = 2, b.vocab = 3;
  for (int i = 0; i < 2 * 3 * 3; ++i) b.target_f32.push_back(0.5f * float(i));
  b.draft_ids = {0, 1, 2, 0};
  b.draft_counts = {2, 1};
  b.draft_probs.assign(2 * 2 * 3, 1.0f / 3);
  b.uniforms = {0.25, 0.5, 0.75, 0.0};
  b.recovery_noise = {1, 2, 3, 4, 5, 6};
  b.bonus_noise = {6, 5, 4, 3, 2, 1};
  b.temperatures = {1.0f, 0.0f};
  b.constants.eps = 1e-7f;
  return b;
}

TEST(Request, AVerifyRequestCarriesTheVerifyStepFilesTensorsUnderTheirNames) {
  subject::VerifyBatch b = small_verify_batch();
  b.filters = {{2, 0.9f, 0.0f}, {0, 1.0f, 0.05f}};
  std::vector<Piece> data;
  std::vector<std::vector<unsigned char>> scratch;
  const std::string header = encode_verify_request(b, 4, data, scratch);
  const Safetensors s = decoded(header, data);
  EXPECT_EQ(s.metadata.at("type"), "verify");
  EXPECT_EQ(s.metadata.at("id"), "4");
  EXPECT_EQ(std::stof(s.metadata.at("eps")), 1e-7f);
  EXPECT_EQ(s.require("target_logits").shape, (std::vector<std::int64_t>{2, 3, 3}));
  EXPECT_EQ(s.require("target_logits").as_f32(), b.target_f32);
  EXPECT_EQ(s.require("draft_ids").as_i64(), (std::vector<std::int64_t>{0, 1, 2, 0}));
  EXPECT_EQ(s.require("draft_counts").as_i64(), (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(s.require("draft_probs").shape, (std::vector<std::int64_t>{2, 2, 3}));
  EXPECT_EQ(s.require("uniforms").dtype, "F64");
  EXPECT_EQ(s.require("uniforms").view().as_f64(), b.uniforms);
  EXPECT_EQ(s.require("recovery_noise").as_f32(), b.recovery_noise);
  EXPECT_EQ(s.require("bonus_noise").as_f32(), b.bonus_noise);
  EXPECT_EQ(s.require("temperatures").as_f32(), b.temperatures);
  EXPECT_EQ(s.require("top_k").as_i64(), (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(s.require("top_p").as_f32(), (std::vector<float>{0.9f, 1.0f}));
  EXPECT_EQ(s.require("min_p").as_f32(), (std::vector<float>{0.0f, 0.05f}));
  // Deterministic drafts, no counts, no filters: none of their tensors is sent.
  subject::VerifyBatch plain = b;
  plain.draft_probs.clear(), plain.draft_counts.clear(), plain.filters.clear();
  const std::string h2 = encode_verify_request(plain, 5, data, scratch);
  for (const char* absent : {"draft_probs", "draft_counts", "top_k", "top_p", "min_p"})
    EXPECT_EQ(h2.find(absent), std::string::npos) << absent;
}

TEST(Hello, AVerifyStepIsDeclaredWithItsUniformRule) {
  Safetensors hello;
  hello.metadata = {{"type", "hello"}, {"protocol", "2"}, {"name", "x"}, {"step", "verify"}};
  SamplerHello h = read_hello(hello, {});
  EXPECT_TRUE(h.verify);
  EXPECT_FALSE(h.rules.uniform_f32);
  hello.metadata["uniform_compare"] = "f32";
  EXPECT_TRUE(read_hello(hello, {}).rules.uniform_f32);
  hello.metadata["uniform_compare"] = "f16";
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
  hello.metadata["uniform_compare"] = "f64";
  hello.metadata["step"] = "sample";  // a race sampler has no uniform rule
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
  hello.metadata.erase("uniform_compare");
  EXPECT_FALSE(read_hello(hello, {}).verify);
  hello.metadata["step"] = "draft";
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
  hello.metadata["step"] = "verify";  // it reads the request's noise: no stream, no own randomness
  hello.metadata["randomness"] = "own";
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
  hello.metadata.erase("randomness");
  hello.metadata["noise_stream"] = "torch-cuda-exponential";
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
}

/// A sampler command from tests/protocol/misbehaving_sampler.py.
std::string misbehaving(const std::string& mode) {
  return std::string(RACEORACLE_TEST_PYTHON) + " " + RACEORACLE_TEST_DIR + "/misbehaving_sampler.py " + mode;
}

class Misbehaving : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(RACEORACLE_TEST_PYTHON).empty()) GTEST_SKIP() << "no python3 with numpy found at configure time";
  }
  static SamplerSpec spec(const std::string& mode, double timeout_s = 20) {
    SamplerSpec s;
    s.command = misbehaving(mode);
    s.timeout_s = timeout_s;
    return s;
  }
  /// Runs one batch; returns (status message, breakdown).
  static std::pair<std::string, std::string> first_request(ExternalSampler& x) {
    const subject::KernelRun r = x.run(subject::Batch::make(2, 7));
    EXPECT_FALSE(r.status.ok);
    return {r.status.message, x.take_breakdown()};
  }
  static void expect_breakdown(const std::string& mode, const std::string& named, double timeout_s = 20) {
    ExternalSampler x(spec(mode, timeout_s));
    const auto [status, breakdown] = first_request(x);
    EXPECT_NE(breakdown.find(named), std::string::npos) << mode << ": " << breakdown;
    EXPECT_NE(breakdown.find("request 1 rows 2"), std::string::npos) << mode << ": the stderr tail is missing\n" << breakdown;
    // The next request restarts it (and it misbehaves again).
    const auto again = first_request(x);
    EXPECT_EQ(x.starts(), 2);
    EXPECT_NE(again.second.find(named), std::string::npos) << again.second;
  }
};

TEST_F(Misbehaving, ACrashIsNamedWithItsSignal) { expect_breakdown("crash", "crashed: killed by signal 6"); }
TEST_F(Misbehaving, AnEarlyExitIsNamedWithItsStatus) { expect_breakdown("exit", "exited with status 3"); }
TEST_F(Misbehaving, GarbageOnStdoutIsNamed) { expect_breakdown("garbage", "wrote garbage"); }
TEST_F(Misbehaving, TextOnStdoutIsNamed) { expect_breakdown("text", "wrote text to stdout: 'debug: logits"); }
TEST_F(Misbehaving, WrongShapeIsNamed) { expect_breakdown("wrong_shape", "tokens shape [3], expected [2]"); }
TEST_F(Misbehaving, WrongDtypeIsNamed) { expect_breakdown("wrong_dtype", "tokens dtype F32, expected I32 or I64"); }
TEST_F(Misbehaving, WrongIdIsNamed) { expect_breakdown("wrong_id", "7' is not the request's"); }
TEST_F(Misbehaving, ATruncatedReplyIsNamed) { expect_breakdown("truncated", "after"); }

TEST_F(Misbehaving, AHangIsNamedWithinItsTimeout) {
  const auto start = std::chrono::steady_clock::now();
  expect_breakdown("hang", "hung: no reply within the timeout", 1.0);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 2 * 1.0 + 8) << "two timed-out requests (and two starts) took " << s << " s";
}

TEST_F(Misbehaving, AnExitIsSeenWhileAChildItStartedHoldsItsStdout) {
  // Not a hang: the exit is reported within a poll slice, not at the timeout,
  // and the child holding the pipe goes with the group.
  const auto start = std::chrono::steady_clock::now();
  expect_breakdown("grandchild", "exited with status 0 before replying (a process it started still held its stdout");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 10) << "two requests to a sampler whose timeout is 20 s took " << s << " s";
}

TEST_F(Misbehaving, AClosedStdinIsNamedAsStdin) {
  // exec: no shell between, which would hold the pipe's read end open (then
  // the request cannot be written, and the timeout names the stalled stdin).
  SamplerSpec s = spec("close_stdin");
  s.command = "exec " + s.command;
  ExternalSampler x(s);
  // A request larger than the pipe, so the write meets the closed end.
  const subject::KernelRun r = x.run(subject::Batch::make(4, 600000));
  EXPECT_FALSE(r.status.ok);
  const std::string b = x.take_breakdown();
  EXPECT_NE(b.find("closed its stdin while a request was being sent"), std::string::npos) << b;
}

TEST(TerminalSafe, NoTextASamplerSendsCanPrintALineOfItsOwn) {
  EXPECT_EQ(terminal_safe("ok name", true), "ok name");
  EXPECT_EQ(terminal_safe("a\nverdict: PASS", true), "a\\nverdict: PASS");
  EXPECT_EQ(terminal_safe("a\nb", false), "a\n    b");
  EXPECT_EQ(terminal_safe("\x1b[2K\rx\x7f", true), "\\x1b[2K\\x0dx\\x7f");
  EXPECT_EQ(terminal_safe("\xc2\x9b" "31m \xc3\xa9", true), "\\u009b31m \xc3\xa9");  // CSI escaped, e-acute kept
  EXPECT_EQ(terminal_safe(std::string(300, 'x'), true, 200), std::string(200, 'x') + "...");
}

TEST_F(Misbehaving, ANameThatWouldPrintAFakeVerdictIsEscaped) {
  ExternalSampler x(spec("fake_verdict"));
  EXPECT_EQ(x.name(), "misbehaving\\n\\nverdict: PASS\\x1b[1A") << x.name();
}

TEST_F(Misbehaving, AnErrorReplyIsAnAnswerNotABreakdown) {
  ExternalSampler x(spec("error"));
  const auto [status, breakdown] = first_request(x);
  EXPECT_NE(status.find("the sampler reported an error: ValueError: vocab too small"), std::string::npos) << status;
  EXPECT_EQ(breakdown, "");
  EXPECT_EQ(x.starts(), 1) << "an error reply must not restart the sampler";
}

TEST_F(Misbehaving, AnotherProtocolVersionIsRefusedAtTheHandshake) {
  try {
    ExternalSampler x(spec("old_version"));
    FAIL() << "accepted";
  } catch (const Breakdown& e) {
    EXPECT_NE(std::string(e.what()).find("speaks protocol version '0'"), std::string::npos) << e.what();
  }
}

TEST(Hello, ANoiseToleranceIsRefusedAtTheHandshake) {
  // The protocol sends noise tensors: the sampler's E is the tensor's, judged exactly.
  Safetensors hello;
  hello.metadata = {{"type", "hello"}, {"protocol", kProtocolVersion}, {"name", "x"}, {"noise_ulp", "1.5"}};
  try {
    read_hello(hello, {});
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the sampler's contract: 'noise_ulp' = '1.5'"), std::string::npos) << e.what();
  }
}

TEST(Hello, AStreamIsDeclaredInVersionTwoAndBringsItsTransformsBound) {
  Safetensors hello;
  hello.metadata = {{"type", "hello"}, {"protocol", "2"}, {"name", "x"}, {"noise_stream", "torch-cuda-exponential"},
                    {"stream_layout", "rows"}, {"stream_dtype", "bf16"}};
  const SamplerHello h = read_hello(hello, {});
  ASSERT_TRUE(h.stream);
  EXPECT_EQ(h.stream->kind, race::StreamKind::torch_exponential);
  EXPECT_TRUE(h.stream->per_row);
  EXPECT_EQ(h.stream->dtype, race::Dtype::bf16);
  const oracle::NoiseBound b = oracle::noise_bound(*h.stream);
  EXPECT_EQ(h.contract.noise_ulp, b.ulp);
  EXPECT_EQ(h.contract.noise_abs, b.abs);
  // A version 1 sampler reads noise tensors: a stream is refused, and so is an unknown one.
  hello.metadata["protocol"] = "1";
  EXPECT_THROW(read_hello(hello, {}), std::invalid_argument);
  hello.metadata["protocol"] = "2";
  hello.metadata["noise_stream"] = "torch";
  try {
    read_hello(hello, {});
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'noise_stream' = 'torch': must be one of 'raceoracle-philox', 'torch-cuda-exponential'"),
              std::string::npos) << e.what();
  }
  // Version 1, no stream: served as before.
  Safetensors v1;
  v1.metadata = {{"type", "hello"}, {"protocol", "1"}, {"name", "x"}};
  EXPECT_FALSE(read_hello(v1, {}).stream);
}

TEST(Hello, StreamFieldsRoundTrip) {
  for (race::StreamKind k : {race::StreamKind::raceoracle_philox, race::StreamKind::torch_exponential,
                             race::StreamKind::aiter_hiprand, race::StreamKind::flashinfer_curand, race::StreamKind::vllm_triton}) {
    race::NoiseStream s{k};
    if (k == race::StreamKind::torch_exponential) s.per_row = true, s.sm_count = 78, s.threads_per_sm = 1536;
    if (k == race::StreamKind::aiter_hiprand) s.dtype = race::Dtype::bf16;
    EXPECT_EQ(parse_stream(stream_fields(s)), s) << race::to_string(k);
    for (const race::StreamVersion& v : race::kStreamVersions) {  // every version each stream has, written and read
      if (v.kind != k) continue;
      s.version = v.version;
      const std::optional<race::NoiseStream> back = parse_stream(stream_fields(s));
      ASSERT_TRUE(back);
      EXPECT_EQ(back->version, v.version) << race::to_string(k);
    }
  }
  // No version: the newest; version 0 and unknown ones refused, naming the versions there are.
  EXPECT_EQ(parse_stream({{"noise_stream", "flashinfer-curand"}})->version, race::info(race::StreamKind::flashinfer_curand).latest);
  for (const char* bad : {"0", "3", "x"})
    EXPECT_THROW(parse_stream({{"noise_stream", "flashinfer-curand"}, {"stream_version", bad}}), std::invalid_argument) << bad;
  try {
    parse_stream({{"noise_stream", "vllm-triton-gumbel"}, {"stream_version", "7"}});
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'stream_version' = '7': vllm-triton-gumbel has no such version; it has 1 ("),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("; 2 (vLLM Model Runner V2 gumbel_sample at 03f97cc"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(parse_stream({}));
  EXPECT_THROW(parse_stream({{"stream_layout", "rows"}}), std::invalid_argument);  // no stream named
  EXPECT_THROW(parse_stream({{"noise_stream", "vllm-triton-gumbel"}, {"stream_layout", "rows"}}), std::invalid_argument);
  EXPECT_THROW(parse_stream({{"noise_stream", "torch-cuda-exponential"}, {"stream_threads_per_sm", "100"}}),
               std::invalid_argument);
}

// The command line's terms are applied over the sampler's own declaration.
TEST(Hello, OverridesApplyOverTheDeclaredContract) {
  Safetensors hello;
  hello.metadata = {{"type", "hello"}, {"protocol", kProtocolVersion}, {"name", "x"}, {"scaling_order", "pre"},
                    {"exp_ulp", "4"}};
  ContractOverrides o;
  o.exp_ulp = 1.5;
  o.stages = 1;
  const SamplerHello h = read_hello(hello, o);
  EXPECT_EQ(h.contract.order, oracle::ScalingOrder::pre);  // declared, not overridden
  EXPECT_EQ(h.contract.exp_ulp, 1.5);
  EXPECT_EQ(h.contract.rescale_ulp, 1.5);
  EXPECT_EQ(h.contract.rescales, 0);
  EXPECT_EQ(h.contract.div_ulp, default_sampler_contract().div_ulp);
  // Overrides keep the conventions the sampler declared, constants included.
  hello.metadata.insert({{"greedy_rule", "below"}, {"greedy_below", "1e-05"}, {"eps_rule", "fixed"}, {"eps_fixed", "0.5"}});
  const SamplerHello k = read_hello(hello, o);
  EXPECT_EQ(k.contract.conventions.greedy, race::GreedyRule::below);
  EXPECT_EQ(k.contract.conventions.greedy_below, 1e-5f);
  EXPECT_EQ(k.contract.conventions.eps_fixed, 0.5f);
}

TEST_F(Misbehaving, AnEchoOfTheHandshakeIsNotAHello) {
  SamplerSpec s;
  s.command = "cat";  // sends the request back: type hello, protocol 1, but no sampler's name
  try {
    ExternalSampler x(s);
    FAIL() << "accepted";
  } catch (const Breakdown& e) {
    EXPECT_NE(std::string(e.what()).find("names no sampler"), std::string::npos) << e.what();
  }
}

TEST_F(Misbehaving, ACommandThatDoesNotExistFailsWithItsShellMessage) {
  SamplerSpec s;
  s.command = "no-such-sampler-command --flag";
  try {
    ExternalSampler x(s);
    FAIL() << "accepted";
  } catch (const Breakdown& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 127"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos) << e.what();
  }
}

/// Processes of group `g` that are not zombies, read from /proc/*/stat.
int live_in_group(pid_t g) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    n += pgrp == g && state != 'Z';
  }
  return n;
}

TEST_F(Misbehaving, NoProcessIsLeftBehind) {
  // The shell forks the sampler (no exec), so two processes: both must go.
  const fs::path pids = fs::temp_directory_path() / ("raceoracle_pids_" + std::to_string(getpid()));
  SamplerSpec s = spec("hang", 0.5);
  s.command = "echo $$ > " + pids.string() + "; " + misbehaving("hang") + "; echo unreachable";
  {
    ExternalSampler x(s);
    first_request(x);  // times out; the group is killed
  }
  std::ifstream in(pids);
  pid_t shell = 0;
  in >> shell;
  fs::remove(pids);
  ASSERT_GT(shell, 0);
  // A zombie awaiting its reaper (the orphaned python's is init) counts as gone.
  for (int i = 0; i < 100 && live_in_group(shell) > 0; ++i) usleep(20000);
  EXPECT_EQ(live_in_group(shell), 0) << "a process of the sampler's group " << shell << " is still alive";
}

TEST_F(Misbehaving, ACorrectlyBehavedReplyGivesTokens) {
  ExternalSampler x(spec("zeros"));
  EXPECT_EQ(x.name(), "misbehaving-zeros");
  const subject::KernelRun r = x.run(subject::Batch::make(4, 9));
  ASSERT_TRUE(r.status.ok) << r.status.message;
  EXPECT_EQ(r.tokens, (std::vector<std::int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(x.take_breakdown(), "");
}

TEST_F(Misbehaving, AVerifyStepServesVerifyRequestsAndNoRaces) {
  ExternalSampler v(spec("verify_zeros"));
  ASSERT_TRUE(v.serves_verify());
  std::vector<std::int32_t> ids;
  const kernels::Status s = v.run_verify(small_verify_batch(), ids);
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(ids, std::vector<std::int32_t>(6, 0));  // [2, k + 1]
  const subject::KernelRun race = v.run(subject::Batch::make(2, 7));
  EXPECT_FALSE(race.status.ok);
  EXPECT_NE(race.status.message.find("verify step"), std::string::npos) << race.status.message;
  // A race sampler is asked no verify request.
  ExternalSampler x(spec("zeros"));
  EXPECT_FALSE(x.serves_verify());
  EXPECT_FALSE(x.run_verify(small_verify_batch(), ids).ok);
  EXPECT_EQ(x.take_breakdown(), "");
}

TEST_F(Misbehaving, AVerifyReplyOfTheWrongShapeIsNamed) {
  ExternalSampler v(spec("verify_flat"));
  std::vector<std::int32_t> ids;
  EXPECT_FALSE(v.run_verify(small_verify_batch(), ids).ok);
  const std::string why = v.take_breakdown();
  EXPECT_NE(why.find("tokens shape [2], expected [2, 3]"), std::string::npos) << why;
}

}  // namespace
}  // namespace raceoracle::protocol
