//===- Attributes.h - C API for dlvm attributes -------------------*- C -*-===//
#ifndef DLVM_C_ATTRIBUTES_H
#define DLVM_C_ATTRIBUTES_H

#include "mlir-c/IR.h"
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Kinds of derivative declarations.
enum DlvmDerivativeKind { DlvmDerivativeGradient = 0, DlvmDerivativeTangent = 1 };

/// Returns true if `attr` is a #dlvm.gradient or #dlvm.tangent attribute.
MLIR_CAPI_EXPORTED bool dlvmAttributeIsADerivative(MlirAttribute attr);
MLIR_CAPI_EXPORTED int dlvmDerivativeGetKind(MlirAttribute attr);
/// The primal's symbol name.
MLIR_CAPI_EXPORTED MlirStringRef dlvmDerivativeGetOf(MlirAttribute attr);
/// `wrt` indices; returns false (and writes nothing) when `wrt` is absent.
MLIR_CAPI_EXPORTED bool dlvmDerivativeHasWrt(MlirAttribute attr);
MLIR_CAPI_EXPORTED intptr_t dlvmDerivativeGetNumWrt(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t dlvmDerivativeGetWrt(MlirAttribute attr, intptr_t pos);
MLIR_CAPI_EXPORTED intptr_t dlvmDerivativeGetNumKeeping(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t dlvmDerivativeGetKeeping(MlirAttribute attr, intptr_t pos);
/// `from N`: returns false when absent.
MLIR_CAPI_EXPORTED bool dlvmDerivativeHasFrom(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t dlvmDerivativeGetFrom(MlirAttribute attr);
MLIR_CAPI_EXPORTED bool dlvmDerivativeGetSeedable(MlirAttribute attr);

/// Builds a derivative attribute; `wrt` may be NULL (all arguments), `from`
/// negative means absent. Returns a null attribute (and emits a diagnostic at
/// an unknown location) if the parameters are invalid.
MLIR_CAPI_EXPORTED MlirAttribute dlvmDerivativeGet(
    MlirContext ctx, int kind, MlirStringRef of, const int64_t *wrt,
    intptr_t numWrt, const int64_t *keeping, intptr_t numKeeping, int64_t from,
    bool seedable);

/// The function type a declaration must have given its primal's type.
MLIR_CAPI_EXPORTED MlirType dlvmDerivativeGetExpectedType(MlirAttribute attr,
                                                          MlirType primalType);

#ifdef __cplusplus
}
#endif

#endif // DLVM_C_ATTRIBUTES_H
