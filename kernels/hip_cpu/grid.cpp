// The fiber scheduler behind hip_runtime.h: one block at a time per OS
// thread, one fiber per block thread.
#include <boost/context/fiber.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/hip_cpu/hip_runtime.h"
#include "kernels/hip_cpu/sanitizer.h"

namespace ctx = boost::context;

namespace hipcpu {

namespace {
/// The defaults, overridden by HIPCPU_WARP_SIZE (32 or 64), HIPCPU_SCHEDULE_SEED
/// (0: thread order), HIPCPU_PREEMPT (0 to 1000) and HIPCPU_WORKERS. A bad value is a clear error at the
/// first launch, not a silent fallback.
Config from_environment() {
  Config c;
  auto read = [](const char* name, long long fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    const long long x = std::strtoll(v, &end, 10);
    if (*end != '\0' || x < 0) {
      std::fprintf(stderr, "hipcpu: %s=%s is not a non-negative integer\n", name, v);
      std::exit(2);
    }
    return x;
  };
  c.warp_size = int(read("HIPCPU_WARP_SIZE", c.warp_size));
  if (c.warp_size != 32 && c.warp_size != 64) {
    std::fprintf(stderr, "hipcpu: HIPCPU_WARP_SIZE must be 32 or 64 (got %d)\n", c.warp_size);
    std::exit(2);
  }
  c.schedule_seed = std::uint64_t(read("HIPCPU_SCHEDULE_SEED", std::int64_t(c.schedule_seed)));
  c.preempt_per_mille = int(read("HIPCPU_PREEMPT", c.preempt_per_mille));
  if (c.preempt_per_mille > 1000) {
    std::fprintf(stderr, "hipcpu: HIPCPU_PREEMPT is a chance per mille, 0 to 1000 (got %d)\n", c.preempt_per_mille);
    std::exit(2);
  }
  c.workers = int(read("HIPCPU_WORKERS", c.workers));
  return c;
}
}  // namespace

Config& config() {
  static Config c = from_environment();
  return c;
}

namespace detail {
thread_local int t_lane = 0, t_warp_size = 0;
namespace {

// Kernel threads need little stack; sanitizers need more.
#if HIPCPU_ASAN
constexpr std::size_t kStackBytes = 512 * 1024;
#else
constexpr std::size_t kStackBytes = 128 * 1024;
#endif

/// Stacks are reused across blocks and launches: a block of 1024 threads
/// would otherwise allocate 1024 stacks per launch, and a launch's extra
/// workers are new OS threads, so a pool per OS thread would die with them
/// (under ASan that churn of 512 KiB stacks was half a kernel test's time).
/// One pool per process; it holds at most the stacks of the widest launch.
class StackPool {
 public:
  ctx::stack_context allocate() {
    void* p = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        p = free_.back();
        free_.pop_back();
      }
    }
    if (!p) {
      p = std::malloc(kStackBytes);
      if (!p) throw std::bad_alloc();
    }
    ctx::stack_context sc;
    sc.size = kStackBytes;
    sc.sp = static_cast<char*>(p) + kStackBytes;
    return sc;
  }
  void deallocate(ctx::stack_context& sc) {
    std::lock_guard lock(mutex_);
    free_.push_back(static_cast<char*>(sc.sp) - sc.size);
  }
  ~StackPool() {
    for (void* p : free_) std::free(p);
  }

 private:
  std::mutex mutex_;
  std::vector<void*> free_;
};
StackPool& stacks() {
  static StackPool pool;
  return pool;
}

struct PoolAllocator {
  ctx::stack_context allocate() { return stacks().allocate(); }
  void deallocate(ctx::stack_context& sc) { stacks().deallocate(sc); }
};

/// none: runnable; block, warp: at a barrier or a warp exchange; aside: set
/// aside at a shared access (runs when nothing else can); done: returned.
enum class Wait : std::uint8_t { none, block, warp, aside, done };

/// The schedule's draws: xoshiro256** seeded by splitmix64 (a shuffle per
/// pass draws once per thread, so the generator's cost is the scheduler's).
class ScheduleRng {
 public:
  void seed(std::uint64_t s) {
    for (std::uint64_t& w : s_) {
      s += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = s;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      w = z ^ (z >> 31);
    }
  }
  std::uint64_t operator()() {
    const std::uint64_t out = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0], s_[3] ^= s_[1], s_[1] ^= s_[2], s_[0] ^= s_[3], s_[2] ^= t, s_[3] = rotl(s_[3], 45);
    return out;
  }
  /// Uniform in [0, n) up to 2^-32 relative bias (Lemire's multiply-shift), n < 2^32.
  std::uint32_t below(std::uint32_t n) { return std::uint32_t(((*this)() >> 32) * n >> 32); }
  template <class T>
  void shuffle(std::vector<T>& v) {  // Fisher-Yates
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(std::uint32_t(i))]);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4] = {};
};

