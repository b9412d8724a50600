//===- Passes.h - dlvm C++ passes -------------------------------*- C++ -*-===//
#ifndef DLVM_PASSES_H
#define DLVM_PASSES_H

#include "dlvm/Conversion/DLVMToLinalg.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::dlvm {

#define GEN_PASS_DECL
#include "dlvm/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlvm/Passes.h.inc"

} // namespace mlir::dlvm

#endif // DLVM_PASSES_H
