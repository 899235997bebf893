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

/// A tensor's bytes where they lie (a document in memory, a mapped file).
struct TensorView {
  std::string dtype;  ///< "BF16", "F16", "F32", "I32", "I64", ...
  std::vector<std::int64_t> shape;
  const unsigned char* data = nullptr;
  std::size_t bytes = 0;

  std::int64_t elements() const;
  std::vector<float> as_f32() const;         ///< BF16, F16, F32 widened exactly
  std::vector<double> as_f64() const;        ///< F64, or BF16, F16, F32 widened exactly
  std::vector<std::int64_t> as_i64() const;  ///< I32, I64
  std::vector<std::uint64_t> as_u64() const;  ///< U64, I64 (its bits: a seed stored as int64)
  /// Elements [first, first + n) widened exactly into `out` (BF16, F16, F32).
  void widen_f32(std::int64_t first, std::int64_t n, float* out) const;
};

struct Tensor {
  std::string dtype;  ///< "BF16", "F16", "F32", "I32", "I64", ...
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;

  TensorView view() const { return {dtype, shape, bytes.data(), bytes.size()}; }
  std::int64_t elements() const { return view().elements(); }
  std::vector<float> as_f32() const { return view().as_f32(); }
  std::vector<std::int64_t> as_i64() const { return view().as_i64(); }
};

struct Safetensors {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;

  const Tensor& require(const std::string& name) const;  ///< throws naming the missing tensor
  bool has(const std::string& name) const { return tensors.count(name) > 0; }
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
/// A file read into memory (SafetensorsFile copied out); errors name the path.
Safetensors read_safetensors(const std::string& path);

/// A safetensors file mapped read-only, every claim of its header checked:
/// tensors are views into the mapping, read from disk as they are touched,
/// and `release` hands pages already used back, so a file of any size is
/// read in the memory of what is being worked on. Errors name the path.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  TensorView require(const std::string& name) const;  ///< throws naming the missing tensor
  bool has(const std::string& name) const;
  Safetensors copy() const;                            ///< every tensor, copied out
  /// Drops the whole pages inside [p, p + bytes) from this process's memory
  /// (they are read again if touched).
  void release(const void* p, std::size_t bytes) const;

 private:
  std::string path_;
  void unmap();
  void* map_ = nullptr;
  std::size_t size_ = 0;
  void* region_ = nullptr;  ///< its slot in the SIGBUS handler's list (safetensors.cpp)
  Header header_;
  const unsigned char* data_ = nullptr;
};
void write_safetensors(const std::string& path, const Safetensors& s);

}  // namespace raceoracle::protocol
