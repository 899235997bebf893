#include "kernels/device_memory.h"

#include <cstdlib>
#include <string>

#include "kernels/device.h"
#if defined(RACEORACLE_BACKEND_CPU)
#include "kernels/hip_cpu/sanitizer.h"
#else
#define HIPCPU_ASAN 0
#endif

namespace raceoracle::kernels {
namespace {
void check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw std::runtime_error(std::string(what) + " failed: " + hipGetErrorString(e));
}
}  // namespace

const char* backend_name() {
#if defined(RACEORACLE_BACKEND_CPU)
  return "cpu";
#elif defined(__CUDACC__)
  return "nvidia";
#else
  return "amd";
#endif
}

int warp_size() {
#if defined(RACEORACLE_BACKEND_CPU)
  return hipcpu::config().warp_size;
#elif defined(__CUDACC__)
  return 32;
#else
  return 64;
#endif
}

EnvSetting device_visibility(int index) {
#if defined(RACEORACLE_BACKEND_CPU)
  (void)index;
  return {};
#else
  const std::string name = backend_name() == std::string("nvidia") ? "CUDA_VISIBLE_DEVICES" : "HIP_VISIBLE_DEVICES";
  std::string value = std::to_string(index);
  if (const char* seen = std::getenv(name.c_str()); seen && *seen) {  // the index-th entry of the list already set
    std::string list = seen;
    for (int i = 0; i < index && list.find(',') != std::string::npos; ++i) list.erase(0, list.find(',') + 1);
    value = list.substr(0, list.find(','));
  }
  return {name, value};
#endif
}

namespace {
/// CTest's resource allocation (cmake/raceoracle.cmake): a test handed GPU
/// "id:N,slots:1" sees only that GPU. Runs before main, so before the runtime.
bool see_the_gpu_ctest_gives() {
  const char* group = std::getenv("CTEST_RESOURCE_GROUP_0");
  const char* gpus = std::getenv("CTEST_RESOURCE_GROUP_0_GPUS");
  if (!group || std::string(group) != "gpus" || !gpus) return false;
  const std::string spec = gpus;
  const std::size_t at = spec.find("id:");
  if (at == std::string::npos) return false;
  const EnvSetting e = device_visibility(std::atoi(spec.c_str() + at + 3));
  return !e.name.empty() && ::setenv(e.name.c_str(), e.value.c_str(), 1) == 0;
}
[[maybe_unused]] const bool kSeesTheCtestGpu = see_the_gpu_ctest_gives();
}  // namespace

int device_count() {
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess) {
    (void)hipGetLastError();
    return 0;
  }
  return n;
}

std::string device_description() {
#if defined(RACEORACLE_BACKEND_CPU)
  return "HIP-on-CPU (fibers, Boost.Context)";
#elif defined(__CUDACC__)
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "no CUDA device";
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  return std::string(p.name) + ", sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs, CUDA driver " + std::to_string(driver) + ", runtime " +
         std::to_string(runtime);
#else
  hipDeviceProp_t p{};
  if (hipGetDeviceProperties(&p, 0) != hipSuccess) return "no HIP device";
  return std::string(p.name) + " (" + p.gcnArchName + ")";
#endif
}

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  check(hipMalloc(&p, bytes ? bytes : 1), "hipMalloc");
  return p;
}
void device_free(void* p) noexcept {
  if (p) (void)hipFree(p);
}
void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  check(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy to device");
}
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  check(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost), "hipMemcpy to host");
}
void guard_padding(const void* p, std::size_t bytes) {
#if HIPCPU_ASAN
  static const bool on = [] {
    const char* v = std::getenv("RACEORACLE_GUARD_PADDING");
    return v && std::string(v) == "1";
  }();
  if (on && bytes) ASAN_POISON_MEMORY_REGION(p, bytes);  // hipFree's free() clears it
#else
  (void)p, (void)bytes;
#endif
}
void device_synchronize() { check(hipDeviceSynchronize(), "hipDeviceSynchronize"); }

namespace {
__global__ void empty_kernel() {}
}  // namespace

void launch_empty_kernel() {
  hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(32), 0, device::launch_stream());
  check(hipGetLastError(), "empty kernel launch");
}

void device_copy_async(void* dst, const void* src, std::size_t bytes) {
  check(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, nullptr), "hipMemcpyAsync device to device");
}

