#include "protocol/channel.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "io/children.h"

namespace raceoracle::protocol {
namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void ignore_sigpipe_once() {
  static std::once_flag once;
  // A sampler that dies mid-request is an EPIPE to report, not our death.
  std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/// Large batches cross in fewer, larger writes (the default pipe holds 64 KiB).
void widen_pipe(int fd) {
#ifdef F_SETPIPE_SZ
  fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
}

bool looks_like_text(const std::string& s) {
  const std::size_t n = std::min<std::size_t>(s.size(), 8);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
    if (c >= 0x7F) return false;
  }
  return n > 0;
}

std::string printable(const std::string& s, std::size_t max = 60) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') out += "\\n";
    else if (c >= 0x20 && c < 0x7F) out += char(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  return s.size() > max ? out + "..." : out;
}

}  // namespace

const char* to_string(Breakdown::Kind k) {
  switch (k) {
    case Breakdown::Kind::start_failed: return "failed to start";
    case Breakdown::Kind::exited: return "exited early";
    case Breakdown::Kind::crashed: return "crashed";
    case Breakdown::Kind::timed_out: return "hung";
    case Breakdown::Kind::garbage: return "wrote garbage";
    case Breakdown::Kind::protocol: return "broke the protocol";
  }
  return "?";
}

std::unique_ptr<Channel> Channel::spawn(const std::string& command) {
  ignore_sigpipe_once();
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    throw Breakdown(Breakdown::Kind::start_failed, std::string("pipe: ") + std::strerror(errno));
  widen_pipe(in[1]);
  widen_pipe(out[1]);
  const pid_t parent = getpid();
  io::MarkedEnvironment env = io::marked_environment();  // made before fork: the child only execs
  const pid_t pid = fork();
  if (pid < 0) throw Breakdown(Breakdown::Kind::start_failed, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (!io::become_group_leader(parent)) _exit(1);  // raceoracle gone: so is the sampler's shell
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    signal(SIGPIPE, SIG_DFL);
    const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
    execve("/bin/sh", const_cast<char* const*>(argv), env.envp.data());
    _exit(127);
  }
  io::track_group(pid);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  std::unique_ptr<Channel> c(new Channel);
  c->pid_ = pid;
  c->marker_ = env.entry;
  c->to_ = in[1];
  c->from_ = out[0];
  c->err_ = err[0];
  for (int fd : {c->to_, c->from_, c->err_}) set_nonblocking(fd);
  return c;
}

std::unique_ptr<Channel> Channel::attach(int read_fd, int write_fd) {
  ignore_sigpipe_once();
  if (fcntl(read_fd, F_GETFD) < 0 || fcntl(write_fd, F_GETFD) < 0)
    throw Breakdown(Breakdown::Kind::start_failed,
                    fmt::format("--sampler-fds {},{}: not open file descriptors of this process", read_fd, write_fd));
  std::unique_ptr<Channel> c(new Channel);
  c->to_ = write_fd;
  c->from_ = read_fd;
  set_nonblocking(write_fd);
  set_nonblocking(read_fd);
  return c;
}

Channel::~Channel() {
  if (to_ >= 0) close(to_);  // EOF on stdin ends a sampler
  to_ = -1;
  if (pid_ > 0 && alive_) {
    // A moment to finish on its own (its stderr keeps flowing), then the group goes.
    const double until = now_s() + 2.0;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0 && now_s() < until) {
      drain_stderr();
      usleep(10000);
    }
  }
  terminate();
}

void Channel::terminate() {
  if (pid_ > 0) {
    io::kill_marked(pid_, marker_);  // what left its group (setsid, a daemon), while the leader still links them
    kill(-pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);  // reaps it unless already reaped (then ECHILD)
    io::untrack_group(pid_);
    pid_ = -1;
  }
  for (int* fd : {&to_, &from_, &err_})
    if (*fd >= 0) close(*fd), *fd = -1;
  alive_ = false;
}

