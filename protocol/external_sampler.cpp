#include "protocol/external_sampler.h"

#include <fmt/format.h>

#include "oracle/error_model.h"
#include "oracle/noise_streams.h"
#include "protocol/contract_fields.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace raceoracle::protocol {
namespace {

/// `rows` rows of `row_bytes` each, `stride_bytes` apart: a pointer to them
/// packed (no copy when they already are).
Piece packed(const void* base, std::int64_t rows, std::size_t row_bytes, std::size_t stride_bytes,
             std::vector<std::vector<unsigned char>>& scratch) {
  if (stride_bytes == row_bytes || rows == 1) return {base, std::size_t(rows) * row_bytes};
  auto& buf = scratch.emplace_back(std::size_t(rows) * row_bytes);
  for (std::int64_t r = 0; r < rows; ++r)
    std::memcpy(buf.data() + std::size_t(r) * row_bytes, static_cast<const unsigned char*>(base) + std::size_t(r) * stride_bytes,
                row_bytes);
  return {buf.data(), buf.size()};
}

std::string field(const Safetensors& m, const std::string& key) {
  auto it = m.metadata.find(key);
  return it == m.metadata.end() ? std::string() : it->second;
}

}  // namespace

std::string terminal_safe(const std::string& s, bool one_line, std::size_t max) {
  std::string out;
  std::size_t i = 0;
  for (; i < s.size() && out.size() < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const bool c1 = c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(s[i + 1]) <= 0x9F;  // U+0080..U+009F in UTF-8
    if (c == '\n') out += one_line ? "\\n" : "\n    ";
    else if (c1) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[++i]));
    else if (c < 0x20 || c == 0x7F) out += fmt::format("\\x{:02x}", c);
    else out += char(c);
  }
  return i < s.size() ? out + "..." : out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {
/// The first of `tokens` ([rows, columns], or [rows] when columns is 0) that
/// no 32-bit id holds, named with its true value; empty when there is none.
/// The judges hold ids in 32 bits: a clamp would report another number.
std::string id_past_32_bits(const std::vector<std::int64_t>& tokens, std::int64_t columns, std::int64_t vocab) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::int64_t v = tokens[i];
    if (v >= INT32_MIN && v <= INT32_MAX) continue;
    const std::string where = columns > 0 ? fmt::format("request {}, position {}", i / std::size_t(columns), i % std::size_t(columns))
                                          : fmt::format("row {}", i);
    return fmt::format("{}: token {} is OUT-OF-RANGE [0, {}) (past 32 bits)", where, v, vocab);
  }
  return {};
}

/// Each row's (or request's) filters, when there are any, as `top_k` I32,
/// `top_p` and `min_p` F32, each [filters.size()], packed into `scratch`.
void add_filters(const std::vector<race::RowFilter>& filters, std::vector<Piece>& data,
                 std::vector<std::vector<unsigned char>>& scratch, std::vector<TensorRef>& refs) {
  if (filters.empty()) return;
  const std::int64_t rows = std::int64_t(filters.size());
  const std::size_t n = std::size_t(rows) * 4;
  unsigned char* p = scratch.emplace_back(3 * n).data();
  for (std::int64_t r = 0; r < rows; ++r) {
    const race::RowFilter& f = filters[std::size_t(r)];
    std::memcpy(p + 4 * r, &f.top_k, 4);
    std::memcpy(p + n + 4 * r, &f.top_p, 4);
    std::memcpy(p + 2 * n + 4 * r, &f.min_p, 4);
  }
  for (int k = 0; k < 3; ++k) data.push_back({p + k * n, n});
  refs.push_back({"top_k", "I32", {rows}, p, n});
  refs.push_back({"top_p", "F32", {rows}, p + n, n});
  refs.push_back({"min_p", "F32", {rows}, p + 2 * n, n});
}

