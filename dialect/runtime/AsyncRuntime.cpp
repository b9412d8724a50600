//===- AsyncRuntime.cpp - async runtime of JIT-compiled CPU code -----------===//
//
// MLIR's async runtime C ABI (the `mlirAsyncRuntime*` functions that
// convert-async-to-llvm calls; mlir/ExecutionEngine/AsyncRuntime.h) on a
// thread pool whose idle workers spin before they sleep.
//
// The functions are exported under MLIR's names from libdlvm_runtime.so (see
// dlvm-runtime/Runtime.h).
//
// Why not libmlir_async_runtime.so: its llvm::ThreadPool workers sleep on a
// condition variable as soon as the queue is empty. The CPU back end splits
// one matmul over two threads, so every parallel loop wakes a sleeping worker
// (a futex wake-up: tens to hundreds of microseconds on the 2-vCPU VMs
// measured, Nov 2026) and a 128x784x512 matmul takes about 1 ms. OpenBLAS and
// OpenMP runtimes spin for a while after a parallel region for this reason.
//
// Here:
//  - an idle worker polls the queue for `spin` microseconds (first with
//    `pause`, then yielding the CPU between polls so that other runnable
//    threads are not starved) before it sleeps;
//  - a thread that awaits a group or token runs queued tasks itself while it
//    waits, then spins, then sleeps;
//  - a worker about to run a task on the CPU that the task was queued from
//    moves to another CPU it may run on (its affinity mask without that CPU,
//    then the whole mask again: no thread is pinned). After a pause, the
//    kernel woke the worker onto the caller's vCPU and left it there for
//    several calls: both halves of a 2-thread matmul then shared one vCPU
//    (512^3 on 2 vCPUs, Nov 2026: calls 2-5 after a 0.2 s pause took 1.3-1.9
//    ms against 1.0 steady; OpenBLAS's took 1.0);
//  - the pool has as many workers as the programs loaded asked for: a program
//    compiled for N threads reserves N - 1 (the caller is the N-th), at most
//    cpus - 1, so threads=2 keeps one worker spinning, not one per core. A
//    program that reserved none still gets one worker on its first task.
//
// Sharing an OpenMP runtime's threads (dlvmRuntimeUseOpenMP): in a process
// where another library runs its own OpenMP team (PyTorch's libgomp), two
// pools that each spin after their parallel regions fight over the cores: a
// dlvm call right after a PyTorch op ran about 2x slower on 2 vCPUs while
// libgomp's workers spun out their ~300,000-pause budget. Given libgomp's
// `GOMP_parallel`, the pool starts no workers of its own (those it has go to
// sleep); queued tasks wait until a thread awaits a group, token or value,
// which then runs an OpenMP parallel region whose threads (already spinning,
// or woken by libgomp) drain the queue until the awaited object is ready.
//
// Semantics follow the upstream reference implementation: reference-counted
// tokens, values and groups; awaiters of the *AndExecute functions run on the
// thread that makes the token/value/group ready.
//
//===----------------------------------------------------------------------===//
#include "dlvm-runtime/Runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLVM_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define DLVM_CPU_RELAX() asm volatile("yield")
#else
#define DLVM_CPU_RELAX() ((void)0)
#endif

