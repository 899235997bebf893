#pragma once
/// A directory of its own under /tmp for one test, removed with everything in it when the test ends.
#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <iterator>
#include <string>

namespace raceoracle::test_support {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/raceoracle-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  std::size_t entries() const {
    return std::size_t(std::distance(std::filesystem::directory_iterator(path), std::filesystem::directory_iterator()));
  }
};

}  // namespace raceoracle::test_support
