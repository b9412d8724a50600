//===- Diagnostics.cpp - C API: emit diagnostics of any severity ---------===//
#include "dlvm-c/Diagnostics.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"

void dlvmEmitDiagnostic(MlirLocation location, MlirDiagnosticSeverity severity,
                        MlirStringRef message) {
  mlir::Location loc = unwrap(location);
  llvm::StringRef text = unwrap(message);
  switch (severity) {
  case MlirDiagnosticError:
    mlir::emitError(loc) << text;
    return;
  case MlirDiagnosticWarning:
    mlir::emitWarning(loc) << text;
    return;
  case MlirDiagnosticNote:
  case MlirDiagnosticRemark:
    // A note needs a parent diagnostic; on its own it is reported as a remark.
    mlir::emitRemark(loc) << text;
    return;
  }
}
