//===- DLVMToLinalg.cpp - lower dlvm to linalg-on-tensors -----------------===//
//
// Rewrites every dlvm op into linalg, tensor, arith, math and scf ops on
// statically shaped tensors, ready for one-shot bufferization and the
// upstream CPU/GPU lowerings. This file holds the pass; the patterns are
// split by op family, each file with its populate function (declared in
// Common.h with the shared helpers):
//   Pointwise.cpp         elementwise ops, cmp, select, casts, constants,
//                         iota, random (SpecialFunctions.cpp: lgamma,
//                         digamma)
//   Contraction.cpp       dot, dot_general
//   Convolution.cpp       convolve, reduce_window
//   Reductions.cpp        reduce, scan, softmax, log_softmax, argmax, argmin
//   Sort.cpp              sort, top_k
//   Shape.cpp             transpose, reverse, concatenate, slice, pad,
//                         reshapes, broadcast_to
//   Indexing.cpp          dynamic_slice, dynamic_update_slice, gather,
//                         scatter
//
// Conventions used throughout:
// - Destination tensors are `tensor.empty` (filled with `linalg.fill` when an
//   op accumulates into them).
// - DLVM broadcasting (rank-0 operands, or size-1 dimensions facing larger
//   ones) is expressed in linalg.generic indexing maps: a broadcast dimension
//   reads index 0, a rank-0 operand has the empty map.
// - Unsigned integer types (ui8 ... ui64) get unsigned arith ops (the
//   patterns check the operand types, which are still unsigned); the pass
//   then erases signedness from every type (arith and LLVM take signless
//   integers), recording changed function types in `dlvm.source_type`.
// - Float semantics follow IEEE with NaN propagation (min/max use
//   arith.minimumf/maximumf). Integers are signed, except i1 which is treated
//   as a boolean (false < true in cmp, min, max, reductions; max/min are
//   or/and; it converts to 0/1).
// - Integer division never traps and follows XLA: x / 0 is -1 (all bits set),
//   x mod 0 is x, MIN / -1 wraps to MIN and MIN mod -1 is 0. Plain arith.divsi
//   is undefined for those inputs and raises SIGFPE on x86, which would kill
//   the host (Python) process.
// - Float to integer casts saturate to the integer range and map NaN to 0
//   (XLA's convert); arith.fptosi alone is poison out of range.
// The same semantics are in the folders (DLVMOps.cpp), the interpreter and
// the ODS descriptions.
//
//===----------------------------------------------------------------------===//

#include "dlvm/Conversion/DLVMToLinalg.h"
#include "dlvm/DLVMOps.h"
#include "dlvm/Passes.h"

#include "Common.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::dlvm {
#define GEN_PASS_DEF_DLVMTOLINALG
#include "dlvm/Passes.h.inc"
} // namespace mlir::dlvm

using namespace mlir;
using namespace mlir::dlvm;

namespace {

struct DLVMToLinalgPass
    : mlir::dlvm::impl::DLVMToLinalgBase<DLVMToLinalgPass> {
  void runOnOperation() override {
    // Report every op the patterns cannot handle with a precise message
    // (rather than the conversion driver's generic "failed to legalize").
    bool bad = false;
    getOperation()->walk([&](Operation *op) {
      if (!isa_and_nonnull<DLVMDialect>(op->getDialect()) ||
          to_linalg::hasStaticTensorTypes(op))
        return;
      op->emitOpError()
          << "cannot be lowered by dlvm-to-linalg: every operand and result "
             "must be a statically shaped ranked tensor";
      bad = true;
    });
    if (bad)
      return signalPassFailure();

    // Transposes already in the input are not ours to erase.
    llvm::SmallPtrSet<Operation *, 8> existing;
    getOperation()->walk(
        [&](linalg::TransposeOp t) { existing.insert(t.getOperation()); });

    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<DLVMDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateDLVMToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    eraseUnusedTransposes(getOperation(), existing);
    markRecomputedOps();
    eraseSignedness(getOperation());
  }

  /// The patterns lowered unsigned integers with unsigned arith ops on values
  /// that still have the unsigned types; arith and LLVM take signless
  /// integers only. Make every type and attribute in the module signless,
  /// recording the original type of each function whose signature changes
  /// (`dlvm.source_type`, for the entry points' numpy dtypes).
  static void eraseSignedness(Operation *root) {
    MLIRContext *ctx = root->getContext();
    AttrTypeReplacer replacer;
    replacer.addReplacement([ctx](IntegerType t) -> std::optional<Type> {
      if (t.isSignless())
        return std::nullopt;
      return IntegerType::get(ctx, t.getWidth());
    });
    replacer.addReplacement(
        [&replacer](DenseIntElementsAttr a) -> std::optional<Attribute> {
          if (a.getElementType().isSignlessInteger())
            return std::nullopt;
          return a.bitcast(replacer.replace(a.getElementType()));
        });
    SmallVector<std::pair<func::FuncOp, Type>> changed;
    root->walk([&](func::FuncOp fn) {
      Type original = fn.getFunctionType();
      if (replacer.replace(original) != original)
        changed.emplace_back(fn, original);
    });
    bool any = !changed.empty();
    root->walk([&](Operation *op) {
      if (!any)
        for (Type t : op->getResultTypes())
          any |= replacer.replace(t) != t;
    });
    if (!any)
      return;
    replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
    for (auto [fn, original] : changed)
      fn->setAttr("dlvm.source_type", TypeAttr::get(original));
  }

  /// Lowered transposes whose only users were dots that read them in place
  /// are dead now: erase them (and their destination, when it was theirs
  /// alone).
  static void
  eraseUnusedTransposes(Operation *root,
                        const llvm::SmallPtrSetImpl<Operation *> &existing) {
    SmallVector<linalg::TransposeOp> dead;
    root->walk([&](linalg::TransposeOp t) {
      if (t->getNumResults() == 1 && t->use_empty() &&
          !existing.contains(t.getOperation()))
        dead.push_back(t);
    });
    for (linalg::TransposeOp t : dead) {
      Operation *init = t.getInit().getDefiningOp();
      t->erase();
      if (init && isa<tensor::EmptyOp>(init) && init->use_empty())
        init->erase();
    }
  }

  /// dlvm-checkpoint gives the ops it recomputes the `dlvm.recompute` unit
  /// attribute (so CSE does not merge them back into the forward copies) and
  /// a `"dlvm.recompute"(...)` name location. The attribute does not survive
  /// the conversion, the location does: put the attribute back on every op
  /// lowered from a recomputed one.
  void markRecomputedOps() {
    StringAttr marker = StringAttr::get(&getContext(), "dlvm.recompute");
    getOperation()->walk([&](Operation *op) {
      auto name = dyn_cast<NameLoc>(op->getLoc());
      if (name && name.getName() == marker && !op->hasAttr(marker))
        op->setAttr(marker, UnitAttr::get(&getContext()));
    });
  }
};

} // namespace

void mlir::dlvm::populateDLVMToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  to_linalg::populatePointwisePatterns(patterns);
  to_linalg::populateContractionPatterns(patterns);
  to_linalg::populateConvolutionPatterns(patterns);
  to_linalg::populateReductionPatterns(patterns);
  to_linalg::populateSortPatterns(patterns);
  to_linalg::populateShapePatterns(patterns);
  to_linalg::populateIndexingPatterns(patterns);
}
