//===- DLVMExtension.cpp - nanobind module dlvm_mlir._dlvm ----------------===//
//
// Registers the dlvm dialect into the `mlir` Python bindings. Links only the
// wheel's libMLIRPythonCAPI.so (one copy of MLIR per process).
//
//===----------------------------------------------------------------------===//
#include "dlvm-c/Attributes.h"
#include "dlvm-c/Codegen.h"
#include "dlvm-c/Diagnostics.h"
#include "dlvm-c/Dialect.h"
#include "dlvm-c/Passes.h"

#include "dlvm-runtime/Runtime.h"

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
      "runtime_symbols",
      []() {
        nb::list names;
        for (const char *const *name = dlvmRuntimeSymbols(); *name; ++name)
          names.append(*name);
        return names;
      },
      "Names of the functions compiled code may call in libdlvm_runtime.so "
      "(MLIR's generic allocation functions and its async runtime ABI).");
  m.def(
      "buffer_cache_stats",
      []() {
        DlvmBufferStats stats;
        dlvmRuntimeBufferStats(&stats);
        nb::dict d;
        d["cached_bytes"] = stats.cachedBytes;
        d["hits"] = stats.hits;
        d["misses"] = stats.misses;
        d["capacity"] = stats.capacity;
        d["live_bytes"] = stats.liveBytes;
        d["live_blocks"] = stats.liveBlocks;
        d["released_after_failures"] = stats.released;
        return d;
      },
      "Counters of the caching allocator.");
  m.def(
      "take_failed_allocation", []() { return dlvmRuntimeTakeFailedAllocation(); },
      "The largest allocation the system refused to compiled code since the last call (0: none); resets it.");
  m.def(
      "trim_buffer_cache", []() { dlvmRuntimeTrimBuffers(); },
      "Free every cached block.");
  m.def(
      "async_runtime_stats",
      []() {
        DlvmAsyncStats stats;
        dlvmRuntimeAsyncStats(&stats);
        nb::dict d;
        d["live_objects"] = stats.liveObjects;
        d["workers"] = stats.workers;
        d["tasks_by_workers"] = stats.tasksByWorkers;
        d["tasks_by_waiters"] = stats.tasksByWaiters;
        d["sleeps"] = stats.sleeps;
        d["spin_us"] = stats.spinMicros;
        d["moves"] = stats.moves;
        return d;
      },
      "Counters of the async runtime.");
  m.def("reserve_async_workers", &dlvmRuntimeReserveWorkers, nb::arg("workers"),
        "Makes sure this many worker threads exist (at most cpus - 1).");
  m.def("set_async_runtime_spin", &dlvmRuntimeSetSpin, nb::arg("microseconds"),
        "How long idle workers and waiting threads poll before they sleep.");
  m.def(
      "use_openmp",
      [](std::uintptr_t gompParallel) { dlvmRuntimeUseOpenMP(reinterpret_cast<void *>(gompParallel)); },
      nb::arg("gomp_parallel"),
      "Run parallel loops on the OpenMP team of this GOMP_parallel address (0: the pool's own workers).");
  m.def("openmp_regions", &dlvmRuntimeOpenMPRegions, "OpenMP parallel regions run so far.");

  // Machine code for an LLVM-dialect module (dlvm-c/Codegen.h).
  m.def(
      "codegen",
      [](MlirModule module, const std::string &output, const std::string &triple,
         const std::string &cpu, const std::string &features, int optLevel,
         int codegenOptLevel, int partitions, bool postRAScheduling,
         const std::string &llvmOptions, const std::string &exported,
         const std::string &metadata, int workers, const std::string &errorSlot,
         const std::string &bracketed) {
        DlvmCodegenOptions options;
        options.triple = triple.c_str();
        options.cpu = cpu.c_str();
        options.features = features.c_str();
        options.optLevel = optLevel;
        options.codegenOptLevel = codegenOptLevel;
        if (output == "obj")
          options.output = DlvmCodegenObject;
        else if (output == "asm")
          options.output = DlvmCodegenAssembly;
        else if (output == "llvm")
          options.output = DlvmCodegenLLVMIR;
        else if (output == "bc")
          options.output = DlvmCodegenBitcode;
        else
          throw nb::value_error("output must be 'obj', 'asm', 'llvm' or 'bc'");
        options.partitions = partitions;
        options.postRAScheduling = postRAScheduling;
        options.llvmOptions = llvmOptions.c_str();
        options.exported = exported.c_str();
        options.metadata = mlirStringRefCreate(metadata.data(), metadata.size());
        options.workers = workers;
        options.errorSlot = errorSlot.c_str();
        options.bracketed = bracketed.c_str();
        std::vector<std::string> outputs;
        std::string error;
        auto collect = [](MlirStringRef bytes, void *data) {
          static_cast<std::vector<std::string> *>(data)->emplace_back(bytes.data, bytes.length);
        };
        auto report = [](MlirStringRef text, void *data) {
          static_cast<std::string *>(data)->append(text.data, text.length);
        };
        MlirLogicalResult result;
        {
          nb::gil_scoped_release release;
          result = dlvmCodegen(module, options, collect, &outputs, report, &error);
        }
        if (mlirLogicalResultIsFailure(result))
          throw std::runtime_error(error);
        nb::list out;
        for (const std::string &bytes : outputs)
          out.append(nb::bytes(bytes.data(), bytes.size()));
        return out;
      },
      nb::arg("module"), nb::arg("output"), nb::arg("triple"), nb::arg("cpu"),
      nb::arg("features"), nb::arg("opt_level"), nb::arg("codegen_opt_level"), nb::arg("partitions"),
      nb::arg("post_ra_scheduling"), nb::arg("llvm_options"), nb::arg("exported"), nb::arg("metadata"),
      nb::arg("workers"), nb::arg("error_slot"), nb::arg("bracketed"),
      "Translates an LLVM-dialect module to LLVM IR (with packed wrappers "
      "`_mlir_<f>` of the C-interface functions), optimizes it and returns "
      "the outputs: object files (one per partition, compiled in parallel), "
      "assembly, LLVM IR text or bitcode. Empty triple/cpu/features: the host. "
      "workers > 0: loading the object reserves that many runtime workers. "
      "error_slot: the i64 global where a failed buffer allocation stores -1 "
      "and returns from the entry point (empty: allocations unchecked). "
      "bracketed: prefixes of the entry points whose calls the runtime's "
      "dlvmRuntimeCallBegin/End bracket (a failed call's buffers are freed).");
  m.def(
      "optimization_pipeline",
      [](int optLevel) {
        std::string text;
        MlirLogicalResult result = dlvmOptimizationPipeline(
            optLevel,
            [](MlirStringRef part, void *data) {
              static_cast<std::string *>(data)->append(part.data, part.length);
            },
            &text);
        if (mlirLogicalResultIsFailure(result))
          throw std::runtime_error(text);
        return text;
      },
      nb::arg("opt_level"),
      "The LLVM IR pipeline `codegen` runs at this opt level for this machine "
      "(`opt -passes=` syntax).");
  m.def(
      "host_target",
      []() {
        std::string text;
        dlvmHostTarget(
            [](MlirStringRef part, void *data) {
              static_cast<std::string *>(data)->append(part.data, part.length);
            },
            &text);
        std::size_t first = text.find('\n'), second = text.find('\n', first + 1);
        return nb::make_tuple(text.substr(0, first),
                              text.substr(first + 1, second - first - 1),
                              text.substr(second + 1));
      },
      "(triple, cpu, features) of this machine, as LLVM detects them.");

  // Calling compiled entry points (backend/runtime.py): reading data
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
