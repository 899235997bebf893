// Host side of HIP on the CPU: memory is host memory, launches are
// synchronous, so streams are no-ops and events are wall-clock stamps.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/hip_cpu/hip_runtime.h"

#include "kernels/hip_cpu/sanitizer.h"

namespace hipcpu::detail {
hipError_t take_last_error();
hipError_t peek_last_error();
}  // namespace hipcpu::detail

struct ihipEvent_t {
  std::chrono::steady_clock::time_point at;
  bool recorded = false;
};
struct ihipStream_t {};

namespace {
// Fresh allocations are filled with 0xFF (NaN as fp32 and bf16, -1 as int32)
// so a kernel that reads memory nobody wrote sees garbage, as on a GPU.
// Allocations above this size are left untouched: tests reserve large
// strided regions (64-bit offsets) of which they touch a few rows.
constexpr std::size_t kPoisonLimit = std::size_t(256) << 20;
}  // namespace

hipError_t hipMalloc(void** p, std::size_t bytes) {
  if (!p) return hipErrorInvalidValue;
  const std::size_t rounded = (bytes + 255) / 256 * 256;  // aligned_alloc's rule; GPUs align to 256 too
  *p = std::aligned_alloc(256, rounded);
  if (!*p && bytes) return hipErrorOutOfMemory;
  if (bytes <= kPoisonLimit) std::memset(*p, 0xFF, bytes);
#if HIPCPU_ASAN
  // The rounding would hide an access one element past the buffer from ASan.
  ASAN_POISON_MEMORY_REGION(static_cast<char*>(*p) + bytes, rounded - bytes);
#endif
  return hipSuccess;
}
hipError_t hipFree(void* p) {
  std::free(p);
  return hipSuccess;
}
hipError_t hipMemcpy(void* dst, const void* src, std::size_t bytes, hipMemcpyKind) {
  if ((!dst || !src) && bytes) return hipErrorInvalidValue;
  if (bytes) std::memmove(dst, src, bytes);
  return hipSuccess;
}
hipError_t hipMemcpyAsync(void* dst, const void* src, std::size_t bytes, hipMemcpyKind k, hipStream_t) {
  return hipMemcpy(dst, src, bytes, k);
}
hipError_t hipMemset(void* p, int value, std::size_t bytes) {
  if (!p && bytes) return hipErrorInvalidValue;
  if (bytes) std::memset(p, value, bytes);
  return hipSuccess;
}
hipError_t hipMemsetAsync(void* p, int value, std::size_t bytes, hipStream_t) { return hipMemset(p, value, bytes); }
hipError_t hipDeviceSynchronize() { return hipcpu::detail::peek_last_error(); }
hipError_t hipStreamCreate(hipStream_t* s) {
  *s = new ihipStream_t;
  return hipSuccess;
}
hipError_t hipStreamDestroy(hipStream_t s) {
  delete s;
  return hipSuccess;
}
hipError_t hipStreamSynchronize(hipStream_t) { return hipSuccess; }
hipError_t hipEventCreate(hipEvent_t* e) {
  *e = new ihipEvent_t;
  return hipSuccess;
}
hipError_t hipEventDestroy(hipEvent_t e) {
  delete e;
  return hipSuccess;
}
hipError_t hipEventRecord(hipEvent_t e, hipStream_t) {
  if (!e) return hipErrorInvalidValue;
  e->at = std::chrono::steady_clock::now();
  e->recorded = true;
  return hipSuccess;
}
hipError_t hipEventSynchronize(hipEvent_t e) { return e && e->recorded ? hipSuccess : hipErrorInvalidValue; }
hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) {
  if (!ms || !a || !b || !a->recorded || !b->recorded) return hipErrorInvalidValue;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return hipSuccess;
}
hipError_t hipGetLastError() { return hipcpu::detail::take_last_error(); }
hipError_t hipPeekAtLastError() { return hipcpu::detail::peek_last_error(); }
hipError_t hipGetDeviceCount(int* n) {
  *n = 1;
  return hipSuccess;
}
const char* hipGetErrorString(hipError_t e) {
  switch (e) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
  }
  return "hipErrorUnknown";
}