std::string Channel::stderr_tail() {
  drain_stderr();
  std::string s;
  for (const auto& l : err_lines_) s += "    " + l + "\n";
  if (!err_partial_.empty()) s += "    " + err_partial_ + "\n";
  return s;
}

void Channel::drain_stderr() {
  if (err_ < 0) return;
  char buf[8192];
  for (;;) {
    const ssize_t n = read(err_, buf, sizeof buf);
    if (n == 0) {
      close(err_);
      err_ = -1;
      return;
    }
    if (n < 0) return;  // EAGAIN: nothing more now
    ssize_t off = 0;  // passed through as it comes
    while (off < n) {
      const ssize_t w = write(2, buf + off, std::size_t(n - off));
      if (w <= 0) break;
      off += w;
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        err_lines_.push_back(std::move(err_partial_));
        err_partial_.clear();
        if (err_lines_.size() > 20) err_lines_.pop_front();
      } else if (err_partial_.size() < 400) {
        err_partial_ += buf[i];
      }
    }
  }
}

void Channel::fail(Breakdown::Kind k, const std::string& what) {
  drain_stderr();
  std::string msg = what;
  const std::string tail = stderr_tail();
  if (!tail.empty()) msg += "\n  the sampler's last stderr lines:\n" + tail;
  terminate();
  throw Breakdown(k, msg);
}

void Channel::fail_ended(const char* end, const std::string& when) {
  if (pid_ <= 0) fail(Breakdown::Kind::exited, "the sampler closed the connection " + when);
  if (exited_) fail_status(exit_status_, when);
  const double until = now_s() + 2.0;
  int status = 0;
  pid_t r = 0;
  while ((r = waitpid(pid_, &status, WNOHANG)) == 0 && now_s() < until) {
    drain_stderr();
    usleep(5000);
  }
  if (r != pid_) fail(Breakdown::Kind::exited, std::string("the sampler closed ") + end + " " + when);
  fail_status(status, when);
}

