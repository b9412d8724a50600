//===- Common.h - shared helpers of the dlvm-to-linalg patterns -*- C++ -*-===//
//
// Internal to lib/Conversion/DLVMToLinalg: the helpers every op family uses
// (types, constants, destination tensors, indexing maps, the elementwise
// linalg.generic builder, scalar conversions and combinators), the base
// pattern that rejects dynamic shapes, and one populate function per op
// family (each defined in the file named after its family).
//
// Conventions used throughout (see DLVMToLinalg.cpp for the whole list):
// destination tensors are `tensor.empty` (filled with `linalg.fill` when an
// op accumulates into them); DLVM broadcasting is expressed in indexing maps;
// floats propagate NaN; integers are signed except i1, a boolean.
//
//===----------------------------------------------------------------------===//

#ifndef DLVM_LIB_CONVERSION_DLVMTOLINALG_COMMON_H
#define DLVM_LIB_CONVERSION_DLVMTOLINALG_COMMON_H

#include "dlvm/DLVMOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::dlvm::to_linalg {

//===----------------------------------------------------------------------===//
// Types, constants and tensors
//===----------------------------------------------------------------------===//

RankedTensorType tensorType(Value v);
bool isStaticTensor(Type t);

/// True if every operand and result of `op` is a statically shaped tensor:
/// the only form the patterns handle.
bool hasStaticTensorTypes(Operation *op);

Value floatConst(OpBuilder &b, Location loc, Type t, double v);

/// An integer constant of type `t`, `v` truncated (or sign-extended) to its
/// width: intConst(i1, -1) is true.
Value intConst(OpBuilder &b, Location loc, Type t, int64_t v);

Value zeroConst(OpBuilder &b, Location loc, Type t);
Value indexConst(OpBuilder &b, Location loc, int64_t v);

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);

/// A tensor.empty of `type`.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type);

/// A tensor of `type` with every element equal to `scalar`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar);

Value zeroTensor(OpBuilder &b, Location loc, RankedTensorType type);

/// Results with no elements need no computation: a tensor.empty of each
/// type. (Slices and pads of zero-sized tensors also trip memref.subview's
/// verifier after bufferization.) Empty if some result has elements.
SmallVector<Value> emptyResults(OpBuilder &b, Operation *op);

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values);

/// `rank` index attributes equal to 1: the strides of a contiguous slice.
SmallVector<OpFoldResult> unitStrides(OpBuilder &b, int64_t rank);

/// The product of `shape[d]` over `dims` (1 when `dims` is empty).
int64_t productOfDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims);

/// `shape` without the dimensions in `dropped`.
SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> dropped);

/// Whether `perm` is (0, 1, ..., n-1).
bool isIdentityPermutation(ArrayRef<int64_t> perm);

/// A dlvm.transpose of `v` by `perm`, or `v` itself for the identity (the
/// patterns that build dlvm ops let the conversion lower them in turn).
Value transposeUnlessIdentity(OpBuilder &b, Location loc, Value v,
                              ArrayRef<int64_t> perm);

//===----------------------------------------------------------------------===//
// linalg structure: iterators, indexing maps, generics
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> parallelIterators(unsigned n);

/// Indexing map that reads `operandType` at the iteration point of a loop
/// nest over `shape` with DLVM broadcasting: a rank-0 operand has the empty
/// map; a size-1 dimension facing a larger one always reads index 0.
AffineMap broadcastingMap(RankedTensorType operandType,
                          ArrayRef<int64_t> shape, MLIRContext *ctx);

/// The map (d0, ..., d{rank-1}) -> (all d except those in `dropped`): reads a
/// reduced tensor from the loop nest of the unreduced one.
AffineMap dropDimsMap(unsigned rank, ArrayRef<int64_t> dropped,
                      MLIRContext *ctx);

using ScalarBodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Builds a parallel linalg.generic producing `resultType` from `inputs`
/// (broadcast with DLVM's rules); `body` maps the input elements to the
/// result element. Explicit `maps` replace the broadcasting maps when given.
/// With no inputs it is a generator: `body` reads its position with
/// linalg.index.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBodyFn body,
                       ArrayRef<AffineMap> maps = {});

/// A named linalg contraction or convolution `NamedOp` of `inputs` into a
/// zero-filled `type`; `attrs` are the op's extra builder arguments (strides,
/// dilations).
template <typename NamedOp, typename... Attrs>
Value buildZeroInitNamed(OpBuilder &b, Location loc, RankedTensorType type,
                         ValueRange inputs, Attrs &&...attrs) {
  Value acc = zeroTensor(b, loc, type);
  return NamedOp::create(b, loc, TypeRange{type}, inputs, ValueRange{acc},
                         std::forward<Attrs>(attrs)...)
      ->getResult(0);
}

/// Reassociation that collapses away the unit dimensions `dropped` of a
/// tensor of rank `rank`: each dropped dimension joins the group of the next
/// kept one (or of the last kept one when it trails). Empty when every
/// dimension is dropped (a collapse to rank 0).
SmallVector<ReassociationIndices>
dropUnitDimsReassociation(int64_t rank, ArrayRef<int64_t> dropped);

/// Reshapes `v` (row-major) to `resultType` with collapse/expand_shape: one op
/// when the shapes are related by merging or splitting adjacent dimensions,
/// otherwise a collapse to 1-D followed by an expand.
Value reshapeTo(OpBuilder &b, Location loc, Value v,
                RankedTensorType resultType);

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

