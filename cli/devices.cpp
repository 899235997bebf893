#include "cli/devices.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cli/command_support.h"
#include "io/children.h"
#include "kernels/device_memory.h"

namespace raceoracle::cli {

std::vector<std::string> without(std::vector<std::string> args, const std::string& flag) {
  for (std::size_t i = 1; i < args.size();) {
    if (args[i] == flag && i + 1 < args.size()) args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
    else if (args[i].rfind(flag + "=", 0) == 0) args.erase(args.begin() + long(i));
    else ++i;
  }
  return args;
}

namespace {

/// The last lines of a log, indented: what a shard said before it stopped.
std::string tail_of(const std::string& log, std::size_t lines) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "\n    " + all[i];
  return out;
}

}  // namespace

DeviceShards run_on_devices(const std::string& command, const std::vector<std::string>& args, int devices,
                            const std::vector<std::string>& dropped, const std::string& output_flag,
                            const std::string& extension) {
  const int n = devices > 0 ? devices : kernels::device_count();
  if (n < 1) throw std::invalid_argument(std::string("--devices all: no ") + kernels::backend_name() + " device found");
  // On cpu a "device" is a process; on a GPU backend each shard needs a GPU of its own.
  if (std::string(kernels::backend_name()) != "cpu" && n > kernels::device_count())
    throw std::invalid_argument(fmt::format("--devices {}: this machine shows {} {} device(s)", n,
                                            kernels::device_count(), kernels::backend_name()));
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("raceoracle-devices-{}", ::getpid());
  fs::create_directories(dir);
  const std::string self = io::self_executable();
  if (self.empty()) throw std::runtime_error("cannot find this executable (/proc/self/exe)");
  std::vector<std::string> base = args;  // the merge writes the reports, not a shard
  for (const std::string& flag : dropped) base = without(base, flag);
  std::printf("raceoracle %s on %d device%s: shard i runs on device i; logs in %s\n", command.c_str(), n,
              n == 1 ? "" : "s", dir.c_str());
  std::fflush(stdout);
  std::vector<pid_t> pids;
  DeviceShards out;
  std::vector<std::string> logs;
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> shard_args = base;
    const std::string output = (dir / fmt::format("shard-{}.{}", i, extension)).string();
    logs.push_back((dir / fmt::format("shard-{}.log", i)).string());
    for (const std::string& a : {std::string("--shard"), fmt::format("{}/{}", i, n), output_flag, output})
      shard_args.push_back(a);
    out.outputs.push_back(output);
    const kernels::EnvSetting env = kernels::device_visibility(i);
    pids.push_back(io::spawn_logged(self, shard_args, env.name, env.value, logs.back()));
    note(fmt::format("shard {}/{}{}: {}", i, n, env.name.empty() ? "" : " on " + env.name + "=" + env.value, logs.back()));
  }
  for (const pid_t pid : pids) io::wait_group(pid);
  for (int i = 0; i < n; ++i)
    if (!fs::exists(out.outputs[std::size_t(i)]))
      throw std::runtime_error(fmt::format("shard {}/{} wrote no {}; its log, {}, ends:{}", i, n, out.outputs[std::size_t(i)],
                                           logs[std::size_t(i)], tail_of(logs[std::size_t(i)], 5)));
  return out;
}

}  // namespace raceoracle::cli