/// What every request carries: the logits (rows packed), the temperatures
/// and, when any row has them, the rows' filters (SPEC §9) as `top_k` I32,
/// `top_p` and `min_p` F32, each [rows].
std::vector<TensorRef> encode_inputs(const subject::Batch& b, std::vector<Piece>& data,
                                     std::vector<std::vector<unsigned char>>& scratch) {
  const std::size_t esize = oracle::size_of(b.dtype), V = std::size_t(b.vocab);
  data = {packed(b.storage(), b.rows, V * esize, std::size_t(b.logit_stride) * esize, scratch),
          {b.temperatures.data(), std::size_t(b.rows) * 4}};
  std::vector<TensorRef> refs{
      {"logits", b.dtype == oracle::Dtype::bf16 ? "BF16" : "F32", {b.rows, b.vocab}, data[0].data, data[0].bytes},
      {"temperatures", "F32", {b.rows}, data[1].data, data[1].bytes}};
  add_filters(b.filters, data, scratch, refs);
  return refs;
}

Fields request_fields(const char* type, const subject::Batch& b, std::uint64_t id) {
  return {{"type", type},
          {"id", std::to_string(id)},
          {"eps", fmt::format("{:.9g}", b.eps)},
          {"greedy_eps", fmt::format("{:.9g}", b.greedy_eps)}};
}
}  // namespace

std::string encode_request(const subject::Batch& b, std::uint64_t id, std::vector<Piece>& data,
                           std::vector<std::vector<unsigned char>>& scratch) {
  std::vector<TensorRef> refs = encode_inputs(b, data, scratch);
  const std::int64_t noise_rows = b.noise_stride == 0 ? 1 : b.rows;
  if (b.drawn()) {
    data.push_back({b.seeds.data(), std::size_t(b.rows) * 8});
    refs.push_back({"seeds", "U64", {b.rows}, data.back().data, data.back().bytes});
    data.push_back({b.offsets.data(), std::size_t(b.rows) * 8});
    refs.push_back({"offsets", "U64", {b.rows}, data.back().data, data.back().bytes});
  } else {
    data.push_back(packed(b.noise.data(), noise_rows, std::size_t(b.vocab) * 4, std::size_t(b.noise_stride) * 4, scratch));
    refs.push_back({"noise", "F32", {noise_rows, b.vocab}, data.back().data, data.back().bytes});
  }
  return encode_header(refs, request_fields("sample", b, id));
}

std::string encode_draws_request(const subject::Batch& b, const std::vector<std::uint64_t>& seeds, std::int64_t n,
                                 std::uint64_t id, std::vector<Piece>& data, std::vector<std::vector<unsigned char>>& scratch) {
  if (std::int64_t(seeds.size()) != b.rows) throw std::invalid_argument("a draws request needs one seed a row");
  std::vector<TensorRef> refs = encode_inputs(b, data, scratch);
  data.push_back({seeds.data(), std::size_t(b.rows) * 8});
  refs.push_back({"seeds", "U64", {b.rows}, data.back().data, data.back().bytes});
  Fields f = request_fields("draws", b, id);
  f["draws"] = std::to_string(n);
  return encode_header(refs, f);
}

ExternalSampler::ExternalSampler(SamplerSpec spec) : spec_(std::move(spec)) {
  if (!(spec_.timeout_s > 0)) throw std::invalid_argument("--sampler-timeout must be > 0 seconds");
  const SamplerHello h = start();
  name_ = h.name;
  contract_ = h.contract;
  stream_ = h.stream;
  own_randomness_ = h.own_randomness;
  verify_ = h.verify;
  rules_ = h.rules;
}

ExternalSampler::~ExternalSampler() = default;

