#pragma once
/// A sampler outside raceoracle, behind the sampler protocol
/// (docs/SAMPLER_PROTOCOL.md), as a subject the laws can judge: each run
/// sends one request (the batch's logits, noise, temperatures and constants)
/// and reads the tokens back. A sampler that breaks down (crashes, exits,
/// hangs, writes garbage, replies with the wrong shape, dtype or id) is named
/// and killed; the next run starts it again.
#include <functional>
#include <memory>
#include <string>

#include "subject/subject.h"
#include "subject/verify_batch.h"
#include "protocol/channel.h"
#include "protocol/contract_fields.h"

namespace raceoracle::protocol {

/// Version 2 adds drawn-noise streams (a hello's `noise_stream`, a request's
/// `seeds` and `offsets`, a reply's echoed `noise`); version 1 is still served.
inline constexpr const char* kProtocolVersion = "2";
inline constexpr const char* kProtocolVersions[] = {"1", "2"};

/// A hello reply, read: the sampler's name and its contract.
struct SamplerHello {
  std::string name;
  oracle::NumericsContract contract;  ///< with the stream's noise terms when it draws
  std::optional<race::NoiseStream> stream;
  /// `randomness = own`: it draws from an RNG of its own, which raceoracle
  /// cannot replay; it serves draws requests, judged by their frequencies.
  bool own_randomness = false;
  /// `step = verify`: it is a speculative-decoding verify step (SPEC §11) and
  /// serves verify requests, judged by the verify laws; `uniform_compare` its rule.
  bool verify = false;
  race::VerifyRules rules;
};
/// Reads the handshake's reply, `overrides` applied to the contract. Throws
/// Breakdown (kind protocol) for a reply that is no hello of this protocol
/// version or names no sampler; std::invalid_argument for a malformed contract.
SamplerHello read_hello(const Safetensors& reply, const ContractOverrides& overrides);

/// A reply to request `id` on `rows` rows, read: tokens, an error the sampler
/// raised (an answer: judged like a wrong token), a token past 32 bits (a
/// wrong answer the judge cannot hold as an id: `wrong`, its value named), or
/// a violation of the protocol (the sampler is out of step and must be restarted).
struct Reply {
  enum class Kind { tokens, error, wrong, violation } kind = Kind::violation;
  std::vector<std::int32_t> tokens;
  std::string message;  ///< error: the sampler's message; wrong: which token; violation: what is wrong
  std::vector<float> noise;  ///< the noise it echoes having drawn ([rows, V] F32 or BF16), when it does
  std::vector<std::int64_t> wide_tokens;  ///< a draws request's [rows, draws] tokens, as sent
};
/// `columns` > 0: tokens [rows, columns], kept in `wide_tokens` as sent (a
/// draws request's n a row, a verify request's k + 1 a request).
Reply read_reply(const Safetensors& reply, std::uint64_t id, std::int64_t rows, std::int64_t vocab, std::int64_t columns = 0);

/// How to reach a sampler: the command line's `--sampler`, `--sampler-fds`,
/// `--sampler-timeout` and the contract overrides.
struct SamplerSpec {
  std::string command;              ///< run through /bin/sh -c
  int read_fd = -1, write_fd = -1;  ///< or a sampler already serving on these descriptors
  double timeout_s = 60;            ///< per request, the handshake included
  ContractOverrides overrides;      ///< terms that override the sampler's own
  /// Judge by SPEC §1 alone, whatever conventions the sampler declares (they are still reported).
  bool definition = false;
  bool given() const { return !command.empty() || read_fd >= 0; }
};
/// `--sampler-fds IN,OUT` read into `spec`; std::invalid_argument saying what
/// is wrong (not two numbers, or one of raceoracle's own stdio descriptors).
void parse_sampler_fds(const std::string& text, SamplerSpec& spec);

/// A sampler behind the protocol: a race sampler, or (its hello says `step =
/// verify`) a verify step, which serves only verify requests.
class ExternalSampler final : public subject::Subject, public subject::ExternalVerifyStep {
 public:
  /// Starts the sampler and shakes hands. Throws Breakdown when it cannot,
  /// std::invalid_argument when its contract (or an override) is malformed.
  explicit ExternalSampler(SamplerSpec spec);
  ~ExternalSampler() override;

