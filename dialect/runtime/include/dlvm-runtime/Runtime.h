/*===- Runtime.h - the runtime of compiled dlvm code --------------*- C -*-===*
 *
 * libdlvm_runtime.so is what code compiled by dlvm-mlir calls at run time,
 * and nothing else: it has no MLIR or LLVM in it. Every shared object that
 * `dlvm_mlir.compile` or `dlvm-compile` builds for the CPU links it
 * (DT_NEEDED, found through the object's rpath), and the Python extension
 * `dlvm_mlir._dlvm` links it for the statistics below, so one process holds
 * one buffer cache and one thread pool however many programs it loads.
 *
 * It exports, under the names MLIR's lowerings call:
 *  - MLIR's generic allocation functions (`finalize-memref-to-llvm` with
 *    `use-generic-functions`): `_mlir_memref_to_llvm_alloc`,
 *    `_mlir_memref_to_llvm_aligned_alloc`, `_mlir_memref_to_llvm_free`, on a
 *    caching allocator (BufferCache.cpp);
 *  - MLIR's async runtime ABI (`convert-async-to-llvm`: the
 *    `mlirAsyncRuntime*` functions of mlir/ExecutionEngine/AsyncRuntime.h) on
 *    a thread pool whose idle workers spin before they sleep
 *    (AsyncRuntime.cpp);
 *  - the compiler-rt builtins `__truncsfbf2` and `__truncdfbf2` that LLVM
 *    calls to round to bf16 and libgcc lacks (Conversions.cpp);
 * and the C functions below.
 *
 *===----------------------------------------------------------------------===*/
#ifndef DLVM_RUNTIME_RUNTIME_H
#define DLVM_RUNTIME_RUNTIME_H

#include <stdint.h>

#if defined(_WIN32)
#define DLVM_RUNTIME_EXPORT
#else
#define DLVM_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Counters of the caching allocator. */
typedef struct {
  uint64_t cachedBytes; /* bytes held for reuse */
  uint64_t hits;        /* allocations served from the cache */
  uint64_t misses;      /* allocations that went to the system */
  uint64_t capacity;    /* at most this many bytes are held */
  uint64_t liveBytes;   /* bytes handed out and not freed */
  uint64_t liveBlocks;  /* blocks handed out and not freed */
  uint64_t released;    /* blocks freed after a failed call (dlvmRuntimeCallEnd) */
} DlvmBufferStats;

/* Counters of the async runtime. */
typedef struct {
  int64_t liveObjects;     /* tokens, values and groups not yet freed */
  int64_t workers;         /* worker threads started */
  uint64_t tasksByWorkers; /* tasks run by pool workers */
  uint64_t tasksByWaiters; /* tasks run by threads waiting on a group/token */
  uint64_t sleeps;         /* times a worker or waiter went to sleep */
  int64_t spinMicros;      /* spin budget before sleeping */
  uint64_t moves;          /* times a worker left the CPU of the thread that queued its task */
} DlvmAsyncStats;

DLVM_RUNTIME_EXPORT void dlvmRuntimeBufferStats(DlvmBufferStats *stats);

/* Frees every block the allocator holds for reuse. */
DLVM_RUNTIME_EXPORT void dlvmRuntimeTrimBuffers(void);

/* The largest allocation the system refused since the last call (0: none),
 * and reset: compiled code that gets NULL from the allocator stores -1 in its
 * error slot and returns early. */
DLVM_RUNTIME_EXPORT uint64_t dlvmRuntimeTakeFailedAllocation(void);

/* Brackets a call of compiled code: Begin returns a mark; End(mark, failed)
 * releases the blocks handed out since the mark and not freed when the call
 * failed (it returned early, leaving its temporaries) and no other call is in
 * flight, and returns their count. */
DLVM_RUNTIME_EXPORT uint64_t dlvmRuntimeCallBegin(void);
DLVM_RUNTIME_EXPORT uint64_t dlvmRuntimeCallEnd(uint64_t mark, int failed);

DLVM_RUNTIME_EXPORT void dlvmRuntimeAsyncStats(DlvmAsyncStats *stats);

/* Makes sure `workers` worker threads exist (at most cpus - 1): a program
 * compiled for N threads reserves N - 1 (its caller is the N-th). */
DLVM_RUNTIME_EXPORT void dlvmRuntimeReserveWorkers(int64_t workers);

/* Runs parallel loops on an OpenMP runtime's threads instead of the pool's own:
 * `gompParallelFn` is that runtime's `GOMP_parallel` (libgomp's ABI of
 * `#pragma omp parallel`), e.g. of the libgomp PyTorch loaded; NULL goes back
 * to the pool's workers. Use it when another library's OpenMP team runs in the
 * same process: two pools spinning after their regions slow each other down. */
DLVM_RUNTIME_EXPORT void dlvmRuntimeUseOpenMP(void *gompParallelFn);

/* 1 while parallel loops run on an OpenMP team (dlvmRuntimeUseOpenMP), else 0:
 * compiled code then queues every block of a loop as a task instead of running
 * the first on the calling thread before awaiting the others. */
DLVM_RUNTIME_EXPORT int32_t dlvmRuntimeSharesOpenMP(void);

/* How many OpenMP parallel regions the runtime has run (see above). */
DLVM_RUNTIME_EXPORT uint64_t dlvmRuntimeOpenMPRegions(void);

/* How long an idle worker or a waiting thread polls before it sleeps
 * (default 5000, or $DLVM_ASYNC_SPIN_US). */
DLVM_RUNTIME_EXPORT void dlvmRuntimeSetSpin(int64_t microseconds);

/* The names of the functions compiled code may call here (the allocation
 * functions, the async runtime ABI, the bf16 builtins), NULL-terminated. */
DLVM_RUNTIME_EXPORT const char *const *dlvmRuntimeSymbols(void);

#ifdef __cplusplus
}
#endif

#endif /* DLVM_RUNTIME_RUNTIME_H */
