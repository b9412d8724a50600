//===- DLVMToLinalg.h - dlvm -> linalg/tensor/arith/math --------*- C++ -*-===//
#ifndef DLVM_CONVERSION_DLVMTOLINALG_H
#define DLVM_CONVERSION_DLVMTOLINALG_H

namespace mlir {
class RewritePatternSet;

namespace dlvm {
/// Adds the patterns that rewrite every dlvm op into linalg-on-tensors IR
/// (linalg, tensor, arith, math, scf). The patterns are OpConversionPatterns
/// for a ConversionTarget that marks the dlvm dialect illegal; they only
/// handle statically shaped tensors and fail to match otherwise.
void populateDLVMToLinalgConversionPatterns(RewritePatternSet &patterns);
} // namespace dlvm
} // namespace mlir

#endif // DLVM_CONVERSION_DLVMTOLINALG_H