struct Block;
struct Thread {
  dim3 idx;
  int linear = 0;
  int lane = 0;  // linear % warp size
  Wait wait = Wait::none;
  bool synced = true;  // no shared access since the start, the last barrier or warp exchange
  bool odd_exchange = false;  // which half of the block's slots this thread's next warp exchange uses
  ctx::fiber fiber;  // the fiber itself while suspended
  ctx::fiber sink;   // the scheduler, while this fiber runs
};

struct Block {
  dim3 idx, dim, grid;
  int warp_size = 64;
  std::vector<Thread> threads;
  /// Two exchange slots per thread, used by alternate exchanges: a lane
  /// reads exchange k's half after its release while a faster lane may
  /// already publish exchange k + 1 in the other; none can publish k + 2
  /// before every lane has published k + 1, so after every read of k.
  std::vector<std::uint64_t> slots;
  std::vector<int> warp_arrived;
  int block_arrived = 0;
  ScheduleRng rng;            // the schedule's draws (shuffles, preemptions)
  int preempt_per_mille = 0;  // 0 while the schedule is thread order
  std::vector<int> aside;     // the threads set aside at a shared access
  std::string error;
};

thread_local Block* t_block = nullptr;
thread_local std::uint64_t t_block_serial = 0;  // the blocks this OS thread has started
thread_local Thread* t_thread = nullptr;
void enter(Thread& t) {  // t's fiber runs now
  t_thread = &t;
  t_lane = t.lane;
}
thread_local hipError_t t_last_error = hipSuccess;

/// Suspends the running fiber until the scheduler resumes it.
void suspend(Wait w) {
  Thread* self = t_thread;
  self->wait = w;
  self->sink = std::move(self->sink).resume();
  enter(*self);  // another fiber ran in between
  if (w == Wait::block || w == Wait::warp) self->synced = true;
}

int live_lanes(const Block& b, int warp) {
  const int n = int(b.threads.size());
  return std::min(b.warp_size, n - warp * b.warp_size);
}

void run_block(Block& b, const std::function<void()>& body, std::uint64_t seed, int preempt_per_mille) {
  ++t_block_serial;
  const int n = int(b.threads.size());
  for (int i = 0; i < n; ++i) {
    Thread& t = b.threads[std::size_t(i)];
    t.wait = Wait::none;
    t.synced = true;
    t.odd_exchange = false;
    t.fiber = ctx::fiber(std::allocator_arg, PoolAllocator{}, [&b, &t, &body](ctx::fiber&& sink) {
      t.sink = std::move(sink);
      enter(t);
      body();
      t.wait = Wait::done;
      return std::move(t.sink);
    });
  }
  b.rng.seed(seed);
  b.preempt_per_mille = seed != 0 ? preempt_per_mille : 0;
  b.aside.clear();
  int done = 0;
  // The threads that may run now; a pass runs each (in shuffled order) to its
  // next barrier, exchange, set-aside point or end.
  std::vector<int> ready(static_cast<std::size_t>(n)), running;
  std::iota(ready.begin(), ready.end(), 0);
  auto run = [&](Thread& t) {
    enter(t);
    t.fiber = std::move(t.fiber).resume();
    if (t.wait == Wait::done) ++done;
  };
  // Releases the barriers and warp exchanges whose every participant has
  // arrived, their threads made ready.
  auto release = [&] {
    const int live = n - done;
    if (b.block_arrived > 0 && b.block_arrived == live) {
      if (done > 0) b.error = "__syncthreads() reached by only some threads of a block (others exited)";
      for (int i = 0; i < n; ++i)
        if (b.threads[std::size_t(i)].wait == Wait::block) b.threads[std::size_t(i)].wait = Wait::none, ready.push_back(i);
      b.block_arrived = 0;
    }
    for (std::size_t w = 0; w < b.warp_arrived.size(); ++w) {
      if (b.warp_arrived[w] == 0 || b.warp_arrived[w] != live_lanes(b, int(w))) continue;
      for (int l = 0; l < live_lanes(b, int(w)); ++l) {
        const int i = int(w) * b.warp_size + l;
        if (b.threads[std::size_t(i)].wait == Wait::warp) b.threads[std::size_t(i)].wait = Wait::none, ready.push_back(i);
      }
      b.warp_arrived[w] = 0;
    }
  };
  while (done < n) {
    if (!ready.empty()) {
      if (seed != 0) b.rng.shuffle(ready);
      running.swap(ready);
      ready.clear();
      for (int i : running) run(b.threads[std::size_t(i)]);
      release();
      continue;
    }
    // Every thread waits: the set-aside ones go on one at a time, in random
    // order, each to its next barrier or exchange, until one is released.
    if (b.aside.empty()) {
      b.error = "deadlock: threads wait at a barrier that the rest of the block never reaches";
      break;
    }
    const std::size_t k = b.rng.below(std::uint32_t(b.aside.size()));
    Thread& t = b.threads[std::size_t(b.aside[k])];
    b.aside[k] = b.aside.back();
    b.aside.pop_back();
    t.wait = Wait::none;
    run(t);
    release();
  }
  if (!b.error.empty()) {
    // Unwind the stuck fibers by destroying them (their stacks return to the pool).
    for (Thread& t : b.threads) t.fiber = ctx::fiber();
  }
}

}  // namespace

