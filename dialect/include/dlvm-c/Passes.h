//===- Passes.h - C API for the dlvm C++ passes -------------------*- C -*-===//
//
// The Python extension is compiled with RTTI (nanobind needs it) while MLIR's
// C++ must be compiled without; it therefore reaches the C++ passes through
// this plain C entry point, which lives in the -fno-rtti object library.
//
//===----------------------------------------------------------------------===//
#ifndef DLVM_C_PASSES_H
#define DLVM_C_PASSES_H

#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers the dlvm C++ passes (`dlvm-to-linalg`) in the global pass
/// registry of the MLIR copy this library is linked against, so textual
/// pipelines can name them. Idempotent.
MLIR_CAPI_EXPORTED void dlvmRegisterPasses(void);

#ifdef __cplusplus
}
#endif

#endif // DLVM_C_PASSES_H
