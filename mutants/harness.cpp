#include "mutants/harness.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "subject/batch.h"
#include "io/children.h"

namespace raceoracle::mutants {
namespace {

using Kind = PairOutcome::Kind;
using Clock = std::chrono::steady_clock;

PairOutcome from_result(const properties::Law& p, const subject::Subject& m, const properties::LawResult& r) {
  PairOutcome o;
  o.law = p.name;
  if (r.verdict == properties::LawResult::Verdict::failed) {
    o.kind = Kind::killed;
    o.counterexample = r.counterexample;
    o.replay = properties::replay_command(p, m, r);
    o.case_json = r.case_json;
  } else if (r.verdict == properties::LawResult::Verdict::error) {
    o.kind = Kind::crashed;  // the harness could not run the property: not a kill
    o.detail = r.counterexample;
  }
  o.seconds = r.seconds;
  return o;
}

/// A failure to run at all must never count as a kill. Before the property,
/// the kernel the mutant was made from runs on a small batch; if it cannot
/// (no usable device in this process, say), the pair is a crash, with why.
std::string preflight(const subject::Subject& m) {
  if (!m.kernel()) return {};  // an external sampler: its client names every failure to run
  const kernels::Kernel* real = kernels::find_kernel(kernels::real_kernel_name(*m.kernel()));
  subject::Batch b = subject::Batch::make(2, 300);
  if (real->noise == kernels::NoiseSource::drawn) b.draw_noise(0);  // a kernel that draws its noise needs seeds
  const subject::KernelRun run = subject::run_kernel(*real, b);
  return run.status.ok ? std::string() : real->name + " itself failed to run here: " + run.status.message;
}

PairOutcome run_pair(const properties::Law& p, const subject::Subject& m, const properties::RunSettings& s) {
  if (std::string e = preflight(m); !e.empty()) {
    PairOutcome o;
    o.law = p.name;
    o.kind = Kind::crashed;
    o.detail = e;
    return o;
  }
  PairOutcome o = from_result(p, m, properties::run_law(p, m, s));
  o.settings = properties::to_json(s);
  return o;
}

void write_outcome(int fd, const PairOutcome& o) {
  const std::string text = nlohmann::json{{"kind", int(o.kind)}, {"counterexample", o.counterexample},
                                          {"replay", o.replay}, {"detail", o.detail},
                                          {"case", o.case_json}, {"settings", o.settings}}
                               .dump();
  for (std::size_t off = 0; off < text.size();) {
    const ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n <= 0) break;
    off += std::size_t(n);
  }
}

/// Runs one pair in a child (under racecheck when `racecheck`: s.self_exe
/// set); the child reports through a pipe as JSON.
PairOutcome run_isolated(const properties::Law& p, const subject::Subject& m, const HarnessSettings& s, bool racecheck) {
  const auto start = Clock::now();
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // A mutant's run never outlives raceoracle (killed or interrupted, it leaves no orphan).
    if (!io::become_group_leader(parent)) _exit(1);
    close(fds[0]);
    if (!s.self_exe.empty()) {
      std::vector<std::string> args = pair_child_args(s.self_exe, m.kernel()->name, p.name, s.run, fds[1]);
      if (racecheck)
        args.insert(args.begin(), {"compute-sanitizer", "--tool", "racecheck", "--racecheck-report", "hazard",
                                   "--error-exitcode", std::to_string(kRacecheckExit), "--print-limit", "4"});
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      if (racecheck) execvp(argv[0], argv.data());
      else execv(s.self_exe.c_str(), argv.data());
      _exit(127);  // no exec: the parent reads no verdict and records a crash
    }
    write_outcome(fds[1], run_pair(p, m, s.run));
    _exit(0);
  }
  io::track_group(pid);
  close(fds[1]);
  std::string data;
  char buf[65536];
  bool timed_out = false;
  for (;;) {
    const double left = s.timeout_s - std::chrono::duration<double>(Clock::now() - start).count();
    if (left <= 0) {
      timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = poll(&pfd, 1, int(std::min(left, 1.0) * 1000) + 1);
    if (ready > 0) {
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;  // the child closed the pipe: it finished or died
      data.append(buf, std::size_t(n));
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  kill(-pid, SIGKILL);  // anything the pair's child left in its group
  io::untrack_group(pid);
  PairOutcome o;
  o.law = p.name;
  o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (timed_out) {
    o.kind = Kind::timed_out;
    o.detail = fmt::format("no verdict within {:.0f} s", s.timeout_s);
  } else if (WIFSIGNALED(status)) {
    o.kind = Kind::crashed;
    o.detail = fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else {
    try {
      const auto j = nlohmann::json::parse(data);
      o.kind = Kind(j.at("kind").get<int>());
      o.counterexample = j.at("counterexample").get<std::string>();
      o.replay = j.at("replay").get<std::string>();
      o.detail = j.at("detail").get<std::string>();
      o.case_json = j.at("case").get<std::string>();
      o.settings = j.at("settings").get<std::string>();
    } catch (const std::exception& e) {
      o.kind = Kind::crashed;
      o.detail = fmt::format("exit status {} with no readable verdict", WEXITSTATUS(status));
    }
    if (o.kind != Kind::crashed && o.settings != properties::to_json(s.run)) {
      o.kind = Kind::crashed;  // a verdict under other settings judges nothing the user asked for
      o.detail = "the pair's child ran under other settings: " + o.settings;
    }
    if (racecheck && o.kind == Kind::survived && WIFEXITED(status) && WEXITSTATUS(status) == kRacecheckExit) {
      o.kind = Kind::killed;
      o.counterexample = p.name + " on " + m.name() +
                         ": compute-sanitizer racecheck reported a shared-memory hazard while the law ran (its "
                         "report is on stderr); the law's own verdict was a pass";
    }
  }
  return o;
}

}  // namespace

const char* to_string(Kind k) {
  switch (k) {
    case Kind::killed: return "killed";
    case Kind::survived: return "survived";
    case Kind::crashed: return "crashed";
    case Kind::timed_out: return "timed out";
    case Kind::not_applicable: return "n/a";
  }
  return "?";
}

std::vector<std::string> MutantReport::killers() const {
  std::vector<std::string> k;
  for (const PairOutcome& p : pairs)
    if (p.kind == Kind::killed) k.push_back(p.law);
  return k;
}
const PairOutcome* MutantReport::first_kill() const {
  for (const PairOutcome& p : pairs)
    if (p.kind == Kind::killed) return &p;
  return nullptr;
}
bool MutantReport::crashed() const {
  for (const PairOutcome& p : pairs)
    if (p.kind == Kind::crashed) return true;
  return false;
}
bool MutantReport::timed_out() const {
  for (const PairOutcome& p : pairs)
    if (p.kind == Kind::timed_out) return true;
  return false;
}
std::string MutantReport::status() const {
  if (killed()) return "Killed";
  if (timed_out()) return "Timeout";
  if (crashed()) return "RuntimeError";
  return "Survived";
}

MutantReport run_mutant(const subject::Subject& m, const HarnessSettings& s,
                        const std::function<void(const PairOutcome&)>& progress,
                        const std::function<bool(std::size_t)>& runs) {
  const auto start = Clock::now();
  MutantReport r;
  r.mutant = &m;
  for (std::size_t i = 0; i < properties::laws().size(); ++i) {
    if (runs && !runs(i)) continue;
    const properties::Law& p = properties::laws()[i];
    PairOutcome o;
    if (!p.applies_to(m)) {
      o.law = p.name;
      o.kind = Kind::not_applicable;
    } else {
      const bool isolated = s.isolate && m.kernel();
      o = isolated ? run_isolated(p, m, s, false) : run_pair(p, m, s.run);
      if (isolated && s.racecheck && !s.self_exe.empty() && o.kind == Kind::survived) {
        PairOutcome again = run_isolated(p, m, s, true);
        again.seconds += o.seconds;
        if (again.kind == Kind::killed) {
          o = std::move(again);
        } else {  // no hazard, or the sanitizer's run said nothing: the law's verdict stands
          o.seconds = again.seconds;
          o.detail += std::string(o.detail.empty() ? "" : "; ") + "racecheck rerun: " +
                      (again.kind == Kind::survived ? std::string("no hazard") : std::string(to_string(again.kind)) + " " + again.detail);
        }
      }
    }
    if (progress) progress(o);
    r.pairs.push_back(std::move(o));
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

std::vector<std::string> pair_child_args(const std::string& exe, const std::string& mutant,
                                         const std::string& property, const properties::RunSettings& run, int fd) {
  return {exe, "__pair", mutant, property, properties::to_json(run), std::to_string(fd)};
}

int pair_child_main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "__pair: internal entry of the mutant harness, expects 4 arguments\n");
    return 2;
  }
  const kernels::Kernel* m = kernels::find_kernel(argv[2]);
  const properties::Law* p = properties::find_law(argv[3]);
  if (!m || !p) {
    std::fprintf(stderr, "__pair: unknown mutant or property\n");
    return 2;
  }
  try {
    write_outcome(std::stoi(argv[5]), run_pair(*p, subject::subject_of(*m), properties::run_settings_from_json(argv[4])));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "__pair: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace raceoracle::mutants