SamplerHello read_hello(const Safetensors& reply, const ContractOverrides& overrides) {
  const std::string type = field(reply, "type"), version = field(reply, "protocol");
  if (type != "hello")
    throw Breakdown(Breakdown::Kind::protocol,
                    "the sampler answered the handshake with a message of type '" + type + "', not 'hello'");
  if (std::find(std::begin(kProtocolVersions), std::end(kProtocolVersions), version) == std::end(kProtocolVersions))
    throw Breakdown(Breakdown::Kind::protocol, fmt::format("the sampler speaks protocol version '{}'; this raceoracle "
                                                           "speaks versions 1 and {}",
                                                           version, kProtocolVersion));
  const std::string name = field(reply, "name");
  if (name.empty())  // also what a sampler that echoes its input (`cat`) sends back
    throw Breakdown(Breakdown::Kind::protocol, "the sampler's hello reply names no sampler ('name' is required)");
  try {
    std::vector<std::string> other{"type", "protocol", "name"};
    for (FieldGroup g : {FieldGroup::hello, FieldGroup::stream})
      for (const std::string& n : schema_names(g)) other.push_back(n);
    refuse_unknown_fields(reply.metadata, other);
    oracle::NumericsContract c = apply(overrides, parse_contract(reply.metadata));
    require_tensor_noise_exact(c);  // its noise terms are its stream's, never declared
    const std::optional<race::NoiseStream> stream = parse_stream(reply.metadata);
    if (stream && version == "1")
      throw std::invalid_argument("'noise_stream' needs protocol version 2 (version 1 sends noise tensors)");
    if (stream) c = with_stream_noise(c, *stream);
    const std::string randomness = field(reply, "randomness");
    if (!randomness.empty() && word_index(words::randomness, randomness) < 0)
      throw std::invalid_argument("'randomness' = '" + randomness + "': must be 'given' (it reads the request's noise) "
                                  "or 'own' (it draws its own, and serves draws requests)");
    const bool own = word_index(words::randomness, randomness) == 1;
    if (own && (stream || version == "1"))
      throw std::invalid_argument(stream ? "'randomness' = 'own' and a 'noise_stream': a sampler draws from one or the other"
                                         : "'randomness' needs protocol version 2");
    const std::string step = field(reply, "step");
    if (!step.empty() && word_index(words::step, step) < 0)
      throw std::invalid_argument("'step' = '" + step + "': must be 'sample' (a race sampler, the default) or 'verify' "
                                  "(a speculative-decoding verify step, SPEC §11)");
    const bool verify = word_index(words::step, step) == 1;
    if (const std::string inputs = field(reply, "inputs"); !inputs.empty() && word_index(words::inputs, inputs) < 0)
      throw std::invalid_argument("'inputs' = '" + inputs + "': must be 'kept' (the arrays it is handed are left as they "
                                  "were, the default) or 'consumed' (it may overwrite them)");
    if (!verify && reply.metadata.count(kUniformCompareField))
      throw std::invalid_argument("'uniform_compare' is a verify step's rule: it needs 'step' = 'verify'");
    if (verify && (stream || own || version == "1"))
      throw std::invalid_argument(version == "1" ? "'step' = 'verify' needs protocol version 2"
                                                 : "a verify step reads the request's uniforms and noise: it declares "
                                                   "no 'noise_stream' and no 'randomness' = 'own'");
    // one line: the name heads rows of every report
    return {terminal_safe(name, true, 200), c, stream, own, verify, parse_verify_rules(reply.metadata)};
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("the sampler's contract: ") + e.what());
  }
}

