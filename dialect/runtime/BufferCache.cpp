//===- BufferCache.cpp - the allocator of compiled dlvm code ---------------===//
//
// A caching allocator for the buffers of compiled code. The CPU back end
// lowers memref.alloc/dealloc to MLIR's generic allocation functions
// (finalize-memref-to-llvm{use-generic-functions}), exported here under
// those names:
// a freed block is kept, keyed by (size, alignment), for the next allocation
// of that shape. Compiled functions allocate the same temporaries on every
// call; with plain malloc/free, glibc returns large blocks to the OS and each
// call page-faults them in again (measured: 30-40% of an MLP training step).
// Cached bytes are capped; beyond the cap blocks really are freed.
//
// An allocation the system refuses is retried once with the cache emptied;
// if it still fails, the size is recorded for the error message
// (dlvmRuntimeTakeFailedAllocation) and NULL is returned: compiled code checks
// it, stores -1 in its error slot and returns (addAllocationChecks in
// dialect/lib/CAPI/Codegen.cpp).
//
// Blocks handed out and not yet freed are kept in a list, numbered in the
// order they were handed out. A call that returns early (a refused buffer, a
// failed index check) leaves its earlier temporaries there: every compiled
// entry point brackets its calls (dlvmRuntimeCallBegin / dlvmRuntimeCallEnd,
// addCallBrackets in dialect/lib/CAPI/Codegen.cpp), for Python and C callers
// alike, and after a failed call with no other call in flight the blocks
// handed out during it are released.
//===----------------------------------------------------------------------===//
#include "dlvm-runtime/Runtime.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace {
struct BlockHeader {
  void *raw;
  std::size_t size;
  std::size_t alignment;
  std::uint64_t serial; // when it was handed out (live blocks)
  BlockHeader *prev, *next; // the list of live blocks
};

BlockHeader *headerOf(void *payload) {
  return reinterpret_cast<BlockHeader *>(static_cast<char *>(payload) - sizeof(BlockHeader));
}

class BufferCache {
public:
  static BufferCache &get() {
    static BufferCache *cache = new BufferCache(); // never destroyed
    return *cache;
  }

  void *allocate(std::size_t alignment, std::size_t size) {
    alignment = std::max<std::size_t>(alignment, alignof(std::max_align_t));
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto found = free.find({size, alignment});
      if (found != free.end() && !found->second.empty()) {
        void *block = found->second.back();
        found->second.pop_back();
        cached -= size;
        ++hits;
        link(headerOf(block));
        return block;
      }
      ++misses;
    }
    // Room for the header before an aligned payload.
    std::size_t offset =
        (sizeof(BlockHeader) + alignment - 1) / alignment * alignment;
    std::size_t total = (offset + size + alignment - 1) / alignment * alignment;
    void *raw = std::aligned_alloc(alignment, total);
    if (!raw) {
      trim();
      raw = std::aligned_alloc(alignment, total);
    }
    if (!raw) {
      std::uint64_t previous = failed.load(std::memory_order_relaxed);
      while (previous < size &&
             !failed.compare_exchange_weak(previous, size, std::memory_order_relaxed)) {
      }
      return nullptr;
    }
    auto *payload = static_cast<char *>(raw) + offset;
    *headerOf(payload) = {raw, size, alignment, 0, nullptr, nullptr};
    std::lock_guard<std::mutex> lock(mutex);
    link(headerOf(payload));
    return payload;
  }

  void release(void *payload) {
    if (!payload)
      return;
    void *raw;
    {
      std::lock_guard<std::mutex> lock(mutex);
      BlockHeader *header = headerOf(payload);
      unlink(header);
      if (cached + header->size <= capacity) {
        free[{header->size, header->alignment}].push_back(payload);
        cached += header->size;
        return;
      }
      raw = header->raw;
    }
    std::free(raw);
  }

  std::uint64_t beginCall() {
    std::lock_guard<std::mutex> lock(mutex);
    ++inFlight;
    return serial;
  }

  // The blocks handed out since `mark` and still live, released if `failed` and no
  // other call is in flight; their count.
  std::uint64_t endCall(std::uint64_t mark, bool failed) {
    std::vector<void *> orphans;
    {
      std::lock_guard<std::mutex> lock(mutex);
      --inFlight;
      if (!failed || inFlight != 0)
        return 0;
      for (BlockHeader *header = live.next; header != &live; header = header->next)
        if (header->serial > mark)
          orphans.push_back(reinterpret_cast<char *>(header) + sizeof(BlockHeader));
      released += orphans.size();
    }
    for (void *payload : orphans)
      release(payload);
    return orphans.size();
  }

  void trim() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &entry : free)
      for (void *payload : entry.second)
        std::free(reinterpret_cast<BlockHeader *>(static_cast<char *>(payload) -
                                                  sizeof(BlockHeader))
                      ->raw);
    free.clear();
    cached = 0;
  }

  // under the mutex
  void link(BlockHeader *header) {
    header->serial = ++serial;
    header->prev = &live;
    header->next = live.next;
    live.next->prev = header;
    live.next = header;
    liveBytes += header->size;
    ++liveBlocks;
  }
  void unlink(BlockHeader *header) {
    header->prev->next = header->next;
    header->next->prev = header->prev;
    liveBytes -= header->size;
    --liveBlocks;
  }

  std::mutex mutex;
  BlockHeader live{nullptr, 0, 0, 0, &live, &live}; // sentinel of the live blocks' list
  std::uint64_t serial = 0, liveBytes = 0, liveBlocks = 0, released = 0;
  std::int64_t inFlight = 0;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<void *>> free;
  std::size_t cached = 0;
  std::size_t capacity = std::size_t(512) << 20;
  std::uint64_t hits = 0, misses = 0;
  std::atomic<std::uint64_t> failed{0}; // the largest refused request
};

} // namespace

extern "C" {

// MLIR's generic allocation functions (finalize-memref-to-llvm
// {use-generic-functions}).
DLVM_RUNTIME_EXPORT void *_mlir_memref_to_llvm_alloc(std::uint64_t size) {
  return BufferCache::get().allocate(16, size);
}
DLVM_RUNTIME_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(std::uint64_t alignment,
                                                             std::uint64_t size) {
  return BufferCache::get().allocate(alignment, size);
}
DLVM_RUNTIME_EXPORT void _mlir_memref_to_llvm_free(void *payload) {
  BufferCache::get().release(payload);
}

DLVM_RUNTIME_EXPORT void dlvmRuntimeBufferStats(DlvmBufferStats *stats) {
  BufferCache &cache = BufferCache::get();
  std::lock_guard<std::mutex> lock(cache.mutex);
  *stats = {cache.cached, cache.hits, cache.misses, cache.capacity, cache.liveBytes, cache.liveBlocks,
            cache.released};
}

DLVM_RUNTIME_EXPORT void dlvmRuntimeTrimBuffers(void) { BufferCache::get().trim(); }

DLVM_RUNTIME_EXPORT uint64_t dlvmRuntimeCallBegin(void) { return BufferCache::get().beginCall(); }

DLVM_RUNTIME_EXPORT uint64_t dlvmRuntimeCallEnd(uint64_t mark, int failed) {
  return BufferCache::get().endCall(mark, failed != 0);
}

DLVM_RUNTIME_EXPORT uint64_t dlvmRuntimeTakeFailedAllocation(void) {
  return BufferCache::get().failed.exchange(0, std::memory_order_relaxed);
}

} // extern "C"