const dim3& thread_idx() { return t_thread->idx; }
const dim3& block_idx() { return t_block->idx; }
const dim3& block_dim() { return t_block->dim; }
const dim3& grid_dim() { return t_block->grid; }

void fresh_shared(void* p, std::size_t bytes) {
  // The block serial each array was last filled in; a kernel declares few.
  thread_local std::vector<std::pair<void*, std::uint64_t>> filled;
  auto it = std::find_if(filled.begin(), filled.end(), [p](const auto& f) { return f.first == p; });
  if (it == filled.end()) it = filled.insert(filled.end(), {p, 0});
  if (it->second == t_block_serial) return;
  std::memset(p, 0xFF, bytes);
  it->second = t_block_serial;
}

/// Only a thread's first shared access after a barrier or a warp exchange
/// (or its start) may be preempted: the point a race hides behind, at a
/// cost that does not grow with a loop's accesses between barriers.
void preempt_point() {
  Block* b = t_block;
  Thread* self = t_thread;
  if (!b || !self || b->preempt_per_mille == 0 || !self->synced) return;
  self->synced = false;
  if (int(b->rng.below(1000)) >= b->preempt_per_mille) return;
  b->aside.push_back(self->linear);
  suspend(Wait::aside);
}

void syncthreads() {
  ++t_block->block_arrived;
  suspend(Wait::block);
}

std::uint64_t warp_exchange(std::uint64_t v, int src_lane) {
  Block& b = *t_block;
  Thread& self = *t_thread;
  const int me = self.linear;
  const int warp = me / b.warp_size;
  const std::size_t half = self.odd_exchange ? b.threads.size() : 0;
  self.odd_exchange = !self.odd_exchange;
  b.slots[half + std::size_t(me)] = v;
  ++b.warp_arrived[std::size_t(warp)];
  suspend(Wait::warp);  // every lane has published
  if (src_lane >= 0 && src_lane < live_lanes(b, warp)) return b.slots[half + std::size_t(warp * b.warp_size + src_lane)];
  return v;
}

hipError_t take_last_error() {
  hipError_t e = t_last_error;
  t_last_error = hipSuccess;
  return e;
}
hipError_t peek_last_error() { return t_last_error; }

void run_grid(dim3 grid, dim3 block, const std::function<void()>& body) {
  const std::uint64_t threads = std::uint64_t(block.x) * block.y * block.z;
  const std::uint64_t blocks = std::uint64_t(grid.x) * grid.y * grid.z;
  const Config cfg = config();
  if (threads == 0 || threads > 1024 || blocks == 0 || grid.y > 65535 || grid.z > 65535 ||
      (cfg.warp_size != 32 && cfg.warp_size != 64)) {
    t_last_error = hipErrorInvalidConfiguration;
    return;
  }
  const int workers = int(std::min<std::uint64_t>(
      blocks, std::uint64_t(cfg.workers > 0 ? cfg.workers : std::max(1u, std::thread::hardware_concurrency()))));
  std::atomic<std::uint64_t> next{0};
  std::mutex error_mutex;
  std::string first_error;
  auto worker = [&] {
    Block b;
    b.dim = block;
    b.grid = grid;
    b.warp_size = cfg.warp_size;
    b.threads.resize(threads);
    b.slots.resize(2 * threads);
    b.warp_arrived.assign((threads + cfg.warp_size - 1) / cfg.warp_size, 0);
    for (std::uint64_t i = 0; i < threads; ++i) {
      Thread& t = b.threads[i];
      t.linear = int(i);
      t.lane = int(i % std::uint64_t(cfg.warp_size));
      t.idx = dim3(unsigned(i % block.x), unsigned(i / block.x % block.y), unsigned(i / (std::uint64_t(block.x) * block.y)));
    }
    Block* outer = t_block;
    const int outer_warp_size = t_warp_size;
    t_block = &b;
    t_warp_size = b.warp_size;
    for (std::uint64_t k = next++; k < blocks; k = next++) {
      b.idx = dim3(unsigned(k % grid.x), unsigned(k / grid.x % grid.y), unsigned(k / (std::uint64_t(grid.x) * grid.y)));
      b.block_arrived = 0;
      std::fill(b.warp_arrived.begin(), b.warp_arrived.end(), 0);
      const std::uint64_t seed = cfg.schedule_seed == 0 ? 0 : cfg.schedule_seed * 0x9E3779B97F4A7C15ull + k + 1;
      run_block(b, body, seed, cfg.preempt_per_mille);
      if (!b.error.empty()) {
        std::lock_guard lock(error_mutex);
        if (first_error.empty()) first_error = b.error;
        break;
      }
    }
    t_block = outer;
    t_warp_size = outer_warp_size;
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (!first_error.empty()) {
    std::fprintf(stderr, "hipcpu: kernel launch failed: %s\n", first_error.c_str());
    t_last_error = hipErrorLaunchFailure;
  }
}

}  // namespace detail
}  // namespace hipcpu