inline bool isFloat(Value v) { return isa<FloatType>(v.getType()); }
inline bool isBool(Value v) { return v.getType().isInteger(1); }
/// Unsigned integers (ui8 ... ui64): the patterns emit unsigned arith ops for
/// them, on values that still have the unsigned type; the pass then makes
/// every type signless (`eraseSignedness`).
inline bool isUnsigned(Value v) { return v.getType().isUnsignedInteger(); }
/// Integers ordered without a sign: i1 (false < true) and the unsigned types.
inline bool hasUnsignedOrder(Value v) { return isBool(v) || isUnsigned(v); }

/// Converts a scalar between element types with dlvm.cast's semantics.
/// i1 is a boolean: it converts to 0/1 (unsigned), and conversion to i1 is a
/// comparison with zero (NaN converts to true, as in C). Float to integer
/// truncates toward zero, saturating (NaN gives 0); integer to a narrower
/// integer wraps.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to);

/// Whether `a` goes strictly before `c` in an order that is descending when
/// `greater` (else ascending), with NaN sorting before every number when
/// `nanFirst` (after them otherwise); i1 compares as a boolean (false <
/// true), other integers signed. Branch-free.
Value strictlyBefore(OpBuilder &b, Location l, Value a, Value c, bool greater,
                     bool nanFirst);

/// Combines two scalars with a reduction kind (`mean` combines as `add`).
Value combine(OpBuilder &b, Location loc, ReductionKind kind, Value x,
              Value y);

/// The identity of a combinator on `t`, or null for combinations the
/// verifier rejects (and/or on floats).
TypedAttr identityAttr(OpBuilder &b, ReductionKind kind, Type t);

/// Convenience for emitting float formulas (special functions, random).
struct FloatMath {
  OpBuilder &b;
  Location loc;
  Type type;

  Value c(double v) const { return floatConst(b, loc, type, v); }
  Value add(Value x, Value y) const { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) const { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) const { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) const { return arith::DivFOp::create(b, loc, x, y); }
  Value log(Value x) const { return math::LogOp::create(b, loc, x); }
  Value log1p(Value x) const { return math::Log1pOp::create(b, loc, x); }
  Value abs(Value x) const { return math::AbsFOp::create(b, loc, x); }
  Value floor(Value x) const { return math::FloorOp::create(b, loc, x); }
  Value sin(Value x) const { return math::SinOp::create(b, loc, x); }
  Value tan(Value x) const { return math::TanOp::create(b, loc, x); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) const {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value lt(Value x, Value y) const { return cmp(arith::CmpFPredicate::OLT, x, y); }
  Value select(Value cond, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  /// x - rint(x), in [-0.5, 0.5]: computed exactly, and sin(pi*x) and
  /// tan(pi*x) have period 1 (up to sign for sin), so evaluating them on the
  /// reduced argument keeps full accuracy for large |x| and near integers.
  Value reduceHalf(Value x) const {
    return sub(x, math::RoundEvenOp::create(b, loc, x));
  }
};

/// ln|Gamma(x)| and digamma(x), computed in f64 for every float type
/// (SpecialFunctions.cpp).
Value emitLgamma(OpBuilder &b, Location loc, Value x);
Value emitDigamma(OpBuilder &b, Location loc, Value x);

//===----------------------------------------------------------------------===//
// Base pattern
//===----------------------------------------------------------------------===//

/// Rejects dynamic shapes up front and replaces ops whose results have no
/// elements by tensor.empty; `lower` rewrites the rest.
template <typename OpT>
struct StaticOpLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  using OpAdaptor = typename OpT::Adaptor;

  LogicalResult
  matchAndRewrite(OpT op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    if (!hasStaticTensorTypes(op))
      return rewriter.notifyMatchFailure(op, "expected static tensor shapes");
    if (SmallVector<Value> empty = emptyResults(rewriter, op); !empty.empty()) {
      rewriter.replaceOp(op, empty);
      return success();
    }
    return lower(op, adaptor, rewriter);
  }

  /// Rewrites `op`; may only fail before creating any IR.
  virtual LogicalResult lower(OpT op, OpAdaptor adaptor,
                              ConversionPatternRewriter &rewriter) const = 0;
};

//===----------------------------------------------------------------------===//
// Pattern families
//===----------------------------------------------------------------------===//

/// Elementwise ops, comparisons, select, casts, constants, iota, random.
void populatePointwisePatterns(RewritePatternSet &patterns);
/// dot, dot_general.
void populateContractionPatterns(RewritePatternSet &patterns);
/// convolve, reduce_window.
void populateConvolutionPatterns(RewritePatternSet &patterns);
/// reduce, scan, softmax, log_softmax, argmax, argmin.
void populateReductionPatterns(RewritePatternSet &patterns);
/// sort, top_k.
void populateSortPatterns(RewritePatternSet &patterns);
/// transpose, reverse, concatenate, slice, pad, reshapes, broadcast_to.
void populateShapePatterns(RewritePatternSet &patterns);
/// dynamic_slice, dynamic_update_slice, gather, scatter.
void populateIndexingPatterns(RewritePatternSet &patterns);

} // namespace mlir::dlvm::to_linalg

#endif // DLVM_LIB_CONVERSION_DLVMTOLINALG_COMMON_H