Reply read_reply(const Safetensors& reply, std::uint64_t id, std::int64_t rows, std::int64_t vocab, std::int64_t columns) {
  const std::string type = field(reply, "type"), got_id = field(reply, "id");
  auto violation = [](std::string what) { return Reply{Reply::Kind::violation, {}, std::move(what)}; };
  if (got_id != std::to_string(id)) return violation(fmt::format("reply id '{}' is not the request's", got_id));
  if (type == "error") return Reply{Reply::Kind::error, {}, field(reply, "message")};
  if (type != "tokens") return violation("reply type '" + type + "', expected 'tokens' or 'error'");
  auto it = reply.tensors.find("tokens");
  if (it == reply.tensors.end()) return violation("the reply has no 'tokens' tensor");
  const Tensor& t = it->second;
  if (t.dtype != "I32" && t.dtype != "I64") return violation("tokens dtype " + t.dtype + ", expected I32 or I64");
  const std::vector<std::int64_t> want = columns > 0 ? std::vector<std::int64_t>{rows, columns} : std::vector<std::int64_t>{rows};
  if (t.shape != want)
    return violation(fmt::format("tokens shape {}, expected {}", shape_string(t.shape), shape_string(want)));
  Reply out{Reply::Kind::tokens, {}, {}};
  const std::vector<std::int64_t> tokens = t.as_i64();
  if (columns > 0) {  // the frequency law and the verify laws read them as they are
    out.wide_tokens = tokens;
    return out;
  }
  if (std::string wide = id_past_32_bits(tokens, 0, vocab); !wide.empty()) return Reply{Reply::Kind::wrong, {}, std::move(wide)};
  out.tokens.assign(tokens.begin(), tokens.end());
  if (auto n = reply.tensors.find("noise"); n != reply.tensors.end()) {
    if (columns > 0) return violation("a reply to a draws or verify request echoes no noise");
    if (n->second.dtype != "F32" && n->second.dtype != "BF16")
      return violation("echoed noise dtype " + n->second.dtype + ", expected F32 or BF16");
    if (n->second.shape != std::vector<std::int64_t>{rows, vocab})
      return violation(fmt::format("echoed noise shape {}, expected [{}, {}]", shape_string(n->second.shape), rows, vocab));
    out.noise = n->second.as_f32();
  }
  return out;
}

SamplerHello ExternalSampler::start() const {
  ++starts_;
  channel_ = spec_.read_fd >= 0 ? Channel::attach(spec_.read_fd, spec_.write_fd) : Channel::spawn(spec_.command);
  const std::string hello = encode_header({}, {{"type", "hello"}, {"protocol", kProtocolVersion}});
  const Safetensors reply = channel_->exchange(hello, {}, spec_.timeout_s);
  try {
    return read_hello(reply, spec_.overrides);
  } catch (...) {
    channel_.reset();
    throw;
  }
}

void parse_sampler_fds(const std::string& text, SamplerSpec& spec) {
  const auto comma = text.find(',');
  try {
    if (comma == std::string::npos) throw std::invalid_argument("no comma");
    std::size_t used = 0;
    spec.read_fd = std::stoi(text.substr(0, comma), &used);
    if (used != comma) throw std::invalid_argument("trailing text");
    spec.write_fd = std::stoi(text.substr(comma + 1), &used);
    if (used != text.size() - comma - 1) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw std::invalid_argument("--sampler-fds '" + text + "': expected IN,OUT (two descriptor numbers)");
  }
  if (spec.read_fd < 3 || spec.write_fd < 3)
    throw std::invalid_argument("--sampler-fds '" + text + "': descriptors 0-2 are raceoracle's own stdio");
}

std::string ExternalSampler::take_breakdown() const {
  std::string b;
  b.swap(breakdown_);
  return b;
}

oracle::NumericsContract ExternalSampler::contract() const {
  oracle::NumericsContract c = contract_;
  if (spec_.definition) c.conventions = {};
  return c;
}

std::string ExternalSampler::replay_args() const {
  std::string s = spec_.read_fd >= 0 ? "--sampler '<your sampler command>'" : "--sampler " + shell_quote(spec_.command);
  return s + override_flags(spec_.overrides) + (spec_.definition ? " --definition" : "");
}