namespace {

using Clock = std::chrono::steady_clock;
using CoroHandle = void *;
using CoroResume = void (*)(void *);

// The spin budget: DLVM_ASYNC_SPIN_US, else 5 ms. Measured on the MLP
// training step (784-512-512-10, 2 vCPUs, Nov 2026), median ms per step by
// budget: batch 128: 0 us 9.3, 1 ms 4.9, 5 ms 4.4-4.5, 100 ms 4.5; batch 32:
// 0 us 4.1, 1 ms 2.1, 5 ms 1.9-2.0, 100 ms 1.5 (the tails shrink the most).
// LLVM's OpenMP runtime spins 200 ms by default (KMP_BLOCKTIME).
std::int64_t initialSpin() {
  if (const char *text = std::getenv("DLVM_ASYNC_SPIN_US")) {
    char *end = nullptr;
    long long value = std::strtoll(text, &end, 10);
    if (end != text && *end == '\0' && value >= 0)
      return value;
  }
  return 5000;
}

// GOMP_parallel(fn, data, num_threads, flags) of the OpenMP runtime whose
// threads run the tasks, or null (the pool's own workers).
using GompParallel = void (*)(void (*)(void *), void *, unsigned, unsigned);
std::atomic<GompParallel> gompParallel{nullptr};
std::atomic<std::uint64_t> openmpRegions{0};

std::atomic<std::int64_t> liveObjects{0};
std::atomic<std::int64_t> spinMicros{initialSpin()};
std::atomic<std::uint64_t> tasksByWorkers{0};
std::atomic<std::uint64_t> tasksByWaiters{0};
std::atomic<std::uint64_t> sleeps{0};
std::atomic<std::uint64_t> moves{0};
// The CPU of the last thread that queued a task (-1: unknown).
std::atomic<int> submitterCpu{-1};

// Moves the calling worker off the CPU that its task was queued from, if it
// is running there and may run elsewhere; its affinity mask is left as it was.
void leaveSubmitterCpu() {
  int cpu = sched_getcpu();
  if (cpu < 0 || cpu != submitterCpu.load(std::memory_order_relaxed))
    return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2 ||
      !CPU_ISSET(cpu, &allowed))
    return;
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof(others), &others) != 0)
    return;
  sched_setaffinity(0, sizeof(allowed), &allowed);
  moves.fetch_add(1, std::memory_order_relaxed);
}

// Calls `poll` until it returns true or the spin budget is spent; returns
// whether it succeeded. The first few microseconds poll with `pause`, the rest
// yield the CPU between polls.
template <typename Poll> bool spinUntil(Poll poll) {
  if (poll())
    return true;
  auto budget = std::chrono::microseconds(spinMicros.load(std::memory_order_relaxed));
  auto start = Clock::now();
  auto busyEnd = start + std::min(budget, std::chrono::microseconds(20));
  auto end = start + budget;
  for (unsigned i = 1;; ++i) {
    if (poll())
      return true;
    if ((i & 63) != 0) {
      DLVM_CPU_RELAX();
      continue;
    }
    auto now = Clock::now();
    if (now >= end)
      return false;
    if (now >= busyEnd)
      sched_yield();
  }
}

// ---------------------------------------------------------------------------
// Thread pool
// ---------------------------------------------------------------------------

struct Task {
  CoroHandle handle = nullptr;
  CoroResume resume = nullptr;
};

unsigned availableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

class Pool {
public:
  // The pool is created on first use and never destroyed (its workers are
  // detached). A child process after fork() gets a fresh one.
  static Pool &get() {
    static std::once_flag once;
    std::call_once(once, [] {
      instance() = new Pool();
      pthread_atfork(nullptr, nullptr, [] { instance() = new Pool(); });
    });
    return *instance();
  }

  // Makes sure `n` workers exist (at most cpus - 1, at least 1).
  void ensureWorkers(std::int64_t n) {
    std::int64_t wanted = std::clamp<std::int64_t>(n, 1, maxWorkers);
    if (started.load(std::memory_order_acquire) >= wanted)
      return;
    std::lock_guard<std::mutex> lock(growMutex);
    while (started.load(std::memory_order_relaxed) < wanted) {
      try {
        std::thread([this] { workerLoop(); }).detach();
      } catch (const std::system_error &) {
        // No more threads: waiters run the queued tasks themselves.
        return;
      }
      started.fetch_add(1, std::memory_order_release);
    }
  }

