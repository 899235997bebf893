#pragma once
/// The safetensors format (an 8-byte little-endian header length, a JSON
/// header naming each tensor's dtype, shape and byte range, then the data):
/// the files `raceoracle verify` reads and every message of the sampler
/// protocol. The reader checks every claim of the header against the bytes
/// it has (shapes whose byte counts overflow, ranges past the data, ranges
/// that overlap) and throws SafetensorsError naming the problem; it never
/// reads outside its input.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace raceoracle::protocol {

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

/// "[2, 3]"
std::string shape_string(const std::vector<std::int64_t>& shape);
std::size_t dtype_size(const std::string& dtype);  ///< 0 if unknown

/// One tensor's entry in a header, checked: its bytes lie in [begin, end).
struct Entry {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;
};
struct Header {
  std::vector<Entry> entries;  ///< in data order
  std::map<std::string, std::string> metadata;
  std::uint64_t data_bytes = 0;  ///< the largest end: where the data ends
};
/// Parses and checks a header's JSON; `data_limit` bounds where data may end
/// (a file's data bytes; a stream's message size limit).
Header parse_header(const std::string& json, std::uint64_t data_limit);
/// Builds the tensors of a parsed header from its data.
Safetensors assemble(Header h, const unsigned char* data);

/// The header bytes (length prefix included, padded so data is 8-aligned)
/// for tensors laid out back to back in the order given.
struct TensorRef {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t bytes = 0;
};
std::string encode_header(const std::vector<TensorRef>& tensors, const std::map<std::string, std::string>& metadata);

/// A whole document in memory, every claim checked (throws SafetensorsError).
Safetensors parse_safetensors(const unsigned char* bytes, std::size_t size);
Safetensors read_safetensors(const std::string& path);
void write_safetensors(const std::string& path, const Safetensors& s);

}  // namespace raceoracle::protocol