std::string echo_mismatch(const subject::Batch& b, const std::vector<float>& echo, const oracle::NumericsContract& c) {
  std::vector<float> row(std::size_t(b.vocab));
  for (std::int64_t r = 0; r < b.rows; ++r) {
    // The stream replayed afresh: a law may have written over a greedy row's noise.
    if (b.drawn()) oracle::stream_noise_row(b.stream, {b.seeds[std::size_t(r)], b.offsets[std::size_t(r)], b.rows, b.vocab, r}, row.data());
    else for (std::int64_t i = 0; i < b.vocab; ++i) row[std::size_t(i)] = b.e(r, i);
    for (std::int64_t i = 0; i < b.vocab; ++i) {
      const double want = row[std::size_t(i)], got = echo[std::size_t(r * b.vocab + i)];
      const double allowed = c.noise_ulp * 0x1p-23 * want + oracle::noise_abs_of(want, c);
      if (std::abs(got - want) <= allowed) continue;
      const std::string from = b.drawn() ? fmt::format("{} (seed {}, offset {})", oracle::describe(b.stream), b.seeds[std::size_t(r)],
                                                       b.offsets[std::size_t(r)])
                                         : std::string("the request's noise tensor");
      return fmt::format("row {} id {}: it echoes E = {:.9g}, {} gives {:.9g} (allowed {:.3g} apart)", r, i, got, from, want,
                         allowed);
    }
  }
  return {};
}

subject::KernelRun ExternalSampler::run(const subject::Batch& b, const kernels::RunOptions&) const {
  subject::KernelRun out;
  if (verify_) {
    out.status = kernels::Status::error("the sampler is a verify step (step = verify): it serves verify requests, not races");
    return out;
  }
  if (own_randomness_) {
    out.status = kernels::Status::error("the sampler draws its own randomness: its tokens cannot be judged on given noise "
                                        "(`raceoracle frequency` judges their frequencies)");
    return out;
  }
  if (stream_ && (!b.drawn() || b.stream != *stream_)) {
    out.status = kernels::Status::error(fmt::format("the sampler draws {} but this batch carries {}: it cannot be judged on it",
                                                    oracle::describe(*stream_),
                                                    b.drawn() ? oracle::describe(b.stream) : std::string("a noise tensor")));
    return out;
  }
  Reply r;
  out.status = exchange([&](std::uint64_t id, std::vector<Piece>& data, std::vector<std::vector<unsigned char>>& scratch) {
    return encode_request(b, id, data, scratch);
  }, b.rows, b.vocab, 0, r);
  if (!out.status.ok) return out;
  out.tokens = r.tokens;
  if (!r.noise.empty()) {
    if (const std::string bad = echo_mismatch(b, r.noise, contract_); !bad.empty())
      out.status = kernels::Status::error("the noise the sampler echoes is not what it declared: " + bad);
    else
      out.echoed_noise = r.noise;
  }
  return out;
}

std::string encode_verify_request(const subject::VerifyBatch& b, std::uint64_t id, std::vector<Piece>& data,
                                  std::vector<std::vector<unsigned char>>& scratch) {
  const std::int64_t R = b.requests, k = b.drafts, V = b.vocab;
  std::vector<TensorRef> refs;
  data.clear();
  auto add = [&](const char* name, const char* dtype, std::vector<std::int64_t> shape, const void* p, std::size_t bytes) {
    data.push_back({p, bytes});
    refs.push_back({name, dtype, std::move(shape), p, bytes});
  };
  const std::size_t rows = std::size_t(R * (k + 1) * V);
  if (b.dtype == oracle::Dtype::bf16) add("target_logits", "BF16", {R, k + 1, V}, b.target_bf16.data(), rows * 2);
  else add("target_logits", "F32", {R, k + 1, V}, b.target_f32.data(), rows * 4);
  add("draft_ids", "I32", {R, k}, b.draft_ids.data(), b.draft_ids.size() * 4);
  if (!b.draft_counts.empty()) add("draft_counts", "I32", {R}, b.draft_counts.data(), b.draft_counts.size() * 4);
  if (!b.draft_probs.empty()) add("draft_probs", "F32", {R, k, V}, b.draft_probs.data(), b.draft_probs.size() * 4);
  add("uniforms", "F64", {R, k}, b.uniforms.data(), b.uniforms.size() * 8);
  add("recovery_noise", "F32", {R, V}, b.recovery_noise.data(), b.recovery_noise.size() * 4);
  add("bonus_noise", "F32", {R, V}, b.bonus_noise.data(), b.bonus_noise.size() * 4);
  add("temperatures", "F32", {R}, b.temperatures.data(), b.temperatures.size() * 4);
  add_filters(b.filters, data, scratch, refs);
  return encode_header(refs, {{"type", "verify"},
                              {"id", std::to_string(id)},
                              {"eps", fmt::format("{:.9g}", b.constants.eps)},
                              {"greedy_eps", fmt::format("{:.9g}", b.constants.greedy_eps)}});
}

