#include "protocol/safetensors.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "io/files.h"
#include "race/bf16.h"

namespace raceoracle::protocol {
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

/// Bytes of a tensor of `shape` and element size `esize`, or throws when the
/// count does not fit in 63 bits (a header claiming [4, 2^62] F32 must not wrap).
std::uint64_t byte_count(const std::vector<std::int64_t>& shape, std::size_t esize) {
  constexpr std::uint64_t kMax = std::uint64_t(std::numeric_limits<std::int64_t>::max());
  std::uint64_t n = esize;
  for (std::int64_t d : shape) {
    if (d < 0) throw SafetensorsError("negative dimension in shape " + shape_string(shape));
    if (d != 0 && n > kMax / std::uint64_t(d))
      throw SafetensorsError("shape " + shape_string(shape) + " holds more bytes than 2^63");
    n *= std::uint64_t(d);
  }
  return n;
}

}  // namespace

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::size_t dtype_size(const std::string& d) {
  if (d == "BF16" || d == "F16" || d == "I16" || d == "U16") return 2;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "U8" || d == "I8" || d == "BOOL") return 1;
  return 0;
}

std::int64_t TensorView::elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

void TensorView::widen_f32(std::int64_t first, std::int64_t n, float* out) const {
  const unsigned char* p = data + std::size_t(first) * dtype_size(dtype);
  if (dtype == "F32") {
    if (n > 0) std::memcpy(out, p, std::size_t(n) * 4);  // an empty tensor has no buffer to copy from
  } else if (dtype == "BF16") {
    for (std::int64_t i = 0; i < n; ++i) out[i] = race::widen_bf16(load<std::uint16_t>(p + 2 * i));
  } else if (dtype == "F16") {
    for (std::int64_t i = 0; i < n; ++i) out[i] = half_to_float(load<std::uint16_t>(p + 2 * i));
  } else {
    throw SafetensorsError("dtype " + dtype + " is not a floating-point type this tool reads (BF16, F16, F32)");
  }
}

std::vector<float> TensorView::as_f32() const {
  std::vector<float> out(static_cast<std::size_t>(elements()));
  widen_f32(0, elements(), out.data());
  return out;
}

std::vector<double> TensorView::as_f64() const {
  const std::size_t n = std::size_t(elements());
  if (dtype != "F64") {
    const std::vector<float> f = as_f32();
    return {f.begin(), f.end()};
  }
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = load<double>(data + 8 * i);
  return out;
}

std::vector<std::int64_t> TensorView::as_i64() const {
  const std::size_t n = std::size_t(elements());
  std::vector<std::int64_t> out(n);
  if (dtype == "I32") {
    for (std::size_t i = 0; i < n; ++i) out[i] = load<std::int32_t>(data + 4 * i);
  } else if (dtype == "I64") {
    for (std::size_t i = 0; i < n; ++i) out[i] = load<std::int64_t>(data + 8 * i);
  } else {
    throw SafetensorsError("dtype " + dtype + " is not an integer type this tool reads (I32, I64)");
  }
  return out;
}

std::vector<std::uint64_t> TensorView::as_u64() const {
  if (dtype != "U64" && dtype != "I64")
    throw SafetensorsError("dtype " + dtype + " is not a 64-bit integer type this tool reads (U64, I64)");
  const std::size_t n = std::size_t(elements());
  std::vector<std::uint64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = load<std::uint64_t>(data + 8 * i);
  return out;
}

static SafetensorsError missing_tensor(const std::string& name, const std::set<std::string>& have) {
  std::string list;
  for (const auto& k : have) list += (list.empty() ? "" : ", ") + k;
  return SafetensorsError("missing tensor '" + name + "' (it has: " + (list.empty() ? "none" : list) + ")");
}

const Tensor& Safetensors::require(const std::string& name) const {
  auto it = tensors.find(name);
  if (it != tensors.end()) return it->second;
  std::set<std::string> have;
  for (const auto& [k, v] : tensors) have.insert(k);
  throw missing_tensor(name, have);
}

/// A non-negative JSON integer below 2^63: a float (even 3e24) or a negative
/// number is refused here, before any conversion could be undefined.
std::uint64_t json_count(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
    throw SafetensorsError(what + " must be a non-negative integer below 2^63, got " + v.dump());
  return v.get<std::uint64_t>();
}

