//===- DLVMExtension.cpp - nanobind module dlvm_mlir._dlvm ----------------===//
//
// Registers the dlvm dialect into the `mlir` Python bindings. Links only the
// wheel's libMLIRPythonCAPI.so (one copy of MLIR per process).
//
//===----------------------------------------------------------------------===//
#include "dlvm-c/Attributes.h"
#include "dlvm-c/Diagnostics.h"
#include "dlvm-c/Dialect.h"
#include "dlvm-c/Passes.h"

#include "AsyncRuntime.h"

#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir-c/BuiltinTypes.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

// A caching allocator for the buffers of JIT-compiled code. The CPU back end
// lowers memref.alloc/dealloc to MLIR's generic allocation functions
// (finalize-memref-to-llvm{use-generic-functions}) and binds them to these:
// a freed block is kept, keyed by (size, alignment), for the next allocation
// of that shape. Compiled functions allocate the same temporaries on every
// call; with plain malloc/free, glibc returns large blocks to the OS and each
// call page-faults them in again (measured: 30-40% of an MLP training step).
// Cached bytes are capped; beyond the cap blocks really are freed.
namespace {
struct BlockHeader {
  void *raw;
  std::size_t size;
  std::size_t alignment;
};

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
        return block;
      }
      ++misses;
    }
    // Room for the header before an aligned payload.
    std::size_t offset =
        (sizeof(BlockHeader) + alignment - 1) / alignment * alignment;
    std::size_t total = (offset + size + alignment - 1) / alignment * alignment;
    void *raw = std::aligned_alloc(alignment, total);
    if (!raw)
      return nullptr;
    auto *payload = static_cast<char *>(raw) + offset;
    *reinterpret_cast<BlockHeader *>(payload - sizeof(BlockHeader)) = {
        raw, size, alignment};
    return payload;
  }

  void release(void *payload) {
    if (!payload)
      return;
    BlockHeader header = *reinterpret_cast<BlockHeader *>(
        static_cast<char *>(payload) - sizeof(BlockHeader));
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (cached + header.size <= capacity) {
        free[{header.size, header.alignment}].push_back(payload);
        cached += header.size;
        return;
      }
    }
    std::free(header.raw);
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

  std::mutex mutex;
  std::map<std::pair<std::size_t, std::size_t>, std::vector<void *>> free;
  std::size_t cached = 0;
  std::size_t capacity = std::size_t(512) << 20;
  std::uint64_t hits = 0, misses = 0;
};

extern "C" void *dlvmBufferAlloc(std::uint64_t size) {
  return BufferCache::get().allocate(16, size);
}
extern "C" void *dlvmBufferAlignedAlloc(std::uint64_t alignment,
                                        std::uint64_t size) {
  return BufferCache::get().allocate(alignment, size);
}
extern "C" void dlvmBufferFree(void *payload) {
  BufferCache::get().release(payload);
}
} // namespace

namespace {
// The first byte of a C-contiguous buffer (numpy array); raises the
// buffer protocol's Python error otherwise.
void *bufferAddress(nb::handle object, bool writable) {
  Py_buffer view;
  int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object.ptr(), &view, flags) != 0)
    throw nb::python_error();
  void *data = view.buf;
  PyBuffer_Release(&view);
  return data;
}
} // namespace

