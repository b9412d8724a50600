//===- Dialect.h - C API for the dlvm dialect ---------------------*- C -*-===//
#ifndef DLVM_C_DIALECT_H
#define DLVM_C_DIALECT_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(DLVM, dlvm);

#ifdef __cplusplus
}
#endif

#endif // DLVM_C_DIALECT_H