Header parse_header(const std::string& json, std::uint64_t data_limit) {
  nlohmann::json j;
  // A JSON reader keeps the last of two equal keys; a header that names a
  // tensor or a metadata key twice is refused instead (which one was meant?).
  std::vector<std::set<std::string>> keys;  // the keys of each open object
  std::string duplicate;
  const nlohmann::json::parser_callback_t no_duplicates = [&](int, nlohmann::json::parse_event_t e, nlohmann::json& v) {
    if (e == nlohmann::json::parse_event_t::object_start) keys.emplace_back();
    else if (e == nlohmann::json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    else if (e == nlohmann::json::parse_event_t::key && !keys.empty() && !keys.back().insert(v.get<std::string>()).second &&
             duplicate.empty())
      duplicate = v.get<std::string>();
    return true;
  };
  try {
    j = nlohmann::json::parse(json, no_duplicates);
  } catch (const nlohmann::json::exception& e) {
    throw SafetensorsError(std::string("header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) throw SafetensorsError("header names '" + duplicate + "' twice");
  if (!j.is_object()) throw SafetensorsError("header is not a JSON object");
  Header h;
  for (const auto& [name, t] : j.items()) {
    if (name == "__metadata__") {
      if (!t.is_object()) throw SafetensorsError("__metadata__ is not an object");
      for (const auto& [k, v] : t.items()) {
        if (!v.is_string()) throw SafetensorsError("metadata '" + k + "' is not a string");
        h.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      Entry e;
      e.name = name;
      e.dtype = t.at("dtype").get<std::string>();
      if (!t.at("shape").is_array()) throw SafetensorsError("shape must be an array");
      for (const auto& d : t.at("shape")) e.shape.push_back(std::int64_t(json_count(d, "a shape entry")));
      if (!t.at("data_offsets").is_array()) throw SafetensorsError("data_offsets must be [begin, end]");
      std::vector<std::uint64_t> offsets;
      for (const auto& d : t.at("data_offsets")) offsets.push_back(json_count(d, "a data offset"));
      if (offsets.size() != 2 || offsets[0] > offsets[1]) throw SafetensorsError("data_offsets must be [begin, end]");
      const std::size_t esize = dtype_size(e.dtype);
      if (esize == 0) throw SafetensorsError("unknown dtype " + e.dtype);
      const std::uint64_t want = byte_count(e.shape, esize);
      if (offsets[1] - offsets[0] != want)
        throw SafetensorsError("shape and dtype need " + std::to_string(want) + " bytes, data_offsets give " +
                               std::to_string(offsets[1] - offsets[0]));
      if (offsets[1] > data_limit)
        throw SafetensorsError("data ends at byte " + std::to_string(offsets[1]) + " but only " +
                               std::to_string(data_limit) + " data bytes are there (truncated?)");
      e.begin = offsets[0];
      e.end = offsets[1];
      h.data_bytes = std::max(h.data_bytes, e.end);
      h.entries.push_back(std::move(e));
    } catch (const nlohmann::json::exception& e) {
      throw SafetensorsError("tensor '" + name + "': malformed entry: " + e.what());
    } catch (const SafetensorsError& e) {
      throw SafetensorsError("tensor '" + name + "': " + e.what());
    }
  }
  std::sort(h.entries.begin(), h.entries.end(), [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < h.entries.size(); ++i)
    if (h.entries[i].begin < h.entries[i - 1].end && h.entries[i].begin != h.entries[i].end)
      throw SafetensorsError("tensors '" + h.entries[i - 1].name + "' and '" + h.entries[i].name + "' overlap");
  return h;
}

Safetensors assemble(Header h, const unsigned char* data) {
  Safetensors s;
  s.metadata = std::move(h.metadata);
  for (Entry& e : h.entries) {
    Tensor t;
    t.dtype = std::move(e.dtype);
    t.shape = std::move(e.shape);
    t.bytes.assign(data + e.begin, data + e.end);
    s.tensors[e.name] = std::move(t);
  }
  return s;
}

std::string encode_header(const std::vector<TensorRef>& tensors, const std::map<std::string, std::string>& metadata) {
  nlohmann::json j = nlohmann::json::object();
  std::uint64_t offset = 0;
  for (const TensorRef& t : tensors) {
    j[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  if (!metadata.empty()) j["__metadata__"] = metadata;
  std::string header = j.dump();
  while ((8 + header.size()) % 8) header += ' ';  // the format aligns data to 8 bytes
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);  // little-endian on every target we build
  return out + header;
}

namespace {
/// The checked header of a whole document; its data starts at `data_start`.
Header parse_document(const unsigned char* bytes, std::size_t size, std::uint64_t& data_start) {
  if (size < 8) throw SafetensorsError(std::to_string(size) + " bytes, too short for a safetensors header");
  const std::uint64_t header_len = load<std::uint64_t>(bytes);
  if (header_len > size - 8)
    throw SafetensorsError("header length " + std::to_string(header_len) + " is larger than the file (" +
                           std::to_string(size) + " bytes)");
  data_start = 8 + header_len;
  Header h = parse_header(std::string(reinterpret_cast<const char*>(bytes) + 8, header_len), size - data_start);
  // The format indexes the whole data buffer, without holes: bytes no tensor
  // claims are a file appended to or offsets written wrong, never data.
  std::uint64_t end = 0;
  for (const Entry& e : h.entries) {
    if (e.begin == e.end) continue;
    if (e.begin != end)
      throw SafetensorsError("bytes " + std::to_string(end) + " to " + std::to_string(e.begin) +
                             " of the data belong to no tensor (safetensors indexes the whole data buffer)");
    end = e.end;
  }
  if (end != size - data_start)
    throw SafetensorsError(std::to_string(size - data_start - end) + " bytes follow the last tensor's data (safetensors "
                           "indexes the whole data buffer: was the file appended to?)");
  return h;
}
}  // namespace

Safetensors parse_safetensors(const unsigned char* bytes, std::size_t size) {
  std::uint64_t data_start = 0;
  Header h = parse_document(bytes, size, data_start);
  return assemble(std::move(h), bytes + data_start);
}

Safetensors read_safetensors(const std::string& path) { return SafetensorsFile(path).copy(); }

namespace {
// A mapped file that shrinks under its reader raises SIGBUS when a page past
// its new end is touched. The handler turns that into a message naming the
// file and exit 2, for the mappings registered here; any other SIGBUS takes
// the previous action. Slots are read in the handler: atomics, no locks.
struct MappedRegion {
  std::atomic<const char*> base{nullptr};
  std::atomic<std::size_t> size{0};
  char message[600] = {};
};
MappedRegion g_regions[16];
struct sigaction g_previous_sigbus {};

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const char* a = static_cast<const char*>(info->si_addr);
  for (const MappedRegion& r : g_regions) {
    const char* b = r.base.load();
    if (b && a >= b && a < b + r.size.load()) {
      const ssize_t ignored = ::write(2, r.message, std::strlen(r.message));
      (void)ignored;
      ::_exit(2);
    }
  }
  ::sigaction(SIGBUS, &g_previous_sigbus, nullptr);  // not ours: the fault repeats under the previous action
  (void)sig;
  (void)context;
}

MappedRegion* register_mapping(const void* base, std::size_t size, const std::string& path) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous_sigbus);
  });
  static std::mutex m;
  const std::lock_guard<std::mutex> lock(m);
  for (MappedRegion& r : g_regions)
    if (!r.base.load()) {
      std::snprintf(r.message, sizeof r.message,
                    "raceoracle: error: %.480s changed size while it was read (truncated or rewritten): "
                    "give it a file no other process writes\n",
                    path.c_str());
      r.size = size;
      r.base = static_cast<const char*>(base);
      return &r;
    }
  return nullptr;  // every slot taken: this mapping keeps the default action
}
}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  try {
    io::regular_file_size(path);  // a FIFO, a device or a directory is refused by name, before it is opened
  } catch (const io::FileError& e) {
    throw SafetensorsError(e.what());
  }
  // O_NONBLOCK: had a FIFO replaced the file since, the open returns at once (and fstat refuses it).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw SafetensorsError("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw SafetensorsError(path + ": not a regular file");
  }
  size_ = std::size_t(st.st_size);
  if (size_ > 0) {
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw SafetensorsError(path + ": cannot map: " + why);
    }
    ::madvise(map_, size_, MADV_SEQUENTIAL);
    region_ = register_mapping(map_, size_, path);
  }
  ::close(fd);  // the mapping keeps the file
  try {
    const auto* bytes = static_cast<const unsigned char*>(map_);
    std::uint64_t data_start = 0;
    header_ = parse_document(bytes, size_, data_start);
    data_ = bytes + data_start;
  } catch (const SafetensorsError& e) {
    unmap();
    throw SafetensorsError(path + ": " + e.what());
  }
}

