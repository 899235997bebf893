#include "cli/safetensors.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

namespace raceoracle::cli {
namespace {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
  const int exp = (h >> 10) & 0x1F;
  std::uint32_t mant = h & 0x3FF;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000 | (mant << 13));  // inf / NaN
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    int e = -1;  // subnormal half: normalise
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400));
    return std::bit_cast<float>(sign | std::uint32_t(127 - 15 - e) << 23 | (mant & 0x3FF) << 13);
  }
  return std::bit_cast<float>(sign | std::uint32_t(exp - 15 + 127) << 23 | mant << 13);
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

std::size_t dtype_size(const std::string& d) {
  if (d == "BF16" || d == "F16" || d == "I16") return 2;
  if (d == "F32" || d == "I32") return 4;
  if (d == "F64" || d == "I64") return 8;
  if (d == "U8" || d == "I8" || d == "BOOL") return 1;
  return 0;
}

std::int64_t Tensor::elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::vector<float> Tensor::as_f32() const {
  const std::size_t n = std::size_t(elements());
  std::vector<float> out(n);
  const unsigned char* p = bytes.data();
  if (dtype == "F32") {
    std::memcpy(out.data(), p, n * 4);
  } else if (dtype == "BF16") {
    for (std::size_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(std::uint32_t(load<std::uint16_t>(p + 2 * i)) << 16);
  } else if (dtype == "F16") {
    for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(load<std::uint16_t>(p + 2 * i));
  } else {
    throw SafetensorsError("dtype " + dtype + " is not a floating-point type this tool reads (BF16, F16, F32)");
  }
  return out;
}

std::vector<std::int64_t> Tensor::as_i64() const {
  const std::size_t n = std::size_t(elements());
  std::vector<std::int64_t> out(n);
  if (dtype == "I32") {
    for (std::size_t i = 0; i < n; ++i) out[i] = load<std::int32_t>(bytes.data() + 4 * i);
  } else if (dtype == "I64") {
    for (std::size_t i = 0; i < n; ++i) out[i] = load<std::int64_t>(bytes.data() + 8 * i);
  } else {
    throw SafetensorsError("dtype " + dtype + " is not an integer type this tool reads (I32, I64)");
  }
  return out;
}

const Tensor& Safetensors::require(const std::string& name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) {
    std::string have;
    for (const auto& [k, v] : tensors) have += (have.empty() ? "" : ", ") + k;
    throw SafetensorsError("missing tensor '" + name + "' (the file has: " + (have.empty() ? "none" : have) + ")");
  }
  return it->second;
}

Safetensors read_safetensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw SafetensorsError("cannot open " + path);
  f.seekg(0, std::ios::end);
  const std::uint64_t size = std::uint64_t(f.tellg());
  f.seekg(0);
  if (size < 8) throw SafetensorsError(path + ": " + std::to_string(size) + " bytes, too short for a safetensors header");
  unsigned char len_bytes[8];
  f.read(reinterpret_cast<char*>(len_bytes), 8);
  const std::uint64_t header_len = load<std::uint64_t>(len_bytes);  // little-endian on every target we build
  if (header_len > size - 8)
    throw SafetensorsError(path + ": header length " + std::to_string(header_len) + " is larger than the file (" +
                           std::to_string(size) + " bytes)");
  std::string header(header_len, '\0');
  f.read(header.data(), std::streamsize(header_len));
  const std::uint64_t data_start = 8 + header_len, data_len = size - data_start;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    throw SafetensorsError(path + ": header is not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw SafetensorsError(path + ": header is not a JSON object");
  Safetensors s;
  for (const auto& [name, t] : j.items()) {
    if (name == "__metadata__") {
      if (!t.is_object()) throw SafetensorsError(path + ": __metadata__ is not an object");
      for (const auto& [k, v] : t.items()) {
        if (!v.is_string()) throw SafetensorsError(path + ": metadata '" + k + "' is not a string");
        s.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      Tensor tensor;
      tensor.dtype = t.at("dtype").get<std::string>();
      for (const auto& d : t.at("shape")) {
        const std::int64_t v = d.get<std::int64_t>();
        if (v < 0) throw SafetensorsError("negative dimension");
        tensor.shape.push_back(v);
      }
      const auto offsets = t.at("data_offsets").get<std::vector<std::uint64_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1]) throw SafetensorsError("data_offsets must be [begin, end]");
      const std::size_t esize = dtype_size(tensor.dtype);
      if (esize == 0) throw SafetensorsError("unknown dtype " + tensor.dtype);
      const std::uint64_t want = std::uint64_t(tensor.elements()) * esize;
      if (offsets[1] - offsets[0] != want)
        throw SafetensorsError("shape and dtype need " + std::to_string(want) + " bytes, data_offsets give " +
                               std::to_string(offsets[1] - offsets[0]));
      if (offsets[1] > data_len)
        throw SafetensorsError("data ends at byte " + std::to_string(offsets[1]) + " but the file holds " +
                               std::to_string(data_len) + " data bytes (truncated?)");
      tensor.bytes.resize(want);
      f.seekg(std::streamoff(data_start + offsets[0]));
      f.read(reinterpret_cast<char*>(tensor.bytes.data()), std::streamsize(want));
      if (!f) throw SafetensorsError("read failed");
      s.tensors[name] = std::move(tensor);
    } catch (const nlohmann::json::exception& e) {
      throw SafetensorsError(path + ": tensor '" + name + "': malformed entry: " + e.what());
    } catch (const SafetensorsError& e) {
      throw SafetensorsError(path + ": tensor '" + name + "': " + e.what());
    }
  }
  return s;
}

void write_safetensors(const std::string& path, const Safetensors& s) {
  nlohmann::json j = nlohmann::json::object();
  std::uint64_t offset = 0;
  for (const auto& [name, t] : s.tensors) {
    j[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  if (!s.metadata.empty()) j["__metadata__"] = s.metadata;
  std::string header = j.dump();
  while ((8 + header.size()) % 8) header += ' ';  // the format aligns data to 8 bytes
  std::ofstream f(path, std::ios::binary);
  if (!f) throw SafetensorsError("cannot write " + path);
  const std::uint64_t n = header.size();
  f.write(reinterpret_cast<const char*>(&n), 8);
  f << header;
  for (const auto& [name, t] : s.tensors) f.write(reinterpret_cast<const char*>(t.bytes.data()), std::streamsize(t.bytes.size()));
}

}  // namespace raceoracle::cli
