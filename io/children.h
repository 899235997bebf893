#pragma once
/// Processes raceoracle starts (samplers, mutant children, shards) never
/// outlive it: each runs in a process group of its own, dies with its parent
/// (PR_SET_PDEATHSIG), and every tracked group is killed when raceoracle is
/// interrupted (SIGINT, SIGTERM, SIGHUP), before the signal takes its course.
#include <sys/types.h>

#include <string>
#include <vector>

namespace raceoracle::io {

/// In a forked child, before exec: its own process group, SIGKILL when the
/// parent dies. False when the parent died already (the child should _exit).
bool become_group_leader(pid_t parent);

/// The parent's side: `pid` leads a group (set here too, so there is no race
/// with the child's own setpgid), killed on SIGINT/SIGTERM/SIGHUP until untracked.
void track_group(pid_t pid);
void untrack_group(pid_t pid);
/// SIGKILL to every tracked group (async-signal-safe: a signal handler's).
void kill_live_groups();

/// What marks every process a child starts, however it leaves the child's
/// group (setsid, a double fork): a variable in the environment it inherits.
/// Made before fork (the child only execs with it): `entry` is
/// RACEORACLE_STARTED_BY=<this pid>:<a count>, `envp` this process's
/// environment with it added, for execve.
struct MarkedEnvironment {
  std::string entry;
  std::vector<std::string> strings;
  std::vector<char*> envp;
};
MarkedEnvironment marked_environment();

/// SIGKILL to every process but this one that descends from `leader` or
/// carries `entry` in its environment: what killing the leader's group misses
/// (a process that called setsid, a daemon whose parent exited). Read from
/// /proc, a few passes (a process may start another while the sweep runs);
/// returns how many were killed. Not async-signal-safe: an interrupted run's
/// orderly exit sweeps, its signal handler kills the groups alone.
int kill_marked(pid_t leader, const std::string& entry);

/// This process's executable (/proc/self/exe); "" when it cannot be read.
std::string self_executable();

/// Starts `exe` with `args` (argv[0] first) as a tracked group leader, the
/// variable `env_name` set to `env_value` (none when the name is empty), its
/// stdout and stderr to `log` (created or truncated). Throws
/// std::runtime_error when it cannot fork.
pid_t spawn_logged(const std::string& exe, std::vector<std::string> args, const std::string& env_name,
                   const std::string& env_value, const std::string& log);
/// Waits for a child started by spawn_logged and untracks its group.
void wait_group(pid_t pid);

}  // namespace raceoracle::io
