#include "io/children.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace raceoracle::io {
namespace {

// The groups alive now; a fixed array of atomics, so the handler reads it
// safely. Past 256 at once (`check --devices` can start more) a group relies
// on PR_SET_PDEATHSIG alone, which still kills its leader with raceoracle.
std::array<std::atomic<pid_t>, 256> g_live{};

void kill_live_and_reraise(int sig) {
  kill_live_groups();
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old{};
      sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_DFL) signal(sig, kill_live_and_reraise);  // a host's handler (Python's) stays
    }
  });
}

}  // namespace

void kill_live_groups() {
  for (auto& p : g_live)
    if (pid_t g = p.load(); g > 0) kill(-g, SIGKILL);
}

bool become_group_leader(pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  return getppid() == parent;
}

void track_group(pid_t pid) {
  install_handlers_once();
  setpgid(pid, pid);
  for (auto& p : g_live) {
    pid_t expected = 0;
    if (p.compare_exchange_strong(expected, pid)) return;
  }
}

void untrack_group(pid_t pid) {
  for (auto& p : g_live) {
    pid_t expected = pid;
    if (p.compare_exchange_strong(expected, 0)) return;
  }
}

MarkedEnvironment marked_environment() {
  static std::atomic<int> count{0};
  MarkedEnvironment m;
  m.entry = "RACEORACLE_STARTED_BY=" + std::to_string(getpid()) + ":" + std::to_string(++count);
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "RACEORACLE_STARTED_BY=", 22) != 0) m.strings.emplace_back(*e);  // a sampler run by a sampler: its own mark
  m.strings.push_back(m.entry);
  for (std::string& e : m.strings) m.envp.push_back(e.data());
  m.envp.push_back(nullptr);
  return m;
}

namespace {

/// The parent of `pid` (from /proc/PID/stat), -1 when it is gone; `zombie`
/// when it has ended and waits to be reaped (nothing left to kill).
pid_t parent_of(pid_t pid, bool& zombie) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 1));
  char state = 0;
  pid_t ppid = -1;
  rest >> state >> ppid;
  zombie = state == 'Z';
  return ppid;
}

/// Whether `pid`'s environment holds `entry` (readable for this user's processes only).
bool carries(pid_t pid, const std::string& entry) {
  std::ifstream env("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string var;
  while (std::getline(env, var, '\0'))
    if (var == entry) return true;
  return false;
}

}  // namespace

int kill_marked(pid_t leader, const std::string& entry) {
  int killed = 0;
  for (int pass = 0; pass < 4; ++pass) {
    std::map<pid_t, pid_t> parents;
    std::set<pid_t> zombies;
    std::error_code ec;
    for (const auto& dir : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = dir.path().filename().string();
      if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
      bool zombie = false;
      parents[pid_t(std::stol(name))] = parent_of(pid_t(std::stol(name)), zombie);
      if (zombie) zombies.insert(pid_t(std::stol(name)));
    }
    std::set<pid_t> doomed;
    for (const auto& [pid, ppid] : parents) {
      if (pid == getpid() || zombies.count(pid)) continue;
      bool below = false;  // a descendant of the leader (the chain is short; a cycle cannot be, but bound it)
      for (pid_t p = ppid, hops = 0; p > 1 && hops < 64 && !below; p = parents.count(p) ? parents[p] : -1, ++hops)
        below = p == leader;
      if (below || (!entry.empty() && carries(pid, entry))) doomed.insert(pid);
    }
    if (doomed.empty()) break;
    for (pid_t pid : doomed) killed += kill(pid, SIGKILL) == 0;
  }
  return killed;
}

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.string();
}

pid_t spawn_logged(const std::string& exe, std::vector<std::string> args, const std::string& env_name,
                   const std::string& env_value, const std::string& log) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (!become_group_leader(parent)) _exit(1);  // a child never outlives the run that started it
    if (!env_name.empty()) setenv(env_name.c_str(), env_value.c_str(), 1);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  track_group(pid);
  return pid;
}

void wait_group(pid_t pid) {
  waitpid(pid, nullptr, 0);
  untrack_group(pid);
}

}  // namespace raceoracle::io
