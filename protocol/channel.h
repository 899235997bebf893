#pragma once
/// The pipes to one sampler process: raceoracle writes messages to its stdin
/// and reads messages from its stdout, each a safetensors document
/// (docs/SAMPLER_PROTOCOL.md). The process runs `/bin/sh -c CMD` in a process
/// group of its own, its stderr passed through (the last lines kept for
/// reports); a timeout, a crash or garbage on stdout kills the whole group.
/// A channel may instead attach to descriptors a caller already holds (the
/// Python package serves a sampler from its own process that way).
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/safetensors.h"

namespace raceoracle::protocol {

/// A sampler that failed as a process, not as an answer: it could not start,
/// exited or crashed, hung past its timeout, wrote garbage or broke the protocol.
struct Breakdown : std::runtime_error {
  enum class Kind { start_failed, exited, crashed, timed_out, garbage, protocol };
  Kind kind;
  Breakdown(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
};
const char* to_string(Breakdown::Kind k);  ///< "exited", "crashed", "hung", ...

/// Limits on what a sampler may send: a header larger than this is garbage.
inline constexpr std::uint64_t kMaxHeaderBytes = 1 << 20;
inline constexpr std::uint64_t kMaxReplyDataBytes = std::uint64_t(1) << 30;

struct Piece {
  const void* data;
  std::size_t bytes;
};

class Channel {
 public:
  /// Starts `command` through /bin/sh -c, environment inherited. Throws Breakdown(start_failed).
  static std::unique_ptr<Channel> spawn(const std::string& command);
  /// Talks over descriptors the caller set up: requests to `write_fd`, replies from `read_fd`.
  static std::unique_ptr<Channel> attach(int read_fd, int write_fd);
  ~Channel();  ///< EOF to the sampler, a short wait for it to end, then the group killed
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  /// Sends one message (header bytes then data pieces) and reads one back,
  /// both before `timeout_s` passes. Throws Breakdown; the channel is then dead.
  Safetensors exchange(const std::string& header, const std::vector<Piece>& data, double timeout_s);
  /// The sampler's last stderr lines (spawned channels only), newest last,
  /// after reading whatever it has written so far.
  std::string stderr_tail();
  bool alive() const { return alive_; }

 private:
  Channel() = default;
  void pump(const std::vector<Piece>& out, std::size_t inbox_needed, double deadline);
  void drain_stderr();
  [[noreturn]] void fail(Breakdown::Kind k, const std::string& what);
  /// After its stdin or stdout (`end`) closed: how the sampler ended (crashed,
  /// exited, or only closed that end), as a Breakdown; `when` ends the sentence.
  [[noreturn]] void fail_ended(const char* end, const std::string& when);
  /// The sampler's process ended with wait status `status`: a crash or an exit, as a Breakdown.
  [[noreturn]] void fail_status(int status, const std::string& when, const std::string& note = "");
  void terminate();

  pid_t pid_ = -1;  ///< also its process group; -1 when attached
  std::string marker_;  ///< the environment entry every process it starts inherits (io::marked_environment)
  int to_ = -1, from_ = -1, err_ = -1;
  bool owns_fds_ = true, alive_ = true;
  /// Its process exited (reaped, status kept) while a process it started still
  /// holds the pipes: reported once what it wrote before exiting is read.
  bool exited_ = false;
  int exit_status_ = 0;
  std::string inbox_;
  std::string err_partial_;
  std::deque<std::string> err_lines_;
};

}  // namespace raceoracle::protocol
