#pragma once
/// Device memory and device facts for plain C++ callers (tests, properties,
/// the CLI), implemented per backend in device_memory.hip.
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace raceoracle::kernels {

const char* backend_name();  ///< "cpu", "nvidia" or "amd"
/// The lanes of a warp the kernels run with: the cpu layer's setting
/// (hipcpu::Config), 32 on nvidia, 64 on amd (the Instinct targets).
int warp_size();
int device_count();          ///< 0 when the backend has no usable device
std::string device_description();

/// The environment variable and value that make a child process see only
/// device `index` of those this process sees (CUDA_VISIBLE_DEVICES or
/// HIP_VISIBLE_DEVICES, an existing list respected); {"", ""} on cpu. A
/// process that CTest gives a GPU (CTEST_RESOURCE_GROUP_0_GPUS, id:N) sets
/// it for itself before the runtime starts.
struct EnvSetting {
  std::string name, value;
};
EnvSetting device_visibility(int index);

/// Throw std::runtime_error naming the HIP error.
void* device_alloc(std::size_t bytes);
void device_free(void* p) noexcept;
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);
/// Padding no kernel may touch (between rows, past the last). On the cpu
/// backend under AddressSanitizer, with RACEORACLE_GUARD_PADDING=1 in the
/// environment, any access to it is then reported; otherwise a no-op. Off by
/// default: the padding holds poison values so that an over-read shows as a
/// wrong token, which the named mutant tail_unmasked relies on. The mutation
/// engine's sanitizer pass turns it on.
void guard_padding(const void* p, std::size_t bytes);
void device_synchronize();

/// Device time in ms of `n` back-to-back calls of `launch(i)`, i = 0..n-1,
/// between two events on the launch stream (the host queues ahead, so the
/// figure is GPU time, not host launch overhead, once a launch outlasts it).
double time_launches(const std::function<void(int)>& launch, int n);

/// A stream of its own that this thread's kernel launches (and
/// time_launches's events) go to while the object lives; before it and
/// after, the default stream (or an enclosing LaunchStream's).
class LaunchStream {
 public:
  LaunchStream();
  ~LaunchStream();
  LaunchStream(const LaunchStream&) = delete;
  LaunchStream& operator=(const LaunchStream&) = delete;

 private:
  void* stream_ = nullptr;
  void* previous_ = nullptr;
};

/// Whether the backend has graphs (CUDA and HIP do; the cpu layer does not).
bool graphs_supported();

/// `launch(i)`, i = 0..n-1, captured once into a graph on the current
/// LaunchStream (the default stream cannot be captured) and replayed whole
/// by replay() on that stream, as an engine replays its decode step: the
/// launches' host work is done once, at capture. Throws std::runtime_error
/// where graphs are not supported, outside a LaunchStream, or when a launch
/// fails to capture.
class LaunchGraph {
 public:
  LaunchGraph(const std::function<void(int)>& launch, int n);
  ~LaunchGraph();
  LaunchGraph(LaunchGraph&& o) noexcept;
  LaunchGraph(const LaunchGraph&) = delete;
  LaunchGraph& operator=(const LaunchGraph&) = delete;
  LaunchGraph& operator=(LaunchGraph&&) = delete;
  void replay() const;

 private:
  void* graph_ = nullptr;
  void* exec_ = nullptr;
};
void launch_empty_kernel();
/// Device-to-device copy on the default stream, not waited for.
void device_copy_async(void* dst, const void* src, std::size_t bytes);
std::size_t device_l2_bytes();  ///< 0 when unknown (the cpu backend)

/// Owning device array of trivially copyable T.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : n_(n), p_(static_cast<T*>(device_alloc(n * sizeof(T)))) {}
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  DeviceArray(DeviceArray&& o) noexcept : n_(o.n_), p_(o.p_) { o.p_ = nullptr, o.n_ = 0; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(n_, o.n_), std::swap(p_, o.p_);
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { device_free(p_); }

  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const std::vector<T>& host, std::size_t offset = 0) {
    if (offset + host.size() > n_) throw std::out_of_range("DeviceArray::upload past the end");
    copy_to_device(p_ + offset, host.data(), host.size() * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    copy_to_host(host.data(), p_, n_ * sizeof(T));
    return host;
  }

 private:
  std::size_t n_ = 0;
  T* p_ = nullptr;
};

}  // namespace raceoracle::kernels
