//===- Dialect.cpp - C API for the dlvm dialect ---------------------------===//
#include "dlvm-c/Dialect.h"
#include "dlvm/DLVMOps.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(DLVM, dlvm, mlir::dlvm::DLVMDialect)
