//===- Codegen.h - C API: LLVM-dialect module to machine code -----*- C -*-===//
//
// What the MLIR ExecutionEngine did in memory, done ahead of time so that the
// result can be linked into a shared object, cached on disk and loaded with
// dlopen: translate an LLVM-dialect module to LLVM IR, add the packed
// wrappers `_mlir_<f>(void **args)` of every C-interface function
// `_mlir_ciface_*` (ExecutionEngine::packFunctionArguments' convention),
// optimize (the default pipeline of the opt level, which also lowers the
// async dialect's coroutines) and emit object code for a target machine,
// split into partitions compiled on parallel threads.
//
// Like Passes.h, a C entry point into the -fno-rtti object library.
//
//===----------------------------------------------------------------------===//
#ifndef DLVM_C_CODEGEN_H
#define DLVM_C_CODEGEN_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DlvmCodegenObject = 0,   // relocatable object files (one per partition)
  DlvmCodegenAssembly = 1, // assembly text (one partition)
  DlvmCodegenLLVMIR = 2,   // optimized LLVM IR text
  DlvmCodegenBitcode = 3,  // optimized LLVM bitcode
} DlvmCodegenOutput;

typedef struct {
  const char *triple;   // target triple; empty: the host's
  const char *cpu;      // target CPU; empty: the host's
  const char *features; // target features; empty: the host's (if cpu is too)
  int optLevel;         // LLVM IR pipeline: 0..3
  int codegenOptLevel;  // instruction selection, scheduling, register
                        // allocation: 0..3
  DlvmCodegenOutput output;
  int partitions;         // objects compiled in parallel (>= 1)
  bool postRAScheduling;  // run the post-register-allocation schedulers
  const char *llvmOptions; // space-separated `name=value` settings of LLVM's
                           // command-line options (process-wide, like -mllvm)
  const char *exported;   // comma-separated symbol prefixes that keep default
                          // visibility; every other definition becomes hidden
  MlirStringRef metadata; // stored as the NUL-terminated global
                          // `__dlvm_metadata` (empty: none)
  int workers; // > 0: a constructor reserves this many worker threads of
               // libdlvm_runtime.so when the object is loaded
  const char *errorSlot; // non-empty: the i64 global (defined if missing)
                         // where a failed buffer allocation stores -1; the
                         // function returns at once, and so does each caller
                         // of a function that may fail (empty: no checks)
  const char *bracketed; // comma-separated prefixes of the entry points whose
                         // calls dlvmRuntimeCallBegin / dlvmRuntimeCallEnd
                         // bracket (libdlvm_runtime.so frees a failed call's
                         // buffers); only with errorSlot (empty: none)
} DlvmCodegenOptions;

/// Compiles `module` (LLVM dialect, plus any dialect with a registered LLVM IR
/// translation: gpu binaries, nvvm) as `options` say. Each output is passed
/// to `onOutput` in order; on failure `onError` receives a message and the
/// result is failure.
MLIR_CAPI_EXPORTED MlirLogicalResult
dlvmCodegen(MlirModule module, DlvmCodegenOptions options,
            MlirStringCallback onOutput, void *outputData,
            MlirStringCallback onError, void *errorData);

/// The LLVM IR pipeline `dlvmCodegen` runs at `optLevel` (0..3) for the host,
/// as text in `opt -passes=` syntax, passed to `callback`; on failure (no
/// target for the host) the message is, and the result is failure.
MLIR_CAPI_EXPORTED MlirLogicalResult
dlvmOptimizationPipeline(int optLevel, MlirStringCallback callback,
                         void *userData);

/// The host's target triple, CPU name and features (LLVM's detection), as
/// "triple\ncpu\nfeatures".
MLIR_CAPI_EXPORTED void dlvmHostTarget(MlirStringCallback callback,
                                       void *userData);

#ifdef __cplusplus
}
#endif

#endif // DLVM_C_CODEGEN_H
