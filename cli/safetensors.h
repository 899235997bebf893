#pragma once
/// A reader and writer for the safetensors format (an 8-byte little-endian
/// header length, a JSON header naming each tensor's dtype, shape and byte
/// range, then the data), for `raceoracle verify`. The reader checks every
/// claim of the header against the file and throws SafetensorsError with a
/// message naming the problem; it never reads outside the file.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace raceoracle::cli {

struct SafetensorsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Tensor {
  std::string dtype;  ///< "BF16", "F16", "F32", "I32", "I64", ...
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;

  std::int64_t elements() const;
  std::vector<float> as_f32() const;         ///< BF16, F16, F32 widened exactly
  std::vector<std::int64_t> as_i64() const;  ///< I32, I64
};

struct Safetensors {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;

  const Tensor& require(const std::string& name) const;  ///< throws naming the missing tensor
};

Safetensors read_safetensors(const std::string& path);
void write_safetensors(const std::string& path, const Safetensors& s);
std::size_t dtype_size(const std::string& dtype);  ///< 0 if unknown

}  // namespace raceoracle::cli
