//===- DLVMOps.h - dlvm operations ------------------------------*- C++ -*-===//
#ifndef DLVM_DLVMOPS_H
#define DLVM_DLVMOPS_H

#include "dlvm/DLVMDialect.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dlvm {
/// Checks that every ranked tensor operand and result of `op` has an element
/// count that fits in int64.
LogicalResult verifyElementCounts(Operation *op);

/// The op trait behind it (every dlvm op has it).
template <typename ConcreteType>
class ElementCountFits : public OpTrait::TraitBase<ConcreteType, ElementCountFits> {
public:
  static LogicalResult verifyTrait(Operation *op) { return verifyElementCounts(op); }
};
} // namespace mlir::dlvm

#define GET_OP_CLASSES
#include "dlvm/DLVMOps.h.inc"

namespace mlir::dlvm {
/// DLVM broadcasting: a rank-0 shape broadcasts to anything; otherwise equal
/// ranks and each dimension pair equal or 1. Returns failure if incompatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);
} // namespace mlir::dlvm

#endif // DLVM_DLVMOPS_H