kernels::Status ExternalSampler::run_verify(const subject::VerifyBatch& b, std::vector<std::int32_t>& ids) const {
  if (!verify_)
    return kernels::Status::error("the sampler is a race sampler: it serves no verify requests (a verify step's hello "
                                  "says step = verify)");
  Reply r;
  const kernels::Status s = exchange([&](std::uint64_t id, std::vector<Piece>& data, std::vector<std::vector<unsigned char>>& scratch) {
    return encode_verify_request(b, id, data, scratch);
  }, b.requests, b.vocab, b.drafts + 1, r);
  if (!s.ok) return s;
  if (const std::string wide = id_past_32_bits(r.wide_tokens, b.drafts + 1, b.vocab); !wide.empty())
    return kernels::Status::error("the sampler returned " + wide);
  ids.assign(r.wide_tokens.begin(), r.wide_tokens.end());
  return s;
}

kernels::Status ExternalSampler::draw(const subject::Batch& b, const std::vector<std::uint64_t>& seeds, std::int64_t n,
                                      std::vector<std::int64_t>& tokens) const {
  if (!own_randomness_)
    return kernels::Status::error("the sampler did not declare randomness = own: it serves no draws requests");
  Reply r;
  const kernels::Status s = exchange([&](std::uint64_t id, std::vector<Piece>& data, std::vector<std::vector<unsigned char>>& scratch) {
    return encode_draws_request(b, seeds, n, id, data, scratch);
  }, b.rows, b.vocab, n, r);
  if (s.ok) tokens.assign(r.wide_tokens.begin(), r.wide_tokens.end());
  return s;
}

kernels::Status ExternalSampler::exchange(const Encoder& encode, std::int64_t rows, std::int64_t vocab, std::int64_t draws,
                                          Reply& r) const {
  auto broke = [&](const std::string& why) {
    breakdown_ = last_breakdown_ = why;
    return kernels::Status::error(why);
  };
  try {
    if (!channel_ || !channel_->alive()) {
      if (spec_.read_fd >= 0 && starts_ > 0 && !last_breakdown_.empty())
        return broke("the sampler served on file descriptors cannot be restarted after: " + last_breakdown_);
      start();
    }
    const std::uint64_t id = next_id_++;
    std::vector<Piece> data;
    std::vector<std::vector<unsigned char>> scratch;
    const std::string header = encode(id, data, scratch);
    const Safetensors reply = channel_->exchange(header, data, spec_.timeout_s);
    r = read_reply(reply, id, rows, vocab, draws);
    if (r.kind == Reply::Kind::violation) {
      std::string why = fmt::format("the sampler broke the protocol: {} (request id {})", r.message, id);
      if (const std::string tail = channel_->stderr_tail(); !tail.empty())
        why += "\n  the sampler's last stderr lines:\n" + tail;
      channel_.reset();  // a sampler out of step cannot be trusted with the next request
      return broke(why);
    }
    if (r.kind == Reply::Kind::error)  // the sampler raised on these inputs: an answer about them, judged like a wrong token
      return kernels::Status::error("the sampler reported an error: " + terminal_safe(r.message, false));
    if (r.kind == Reply::Kind::wrong) return kernels::Status::error("the sampler returned " + r.message);
  } catch (const Breakdown& e) {
    channel_.reset();
    return broke(fmt::format("the sampler {}: {}", to_string(e.kind), e.what()));
  } catch (const std::exception& e) {  // a restart whose handshake is malformed
    channel_.reset();
    return broke(e.what());
  }
  return {};
}

}  // namespace raceoracle::protocol