void Channel::fail_status(int status, const std::string& when, const std::string& note) {
  io::untrack_group(pid_);
  kill(-pid_, SIGKILL);              // anything it left in its group,
  io::kill_marked(pid_, marker_);    // and anything it started outside it
  pid_ = -1;                         // reaped
  auto ended = [&](Breakdown::Kind k, const std::string& how) { fail(k, "the sampler " + how + " " + when + note); };
  if (WIFSIGNALED(status))
    ended(Breakdown::Kind::crashed,
          fmt::format("crashed: killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status))));
  // A shell that waited for the sampler reports its death by signal N as 128 + N.
  const int code = WEXITSTATUS(status);
  if (code > 128 && code < 128 + 32)
    ended(Breakdown::Kind::crashed, fmt::format("crashed: killed by signal {} ({}; the shell's exit status {})",
                                                code - 128, strsignal(code - 128), code));
  ended(Breakdown::Kind::exited, fmt::format("exited with status {}", code));
  std::abort();  // unreachable: fail() throws
}

void Channel::pump(const std::vector<Piece>& out, std::size_t inbox_needed, double deadline) {
  std::size_t piece = 0, off = 0;
  auto skip_empty = [&] {
    while (piece < out.size() && off == out[piece].bytes) ++piece, off = 0;
  };
  skip_empty();
  char buf[1 << 16];
  auto when = [&] {
    return piece < out.size() ? std::string("while a request was being sent")
           : inbox_.empty()   ? std::string("before replying")
                              : fmt::format("after {} bytes of a reply", inbox_.size());
  };
  while (piece < out.size() || inbox_.size() < inbox_needed) {
    const double left = deadline - now_s();
    if (left <= 0)
      fail(Breakdown::Kind::timed_out,
           piece < out.size() ? "stopped reading its stdin: no request taken within the timeout"
                              : "no reply within the timeout (--sampler-timeout)");
    pollfd fds[3];
    int n = 0, wi = -1, ri = -1, ei = -1;
    if (piece < out.size()) fds[wi = n++] = {to_, POLLOUT, 0};
    if (from_ >= 0) fds[ri = n++] = {from_, POLLIN, 0};
    if (err_ >= 0) fds[ei = n++] = {err_, POLLIN, 0};
    if (poll(fds, nfds_t(n), int(std::min(left, 0.5) * 1000) + 1) < 0 && errno != EINTR)
      fail(Breakdown::Kind::protocol, std::string("poll: ") + std::strerror(errno));
    if (ei >= 0 && fds[ei].revents) drain_stderr();
    bool moved = false;  // a byte of the request or of the reply crossed
    if (wi >= 0 && fds[wi].revents) {
      const auto* p = static_cast<const char*>(out[piece].data) + off;
      const ssize_t w = write(to_, p, std::min<std::size_t>(out[piece].bytes - off, 1 << 20));
      if (w > 0) {
        off += std::size_t(w);
        skip_empty();
        moved = true;
      } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
        fail_ended("its stdin", when());
      }
    }
    if (ri >= 0 && fds[ri].revents) {
      const ssize_t r = read(from_, buf, sizeof buf);
      if (r > 0) {
        inbox_.append(buf, std::size_t(r));
        moved = true;
      } else if (r == 0) {
        close(from_);
        from_ = -1;
        if (inbox_.size() < inbox_needed || piece < out.size()) fail_ended("its stdout", when());
      }
    }
    // Nothing crossed: has the process itself ended while something it started
    // holds the pipes? One more pass reads what it wrote before it exited.
    if (!moved && pid_ > 0) {
      if (exited_)
        fail_status(exit_status_, when(), " (a process it started still held its stdout; the sampler's process group and every process it started "
                    "were killed)");
      if (waitpid(pid_, &exit_status_, WNOHANG) == pid_) exited_ = true;
    }
  }
}

Safetensors Channel::exchange(const std::string& header, const std::vector<Piece>& data, double timeout_s) {
  if (!alive_) throw Breakdown(Breakdown::Kind::protocol, "the sampler's channel is closed");
  if (!inbox_.empty())
    fail(Breakdown::Kind::garbage, fmt::format("the sampler wrote {} bytes to stdout that no request asked for: '{}' "
                                               "(stdout carries the protocol; print to stderr)",
                                               inbox_.size(), printable(inbox_)));
  const double deadline = now_s() + timeout_s;
  std::vector<Piece> out{{header.data(), header.size()}};
  out.insert(out.end(), data.begin(), data.end());
  pump(out, 8, deadline);
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, inbox_.data(), 8);
  if (header_len > kMaxHeaderBytes || header_len < 2) {
    if (looks_like_text(inbox_))
      fail(Breakdown::Kind::garbage, "the sampler wrote text to stdout: '" + printable(inbox_) +
                                         "' (stdout carries the protocol; print to stderr)");
    fail(Breakdown::Kind::garbage, fmt::format("the sampler's reply is not a protocol message: header length {} "
                                               "(first bytes: '{}')",
                                               header_len, printable(inbox_)));
  }
  pump({}, 8 + header_len, deadline);
  Header h;
  try {
    h = parse_header(inbox_.substr(8, header_len), kMaxReplyDataBytes);
  } catch (const SafetensorsError& e) {
    fail(Breakdown::Kind::garbage, std::string("the sampler's reply is not a safetensors document: ") + e.what() +
                                       " (first bytes: '" + printable(inbox_) + "')");
  }
  const std::size_t total = std::size_t(8 + header_len + h.data_bytes);
  pump({}, total, deadline);
  Safetensors msg = assemble(std::move(h), reinterpret_cast<const unsigned char*>(inbox_.data()) + 8 + header_len);
  inbox_.erase(0, total);
  return msg;
}

}  // namespace raceoracle::protocol
