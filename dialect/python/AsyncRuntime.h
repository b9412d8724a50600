//===- AsyncRuntime.h - async runtime of JIT-compiled CPU code -*- C++ -*-===//
//
// MLIR's async runtime ABI implemented on a spinning thread pool (see
// AsyncRuntime.cpp). The Python extension hands these addresses to the
// ExecutionEngine in place of libmlir_async_runtime.so.
//
//===----------------------------------------------------------------------===//
#ifndef DLVM_PYTHON_ASYNCRUNTIME_H
#define DLVM_PYTHON_ASYNCRUNTIME_H

#include <cstdint>
#include <utility>
#include <vector>

namespace dlvm {

/// (symbol name, address) of every function of MLIR's async runtime ABI.
std::vector<std::pair<const char *, void *>> asyncRuntimeSymbols();

struct AsyncRuntimeStats {
  std::int64_t liveObjects;     // tokens, values and groups not yet freed
  std::int64_t workers;         // worker threads started
  std::uint64_t tasksByWorkers; // tasks run by pool workers
  std::uint64_t tasksByWaiters; // tasks run by threads waiting on a group/token
  std::uint64_t sleeps;         // times a worker or waiter went to sleep
  std::int64_t spinMicros;      // spin budget before sleeping
};

AsyncRuntimeStats asyncRuntimeStats();

/// Makes sure `workers` worker threads exist (at most cpus - 1): a program
/// compiled for N threads reserves N - 1.
void reserveAsyncWorkers(std::int64_t workers);

/// How long an idle worker or a waiter polls before it sleeps.
void setAsyncRuntimeSpin(std::int64_t microseconds);

} // namespace dlvm

#endif // DLVM_PYTHON_ASYNCRUNTIME_H
