// Test support: tensors from typed values, and safetensors files written into
// a directory of the test's own (removed after it).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/safetensors.h"

namespace raceoracle::protocol::testing {

template <class T>
Tensor tensor(const std::string& dtype, std::vector<std::int64_t> shape, const std::vector<T>& v) {
  Tensor t{dtype, std::move(shape), {}};
  t.bytes.resize(v.size() * sizeof(T));
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

class SafetensorsFiles : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("raceoracle_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                               "_" + std::to_string(::getpid()));
  void SetUp() override {
    std::filesystem::remove_all(dir);  // a directory left by an earlier process with this pid
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const Safetensors& s, const std::string& name) {
    const std::string p = (dir / name).string();
    write_safetensors(p, s);
    return p;
  }
};

}  // namespace raceoracle::protocol::testing
