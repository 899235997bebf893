#pragma once
/// `--devices`: a command run as N shards in parallel, shard i in a child
/// process that sees only device i (on the cpu backend a "device" is a
/// process), each with its log; what `check` and `divergence` share before
/// each merges the shards' outputs its own way.
#include <string>
#include <vector>

namespace raceoracle::cli {

/// `args` without `flag VALUE` and `flag=VALUE`.
std::vector<std::string> without(std::vector<std::string> args, const std::string& flag);

/// The shards' outputs, in shard order, once every child has ended.
struct DeviceShards {
  std::vector<std::string> outputs;
};
/// Runs `args` (argv[0] first: this command line) as `devices` shards
/// (-1: every device found), each without the flags in `dropped` and with
/// `--shard i/N output_flag DIR/shard-i.EXT`. Throws std::invalid_argument
/// when there are not that many devices, std::runtime_error naming a shard's
/// log when it wrote no output.
DeviceShards run_on_devices(const std::string& command, const std::vector<std::string>& args, int devices,
                            const std::vector<std::string>& dropped, const std::string& output_flag,
                            const std::string& extension);

}  // namespace raceoracle::cli
