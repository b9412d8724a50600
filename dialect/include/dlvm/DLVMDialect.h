//===- DLVMDialect.h - dlvm dialect -----------------------------*- C++ -*-===//
#ifndef DLVM_DLVMDIALECT_H
#define DLVM_DLVMDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "dlvm/DLVMDialect.h.inc"
#include "dlvm/DLVMEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dlvm/DLVMAttrs.h.inc"

#endif // DLVM_DLVMDIALECT_H