  void submit(Task task) {
    if (!gompParallel.load(std::memory_order_acquire))
      ensureWorkers(1);
    submitterCpu.store(sched_getcpu(), std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(task);
    queued.fetch_add(1, std::memory_order_release);
    if (sleeping > 0)
      wake.notify_one();
  }

  // Runs one queued task on the calling thread; false if there was none.
  bool runOne() {
    Task task;
    if (!pop(task))
      return false;
    task.resume(task.handle);
    return true;
  }

  // Wakes sleeping workers (after OpenMP sharing is turned off).
  void wakeAll() {
    std::lock_guard<std::mutex> lock(mutex);
    wake.notify_all();
  }

  std::int64_t workers() const { return started.load(std::memory_order_relaxed); }
  std::int64_t capacity() const { return maxWorkers + 1; }

private:
  Pool() : maxWorkers(std::max<std::int64_t>(1, availableCpus() - 1)) {}

  static Pool *&instance() {
    static Pool *pool = nullptr;
    return pool;
  }

  bool pop(Task &task) {
    if (queued.load(std::memory_order_acquire) == 0)
      return false;
    std::lock_guard<std::mutex> lock(mutex);
    if (queue.empty())
      return false;
    task = queue.front();
    queue.pop_front();
    queued.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }

  [[noreturn]] void workerLoop() {
    auto shared = [] { return gompParallel.load(std::memory_order_acquire) != nullptr; };
    for (;;) {
      Task task;
      if (!shared() && spinUntil([&] { return shared() || pop(task); }) && !shared()) {
        leaveSubmitterCpu();
        task.resume(task.handle);
        tasksByWorkers.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (task.handle) { // popped just as OpenMP sharing began: run it
        task.resume(task.handle);
        tasksByWorkers.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      std::unique_lock<std::mutex> lock(mutex);
      ++sleeping;
      sleeps.fetch_add(1, std::memory_order_relaxed);
      wake.wait(lock, [&] { return !queue.empty() && !shared(); });
      --sleeping;
    }
  }

  const std::int64_t maxWorkers;
  std::mutex growMutex;
  std::atomic<std::int64_t> started{0};

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Task> queue;
  std::atomic<std::int64_t> queued{0};
  int sleeping = 0;
};

// ---------------------------------------------------------------------------
// Reference-counted runtime objects
// ---------------------------------------------------------------------------

enum class State : std::int8_t { Unavailable, Available, Error };

class RefCounted {
public:
  explicit RefCounted(std::int64_t count) : refCount(count) {
    liveObjects.fetch_add(1, std::memory_order_relaxed);
  }
  virtual ~RefCounted() { liveObjects.fetch_sub(1, std::memory_order_relaxed); }
  RefCounted(const RefCounted &) = delete;
  RefCounted &operator=(const RefCounted &) = delete;

  void addRef(std::int64_t count = 1) {
    refCount.fetch_add(count, std::memory_order_relaxed);
  }
  void dropRef(std::int64_t count = 1) {
    if (refCount.fetch_sub(count, std::memory_order_acq_rel) == count)
      delete this;
  }

private:
  std::atomic<std::int64_t> refCount;
};

// What tokens, values and groups share: a completion flag that waiters can
// spin on, and awaiters to run on completion.
struct Awaitable : RefCounted {
  using RefCounted::RefCounted;

  // Blocks until ready() holds: runs queued tasks (on an OpenMP team when
  // sharing one), spins, then sleeps.
  template <typename Ready> void await(Ready ready) {
    if (GompParallel parallel = gompParallel.load(std::memory_order_acquire); parallel && !ready()) {
      struct Drain {
        Ready *ready;
        static void run(void *data) {
          Ready &isReady = *static_cast<Drain *>(data)->ready;
          while (!isReady()) {
            if (Pool::get().runOne())
              tasksByWaiters.fetch_add(1, std::memory_order_relaxed);
            else
              DLVM_CPU_RELAX();
          }
        }
      } drain{&ready};
      openmpRegions.fetch_add(1, std::memory_order_relaxed);
      parallel(&Drain::run, &drain, 0, 0);
      if (ready())
        return;
    }
    if (spinUntil([&] {
          if (ready())
            return true;
          if (Pool::get().runOne())
            tasksByWaiters.fetch_add(1, std::memory_order_relaxed);
          return false;
        }))
      return;
    std::unique_lock<std::mutex> lock(mutex);
    sleeps.fetch_add(1, std::memory_order_relaxed);
    done.wait(lock, ready);
  }

  // Runs `execute` now if ready() holds, else when the object becomes ready.
  template <typename Ready>
  void awaitAndExecute(Ready ready, CoroHandle handle, CoroResume resume) {
    std::unique_lock<std::mutex> lock(mutex);
    if (ready()) {
      lock.unlock();
      resume(handle);
      return;
    }
    awaiters.emplace_back([handle, resume] { resume(handle); });
  }

  // Call with `mutex` held, after the state change.
  void notifyLocked() {
    done.notify_all();
    for (auto &awaiter : awaiters)
      awaiter();
    awaiters.clear();
  }

  std::mutex mutex;
  std::condition_variable done;
  std::vector<std::function<void()>> awaiters;
};

// Created with two references: one for the caller of async.execute, one
// dropped when the task emplaces it.
struct AsyncToken : Awaitable {
  AsyncToken() : Awaitable(2) {}
  std::atomic<State> state{State::Unavailable};
  bool ready() const { return state.load(std::memory_order_acquire) != State::Unavailable; }
};

struct AsyncValue : Awaitable {
  explicit AsyncValue(std::int64_t size) : Awaitable(2), storage(size) {}
  std::atomic<State> state{State::Unavailable};
  std::vector<std::byte> storage;
  bool ready() const { return state.load(std::memory_order_acquire) != State::Unavailable; }
};

struct AsyncGroup : Awaitable {
  explicit AsyncGroup(std::int64_t size) : Awaitable(1), pending(size) {}
  std::atomic<std::int64_t> pending;
  std::atomic<std::int64_t> errors{0};
  std::atomic<std::int64_t> rank{0};
  bool ready() const { return pending.load(std::memory_order_acquire) == 0; }
};

template <typename T> void setState(T *object, State state) {
  {
    std::lock_guard<std::mutex> lock(object->mutex);
    object->state.store(state, std::memory_order_release);
    object->notifyLocked();
  }
  object->dropRef(); // the reference the task held
}

// ---------------------------------------------------------------------------
// The C ABI
// ---------------------------------------------------------------------------

extern "C" {

void dlvmAsyncAddRef(void *object, std::int64_t count) {
  static_cast<RefCounted *>(object)->addRef(count);
}
void dlvmAsyncDropRef(void *object, std::int64_t count) {
  static_cast<RefCounted *>(object)->dropRef(count);
}
void *dlvmAsyncCreateToken() { return new AsyncToken(); }
void *dlvmAsyncCreateValue(std::int64_t size) { return new AsyncValue(size); }
void *dlvmAsyncCreateGroup(std::int64_t size) { return new AsyncGroup(size); }

std::int64_t dlvmAsyncAddTokenToGroup(AsyncToken *token, AsyncGroup *group) {
  std::int64_t rank = group->rank.fetch_add(1, std::memory_order_relaxed);
  auto onTokenReady = [group, token] {
    if (token->state.load(std::memory_order_acquire) == State::Error)
      group->errors.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(group->mutex);
    if (group->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
      group->notifyLocked();
  };
  std::unique_lock<std::mutex> lock(token->mutex);
  if (token->ready()) {
    lock.unlock();
    onTokenReady();
    return rank;
  }
  group->addRef(); // kept alive until the token is ready
  token->awaiters.emplace_back([group, onTokenReady] {
    onTokenReady();
    group->dropRef();
  });
  return rank;
}

void dlvmAsyncEmplaceToken(AsyncToken *token) { setState(token, State::Available); }
void dlvmAsyncEmplaceValue(AsyncValue *value) { setState(value, State::Available); }
void dlvmAsyncSetTokenError(AsyncToken *token) { setState(token, State::Error); }
void dlvmAsyncSetValueError(AsyncValue *value) { setState(value, State::Error); }

bool dlvmAsyncIsTokenError(AsyncToken *token) {
  return token->state.load(std::memory_order_acquire) == State::Error;
}
bool dlvmAsyncIsValueError(AsyncValue *value) {
  return value->state.load(std::memory_order_acquire) == State::Error;
}
bool dlvmAsyncIsGroupError(AsyncGroup *group) {
  return group->errors.load(std::memory_order_acquire) > 0;
}

void dlvmAsyncAwaitToken(AsyncToken *token) {
  token->await([token] { return token->ready(); });
}
void dlvmAsyncAwaitValue(AsyncValue *value) {
  value->await([value] { return value->ready(); });
}
void dlvmAsyncAwaitAllInGroup(AsyncGroup *group) {
  group->await([group] { return group->ready(); });
}

void *dlvmAsyncGetValueStorage(AsyncValue *value) { return value->storage.data(); }

void dlvmAsyncExecute(CoroHandle handle, CoroResume resume) {
  Pool::get().submit({handle, resume});
}

void dlvmAsyncAwaitTokenAndExecute(AsyncToken *token, CoroHandle handle,
                                   CoroResume resume) {
  token->awaitAndExecute([token] { return token->ready(); }, handle, resume);
}
void dlvmAsyncAwaitValueAndExecute(AsyncValue *value, CoroHandle handle,
                                   CoroResume resume) {
  value->awaitAndExecute([value] { return value->ready(); }, handle, resume);
}
void dlvmAsyncAwaitAllInGroupAndExecute(AsyncGroup *group, CoroHandle handle,
                                        CoroResume resume) {
  group->awaitAndExecute([group] { return group->ready(); }, handle, resume);
}

std::int64_t dlvmAsyncGetNumWorkerThreads() { return Pool::get().capacity(); }

} // extern "C"

} // namespace

// ---------------------------------------------------------------------------
// Exported under the names convert-async-to-llvm calls
// ---------------------------------------------------------------------------

extern "C" {

// Each forwards to its implementation above (which takes the runtime's own
// types); upstream declares them with opaque pointers.
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeAddRef(void *o, int64_t n) { dlvmAsyncAddRef(o, n); }
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeDropRef(void *o, int64_t n) { dlvmAsyncDropRef(o, n); }
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeExecute(CoroHandle h, CoroResume r) { dlvmAsyncExecute(h, r); }
DLVM_RUNTIME_EXPORT void *mlirAsyncRuntimeGetValueStorage(void *v) {
  return dlvmAsyncGetValueStorage(static_cast<AsyncValue *>(v));
}
DLVM_RUNTIME_EXPORT void *mlirAsyncRuntimeCreateToken() { return dlvmAsyncCreateToken(); }
DLVM_RUNTIME_EXPORT void *mlirAsyncRuntimeCreateValue(int64_t size) { return dlvmAsyncCreateValue(size); }
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeEmplaceToken(void *t) {
  dlvmAsyncEmplaceToken(static_cast<AsyncToken *>(t));
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeEmplaceValue(void *v) {
  dlvmAsyncEmplaceValue(static_cast<AsyncValue *>(v));
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeSetTokenError(void *t) {
  dlvmAsyncSetTokenError(static_cast<AsyncToken *>(t));
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeSetValueError(void *v) {
  dlvmAsyncSetValueError(static_cast<AsyncValue *>(v));
}
DLVM_RUNTIME_EXPORT bool mlirAsyncRuntimeIsTokenError(void *t) {
  return dlvmAsyncIsTokenError(static_cast<AsyncToken *>(t));
}
DLVM_RUNTIME_EXPORT bool mlirAsyncRuntimeIsValueError(void *v) {
  return dlvmAsyncIsValueError(static_cast<AsyncValue *>(v));
}
DLVM_RUNTIME_EXPORT bool mlirAsyncRuntimeIsGroupError(void *g) {
  return dlvmAsyncIsGroupError(static_cast<AsyncGroup *>(g));
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeAwaitToken(void *t) {
  dlvmAsyncAwaitToken(static_cast<AsyncToken *>(t));
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeAwaitValue(void *v) {
  dlvmAsyncAwaitValue(static_cast<AsyncValue *>(v));
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeAwaitTokenAndExecute(void *t, CoroHandle h, CoroResume r) {
  dlvmAsyncAwaitTokenAndExecute(static_cast<AsyncToken *>(t), h, r);
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeAwaitValueAndExecute(void *v, CoroHandle h, CoroResume r) {
  dlvmAsyncAwaitValueAndExecute(static_cast<AsyncValue *>(v), h, r);
}
DLVM_RUNTIME_EXPORT void *mlirAsyncRuntimeCreateGroup(int64_t size) { return dlvmAsyncCreateGroup(size); }
DLVM_RUNTIME_EXPORT int64_t mlirAsyncRuntimeAddTokenToGroup(void *t, void *g) {
  return dlvmAsyncAddTokenToGroup(static_cast<AsyncToken *>(t), static_cast<AsyncGroup *>(g));
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeAwaitAllInGroup(void *g) {
  dlvmAsyncAwaitAllInGroup(static_cast<AsyncGroup *>(g));
}
DLVM_RUNTIME_EXPORT void mlirAsyncRuntimeAwaitAllInGroupAndExecute(void *g, CoroHandle h, CoroResume r) {
  dlvmAsyncAwaitAllInGroupAndExecute(static_cast<AsyncGroup *>(g), h, r);
}
// (sic) the upstream name
DLVM_RUNTIME_EXPORT int64_t mlirAsyncRuntimGetNumWorkerThreads() { return dlvmAsyncGetNumWorkerThreads(); }

DLVM_RUNTIME_EXPORT void dlvmRuntimeAsyncStats(DlvmAsyncStats *stats) {
  *stats = {liveObjects.load(), Pool::get().workers(), tasksByWorkers.load(),
            tasksByWaiters.load(), sleeps.load(), spinMicros.load(), moves.load()};
}

DLVM_RUNTIME_EXPORT void dlvmRuntimeReserveWorkers(int64_t workers) {
  if (workers > 0 && !gompParallel.load(std::memory_order_acquire))
    Pool::get().ensureWorkers(workers);
}

DLVM_RUNTIME_EXPORT void dlvmRuntimeUseOpenMP(void *gompParallelFn) {
  gompParallel.store(reinterpret_cast<GompParallel>(gompParallelFn), std::memory_order_release);
  if (!gompParallelFn)
    Pool::get().wakeAll();
}

DLVM_RUNTIME_EXPORT uint64_t dlvmRuntimeOpenMPRegions(void) { return openmpRegions.load(); }

DLVM_RUNTIME_EXPORT int32_t dlvmRuntimeSharesOpenMP(void) {
  return gompParallel.load(std::memory_order_acquire) != nullptr;
}

DLVM_RUNTIME_EXPORT void dlvmRuntimeSetSpin(int64_t microseconds) {
  spinMicros.store(std::max<std::int64_t>(0, microseconds));
}

DLVM_RUNTIME_EXPORT const char *const *dlvmRuntimeSymbols(void) {
  static const char *const names[] = {
      "_mlir_memref_to_llvm_alloc",
      "_mlir_memref_to_llvm_aligned_alloc",
      "_mlir_memref_to_llvm_free",
      "mlirAsyncRuntimeAddRef",
      "mlirAsyncRuntimeDropRef",
      "mlirAsyncRuntimeExecute",
      "mlirAsyncRuntimeGetValueStorage",
      "mlirAsyncRuntimeCreateToken",
      "mlirAsyncRuntimeCreateValue",
      "mlirAsyncRuntimeEmplaceToken",
      "mlirAsyncRuntimeEmplaceValue",
      "mlirAsyncRuntimeSetTokenError",
      "mlirAsyncRuntimeSetValueError",
      "mlirAsyncRuntimeIsTokenError",
      "mlirAsyncRuntimeIsValueError",
      "mlirAsyncRuntimeIsGroupError",
      "mlirAsyncRuntimeAwaitToken",
      "mlirAsyncRuntimeAwaitValue",
      "mlirAsyncRuntimeAwaitTokenAndExecute",
      "mlirAsyncRuntimeAwaitValueAndExecute",
      "mlirAsyncRuntimeCreateGroup",
      "mlirAsyncRuntimeAddTokenToGroup",
      "mlirAsyncRuntimeAwaitAllInGroup",
      "mlirAsyncRuntimeAwaitAllInGroupAndExecute",
      "mlirAsyncRuntimGetNumWorkerThreads",
      "dlvmRuntimeSharesOpenMP",
      "__truncsfbf2",
      "__truncdfbf2",
      nullptr,
  };
  return names;
}

} // extern "C"
