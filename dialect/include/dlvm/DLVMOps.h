//===- DLVMOps.h - dlvm operations ------------------------------*- C++ -*-===//
#ifndef DLVM_DLVMOPS_H
#define DLVM_DLVMOPS_H

#include "dlvm/DLVMDialect.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dlvm/DLVMOps.h.inc"

namespace mlir::dlvm {
/// DLVM broadcasting: a rank-0 shape broadcasts to anything; otherwise equal
/// ranks and each dimension pair equal or 1. Returns failure if incompatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);
} // namespace mlir::dlvm

#endif // DLVM_DLVMOPS_H
