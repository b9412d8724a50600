//===- Diagnostics.h - C API: emit diagnostics of any severity ----*- C -*-===//
//
// The upstream C API emits errors only (mlirEmitError); Python passes also
// report warnings and remarks (e.g. dlvm-report-residuals).
//
//===----------------------------------------------------------------------===//
#ifndef DLVM_C_DIAGNOSTICS_H
#define DLVM_C_DIAGNOSTICS_H

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Emits `message` at `location` with `severity` through the context's
/// diagnostic engine (so every attached handler sees it).
MLIR_CAPI_EXPORTED void dlvmEmitDiagnostic(MlirLocation location,
                                           MlirDiagnosticSeverity severity,
                                           MlirStringRef message);

#ifdef __cplusplus
}
#endif

#endif // DLVM_C_DIAGNOSTICS_H