SafetensorsFile::~SafetensorsFile() { unmap(); }

void SafetensorsFile::unmap() {
  if (region_) static_cast<MappedRegion*>(region_)->base = nullptr;
  region_ = nullptr;
  if (map_) ::munmap(map_, size_);
  map_ = nullptr;
}

TensorView SafetensorsFile::require(const std::string& name) const {
  for (const Entry& e : header_.entries)
    if (e.name == name) return {e.dtype, e.shape, data_ + e.begin, std::size_t(e.end - e.begin)};
  std::set<std::string> have;
  for (const Entry& e : header_.entries) have.insert(e.name);
  throw missing_tensor(name, have);
}

bool SafetensorsFile::has(const std::string& name) const {
  for (const Entry& e : header_.entries)
    if (e.name == name) return true;
  return false;
}

Safetensors SafetensorsFile::copy() const { return assemble(header_, data_); }

void SafetensorsFile::release(const void* p, std::size_t bytes) const {
  const std::uintptr_t page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t a = (std::uintptr_t(p) + page - 1) / page * page, b = (std::uintptr_t(p) + bytes) / page * page;
  if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);  // a read-only private map: read again if touched
}

void write_safetensors(const std::string& path, const Safetensors& s) {
  std::vector<TensorRef> refs;
  for (const auto& [name, t] : s.tensors) refs.push_back({name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()});
  try {
    io::AtomicFile f(path);  // whole or not at all
    f.write(encode_header(refs, s.metadata));
    for (const TensorRef& t : refs) f.write(t.data, t.bytes);
    f.commit();
  } catch (const io::FileError& e) {
    throw SafetensorsError(e.what());
  }
}

}  // namespace raceoracle::protocol