NB_MODULE(_dlvm, m) {
  m.doc() = "dlvm dialect registration for the mlir Python bindings";

  m.def(
      "register_dialect",
      [](MlirDialectRegistry registry) {
        mlirDialectHandleInsertDialect(mlirGetDialectHandle__dlvm__(), registry);
      },
      nb::arg("registry"), "Inserts the dlvm dialect into a DialectRegistry.");

  m.def(
      "load_dialect",
      [](MlirContext context) {
        MlirDialectHandle h = mlirGetDialectHandle__dlvm__();
        mlirDialectHandleRegisterDialect(h, context);
        mlirDialectHandleLoadDialect(h, context);
      },
      nb::arg("context"), "Registers and loads the dlvm dialect in a Context.");

  // Derivative declarations (#dlvm.gradient / #dlvm.tangent). The Python
  // wrapper is dlvm_mlir.dialects.dlvm.DerivativeDecl.
  m.def("is_derivative_attr", &dlvmAttributeIsADerivative, nb::arg("attr"));
  m.def(
      "derivative_attr_fields",
      [](MlirAttribute attr) {
        if (!dlvmAttributeIsADerivative(attr))
          throw nb::value_error("expected a #dlvm.gradient or #dlvm.tangent attribute");
        MlirStringRef of = dlvmDerivativeGetOf(attr);
        std::optional<std::vector<int64_t>> wrt;
        if (dlvmDerivativeHasWrt(attr)) {
          wrt.emplace();
          for (intptr_t i = 0, e = dlvmDerivativeGetNumWrt(attr); i < e; ++i)
            wrt->push_back(dlvmDerivativeGetWrt(attr, i));
        }
        std::vector<int64_t> keeping;
        for (intptr_t i = 0, e = dlvmDerivativeGetNumKeeping(attr); i < e; ++i)
          keeping.push_back(dlvmDerivativeGetKeeping(attr, i));
        std::optional<int64_t> from;
        if (dlvmDerivativeHasFrom(attr))
          from = dlvmDerivativeGetFrom(attr);
        return nb::make_tuple(
            dlvmDerivativeGetKind(attr) == DlvmDerivativeGradient ? "gradient" : "tangent",
            std::string(of.data, of.length), wrt, keeping, from,
            dlvmDerivativeGetSeedable(attr));
      },
      nb::arg("attr"),
      "(kind, of, wrt or None, keeping, from or None, seedable) of a derivative attribute.");
  m.def(
      "derivative_attr_get",
      [](MlirContext ctx, const std::string &kind, const std::string &of,
         std::optional<std::vector<int64_t>> wrt, std::vector<int64_t> keeping,
         std::optional<int64_t> from, bool seedable) {
        int k = kind == "gradient" ? DlvmDerivativeGradient : DlvmDerivativeTangent;
        if (kind != "gradient" && kind != "tangent")
          throw nb::value_error("kind must be 'gradient' or 'tangent'");
        MlirAttribute attr = dlvmDerivativeGet(
            ctx, k, mlirStringRefCreate(of.data(), of.size()),
            wrt ? wrt->data() : nullptr, wrt ? wrt->size() : 0, keeping.data(),
            keeping.size(), from.value_or(-1), seedable);
        if (mlirAttributeIsNull(attr))
          throw nb::value_error("invalid derivative declaration parameters");
        return attr;
      },
      nb::arg("context"), nb::arg("kind"), nb::arg("of"), nb::arg("wrt").none(),
      nb::arg("keeping"), nb::arg("from_").none(), nb::arg("seedable"));
  m.def(
      "derivative_expected_type",
      [](MlirAttribute attr, MlirType primal) {
        if (!dlvmAttributeIsADerivative(attr) || !mlirTypeIsAFunction(primal))
          throw nb::value_error("expected a derivative attribute and a FunctionType");
        return dlvmDerivativeGetExpectedType(attr, primal);
      },
      nb::arg("attr"), nb::arg("primal_type"),
      "The FunctionType a declaration must have, given its primal's type.");

  // Through the C entry point: this file is compiled with RTTI, MLIR's C++
  // without (see dlvm-c/Passes.h).
  m.def(
      "register_passes", []() { dlvmRegisterPasses(); },
      "Registers the dlvm C++ passes (dlvm-to-linalg) with MLIR's global pass "
      "registry, so textual pipelines (PassManager.parse) can name them.");

  m.def(
      "buffer_functions",
      []() {
        nb::dict d;
        d["_mlir_memref_to_llvm_alloc"] =
            reinterpret_cast<std::uintptr_t>(&dlvmBufferAlloc);
        d["_mlir_memref_to_llvm_aligned_alloc"] =
            reinterpret_cast<std::uintptr_t>(&dlvmBufferAlignedAlloc);
        d["_mlir_memref_to_llvm_free"] =
            reinterpret_cast<std::uintptr_t>(&dlvmBufferFree);
        return d;
      },
      "Addresses of the caching allocator that JIT-compiled code calls for "
      "memref.alloc/dealloc (MLIR's generic allocation function names).");
  m.def(
      "buffer_cache_stats",
      []() {
        BufferCache &cache = BufferCache::get();
        std::lock_guard<std::mutex> lock(cache.mutex);
        nb::dict d;
        d["cached_bytes"] = cache.cached;
        d["hits"] = cache.hits;
        d["misses"] = cache.misses;
        d["capacity"] = cache.capacity;
        return d;
      },
      "Counters of the caching allocator.");
  m.def(
      "trim_buffer_cache", []() { BufferCache::get().trim(); },
      "Free every cached block.");

  m.def(
      "async_runtime_functions",
      []() {
        nb::dict d;
        for (auto [name, address] : dlvm::asyncRuntimeSymbols())
          d[name] = reinterpret_cast<std::uintptr_t>(address);
        return d;
      },
      "Addresses of the async runtime (MLIR's mlirAsyncRuntime* ABI on a "
      "spinning thread pool) that JIT-compiled parallel loops call.");
  m.def(
      "async_runtime_stats",
      []() {
        dlvm::AsyncRuntimeStats stats = dlvm::asyncRuntimeStats();
        nb::dict d;
        d["live_objects"] = stats.liveObjects;
        d["workers"] = stats.workers;
        d["tasks_by_workers"] = stats.tasksByWorkers;
        d["tasks_by_waiters"] = stats.tasksByWaiters;
        d["sleeps"] = stats.sleeps;
        d["spin_us"] = stats.spinMicros;
        return d;
      },
      "Counters of the async runtime.");
  m.def("reserve_async_workers", &dlvm::reserveAsyncWorkers, nb::arg("workers"),
        "Makes sure this many worker threads exist (at most cpus - 1).");
  m.def("set_async_runtime_spin", &dlvm::setAsyncRuntimeSpin,
        nb::arg("microseconds"),
        "How long idle workers and waiting threads poll before they sleep.");

  // Calling JIT-compiled entry points (backend/runtime.py): reading data
  // pointers through numpy's __array_interface__ and calling through ctypes
  // cost about 3.5 us per array and 2 us per call; through the buffer
  // protocol, about 0.2 us per array.
  m.def(
      "data_address",
      [](nb::handle array) {
        return reinterpret_cast<std::uintptr_t>(bufferAddress(array, false));
      },
      nb::arg("array"), "Address of a C-contiguous buffer's first byte.");
  m.def(
      "invoke",
      [](std::uintptr_t function, std::uintptr_t arguments, nb::tuple descriptors,
         nb::list arrays, std::size_t firstOutput) {
        std::size_t count = nb::len(arrays);
        if (nb::len(descriptors) != count)
          throw nb::value_error("one memref descriptor per array expected");
        for (std::size_t i = 0; i < count; ++i) {
          void *data = bufferAddress(arrays[i], i >= firstOutput);
          auto *descriptor = reinterpret_cast<void **>(
              nb::cast<std::uintptr_t>(descriptors[i]));
          descriptor[0] = data; // allocated
          descriptor[1] = data; // aligned
        }
        nb::gil_scoped_release release;
        reinterpret_cast<void (*)(void *)>(function)(
            reinterpret_cast<void *>(arguments));
      },
      nb::arg("function"), nb::arg("arguments"), nb::arg("descriptors"),
      nb::arg("arrays"), nb::arg("first_output"),
      "Stores each array's data address into its memref descriptor "
      "(allocated and aligned pointers; arrays from `first_output` on must be "
      "writable), then calls the packed entry point `function(arguments)` "
      "without the GIL.");

  // The upstream bindings emit errors only (Location.emit_error).
  m.def(
      "emit_diagnostic",
      [](MlirLocation location, const std::string &severity,
         const std::string &message) {
        MlirDiagnosticSeverity level;
        if (severity == "error")
          level = MlirDiagnosticError;
        else if (severity == "warning")
          level = MlirDiagnosticWarning;
        else if (severity == "remark")
          level = MlirDiagnosticRemark;
        else
          throw nb::value_error("severity must be 'error', 'warning' or 'remark'");
        dlvmEmitDiagnostic(location, level,
                           mlirStringRefCreate(message.data(), message.size()));
      },
      nb::arg("location"), nb::arg("severity"), nb::arg("message"),
      "Emits a diagnostic of the given severity at a Location.");
}
