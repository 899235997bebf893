#pragma once
/// Long runs split the standard way: a command's work is a list of units in
/// one fixed order, and shard I of N runs the units u with u % N == I. So N
/// shards together run exactly the unsharded work, whatever N, and
/// `raceoracle merge` joins their outputs into the unsharded ones.
/// docs/SCALE.md says which commands shard and what their units are.
#include <cstddef>
#include <string>

namespace raceoracle::io {

struct Shard {
  int index = 0, count = 1;
  bool owns(std::size_t unit) const { return int(unit % std::size_t(count)) == index; }
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }
};
/// "I/N" with 0 <= I < N (0-based, as GTEST_SHARD_INDEX, Slurm array and
/// Kubernetes indexed-job indices are); throws std::invalid_argument naming
/// the text otherwise.
Shard parse_shard(const std::string& text);

}  // namespace raceoracle::io