  const std::string& name() const override { return name_; }
  oracle::NumericsContract contract() const override;
  race::Conventions declared_conventions() const override { return contract_.conventions; }
  std::optional<race::NoiseStream> noise_stream() const override { return stream_; }
  const kernels::Kernel* kernel() const override { return nullptr; }
  subject::KernelRun run(const subject::Batch& b, const kernels::RunOptions& o = {}) const override;
  std::string take_breakdown() const override;
  std::string replay_args() const override;
  bool serves_verify() const { return verify_; }
  race::VerifyRules verify_rules() const override { return rules_; }
  kernels::Status run_verify(const subject::VerifyBatch& b, std::vector<std::int32_t>& ids) const override;

  const SamplerSpec& spec() const { return spec_; }
  int starts() const { return starts_; }  ///< 1 + restarts after breakdowns
  bool own_randomness() const { return own_randomness_; }
  /// A draws request: `n` tokens per row of `b`, each row's RNG seeded by
  /// seeds[row]; `tokens` gets them row-major. Only for own randomness.
  kernels::Status draw(const subject::Batch& b, const std::vector<std::uint64_t>& seeds, std::int64_t n,
                       std::vector<std::int64_t>& tokens) const;

 private:
  SamplerHello start() const;  ///< (re)starts the process and shakes hands
  using Encoder = std::function<std::string(std::uint64_t id, std::vector<Piece>&, std::vector<std::vector<unsigned char>>&)>;
  /// Sends the request `encode` writes and reads its reply into `r`; a
  /// breakdown is named, kept for take_breakdown() and the sampler killed.
  kernels::Status exchange(const Encoder& encode, std::int64_t rows, std::int64_t vocab, std::int64_t draws, Reply& r) const;
  SamplerSpec spec_;
  std::string name_;
  oracle::NumericsContract contract_;
  std::optional<race::NoiseStream> stream_;
  bool own_randomness_ = false;
  bool verify_ = false;
  race::VerifyRules rules_;
  mutable std::unique_ptr<Channel> channel_;
  mutable std::string breakdown_, last_breakdown_;
  mutable std::uint64_t next_id_ = 1;
  mutable int starts_ = 0;
};

/// The request message for `b` (rows packed): header bytes and data pieces,
/// which point into `b` or into `scratch`. Drawn noise goes as `seeds` and
/// `offsets` [rows] U64 in place of the `noise` tensor; row filters (SPEC §9)
/// as `top_k` I32, `top_p` and `min_p` F32, each [rows].
std::string encode_request(const subject::Batch& b, std::uint64_t id, std::vector<Piece>& data,
                           std::vector<std::vector<unsigned char>>& scratch);

/// A draws request for `b` (docs/SAMPLER_PROTOCOL.md): logits, temperatures,
/// filters, `seeds` [rows] U64; metadata `draws` = n.
std::string encode_draws_request(const subject::Batch& b, const std::vector<std::uint64_t>& seeds, std::int64_t n,
                                 std::uint64_t id, std::vector<Piece>& data, std::vector<std::vector<unsigned char>>& scratch);

/// A verify request for `b` (docs/SAMPLER_PROTOCOL.md): the tensors of a
/// verify-step file less `tokens`, under the same names (the requests'
/// filters as `top_k`, `top_p`, `min_p` [R], packed into `scratch`); reply tokens [R, k + 1].
std::string encode_verify_request(const subject::VerifyBatch& b, std::uint64_t id, std::vector<Piece>& data,
                                  std::vector<std::vector<unsigned char>>& scratch);

/// Shell quoting for a replay line: 'text' with embedded quotes escaped.
/// Text a sampler sent (its name, an error message) as it may be printed:
/// control characters (ESC, CR, C1 controls: a terminal's escape sequences)
/// as \xNN, each newline as \n (`one_line`) or followed by an indent, so it
/// can never print a line of its own (a fake "verdict: PASS"); at most about
/// `max` bytes, then "...".
std::string terminal_safe(const std::string& s, bool one_line, std::size_t max = 4096);
std::string shell_quote(const std::string& s);

/// The first id whose echoed noise lies outside the stream's transform bound
/// around `b`'s (the oracle's replay), described; empty when all lie inside.
std::string echo_mismatch(const subject::Batch& b, const std::vector<float>& echo, const oracle::NumericsContract& c);

}  // namespace raceoracle::protocol