double time_launches(const std::function<void(int)>& launch, int n) {
  hipEvent_t start, stop;
  check(hipEventCreate(&start), "hipEventCreate");
  check(hipEventCreate(&stop), "hipEventCreate");
  check(hipEventRecord(start, device::launch_stream()), "hipEventRecord");
  for (int i = 0; i < n; ++i) launch(i);
  check(hipEventRecord(stop, device::launch_stream()), "hipEventRecord");
  check(hipEventSynchronize(stop), "hipEventSynchronize");
  float ms = 0;
  check(hipEventElapsedTime(&ms, start, stop), "hipEventElapsedTime");
  (void)hipEventDestroy(start);
  (void)hipEventDestroy(stop);
  return ms;
}

namespace {
thread_local hipStream_t t_launch_stream = nullptr;
}  // namespace

hipStream_t device::launch_stream() { return t_launch_stream; }

LaunchStream::LaunchStream() : previous_(t_launch_stream) {
  hipStream_t s = nullptr;
#if defined(RACEORACLE_BACKEND_CPU)
  check(hipStreamCreate(&s), "hipStreamCreate");
#else
  // Non-blocking, as engines' streams are: no implicit sync with the default stream, whose use would end a capture.
  check(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags");
#endif
  stream_ = s;
  t_launch_stream = s;
}

LaunchStream::~LaunchStream() {
  t_launch_stream = static_cast<hipStream_t>(previous_);
  (void)hipStreamSynchronize(static_cast<hipStream_t>(stream_));
  (void)hipStreamDestroy(static_cast<hipStream_t>(stream_));
}

#if defined(RACEORACLE_BACKEND_CPU)
bool graphs_supported() { return false; }
LaunchGraph::LaunchGraph(const std::function<void(int)>&, int) {
  throw std::runtime_error("the cpu backend has no graphs (CUDA and HIP builds have)");
}
LaunchGraph::~LaunchGraph() = default;
LaunchGraph::LaunchGraph(LaunchGraph&&) noexcept {}
void LaunchGraph::replay() const {}
#else
bool graphs_supported() { return true; }

LaunchGraph::LaunchGraph(const std::function<void(int)>& launch, int n) {
  hipStream_t s = t_launch_stream;
  if (!s) throw std::runtime_error("a graph is captured on a LaunchStream, not the default stream");
  check(hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal), "hipStreamBeginCapture");
  hipGraph_t g = nullptr;
  try {
    for (int i = 0; i < n; ++i) launch(i);
  } catch (...) {
    (void)hipStreamEndCapture(s, &g);  // ends the capture whatever it holds, so the stream is usable again
    if (g) (void)hipGraphDestroy(g);
    throw;
  }
  check(hipStreamEndCapture(s, &g), "hipStreamEndCapture (a launch the graph cannot hold?)");
  graph_ = g;
  hipGraphExec_t e = nullptr;
#if defined(__CUDACC__)
  const hipError_t made = cudaGraphInstantiate(&e, g, 0);
#else
  const hipError_t made = hipGraphInstantiate(&e, g, nullptr, nullptr, 0);
#endif
  if (made != hipSuccess) {
    (void)hipGraphDestroy(g);
    check(made, "hipGraphInstantiate");
  }
  exec_ = e;
}

LaunchGraph::~LaunchGraph() {
  if (exec_) (void)hipGraphExecDestroy(static_cast<hipGraphExec_t>(exec_));
  if (graph_) (void)hipGraphDestroy(static_cast<hipGraph_t>(graph_));
}

LaunchGraph::LaunchGraph(LaunchGraph&& o) noexcept : graph_(o.graph_), exec_(o.exec_) { o.graph_ = o.exec_ = nullptr; }

void LaunchGraph::replay() const {
  check(hipGraphLaunch(static_cast<hipGraphExec_t>(exec_), t_launch_stream), "hipGraphLaunch");
}
#endif

std::size_t device_l2_bytes() {
#if defined(RACEORACLE_BACKEND_CPU)
  return 0;
#elif defined(__CUDACC__)
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  return std::size_t(l2);
#else
  hipDeviceProp_t p{};
  return hipGetDeviceProperties(&p, 0) == hipSuccess ? std::size_t(p.l2CacheSize) : 0;
#endif
}

}  // namespace raceoracle::kernels
