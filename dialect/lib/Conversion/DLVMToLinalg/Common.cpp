//===- Common.cpp - shared helpers of the dlvm-to-linalg patterns ---------===//
//
// Definitions of the helpers declared in Common.h: types, constants,
// destination tensors, indexing maps, the elementwise linalg.generic builder,
// reshapes, scalar conversions and the reduction combinators.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dlvm;

namespace mlir::dlvm::to_linalg {

//===----------------------------------------------------------------------===//
// Types, constants and tensors
//===----------------------------------------------------------------------===//

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

bool isStaticTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape();
}

/// True if every operand and result of `op` is a statically shaped tensor:
/// the only form the patterns handle.
bool hasStaticTensorTypes(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), isStaticTensor) &&
         llvm::all_of(op->getResultTypes(), isStaticTensor);
}

Value floatConst(OpBuilder &b, Location loc, Type t, double v) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
}

/// An integer constant of type `t`, `v` truncated (or sign-extended) to its
/// width: intConst(i1, -1) is true.
Value intConst(OpBuilder &b, Location loc, Type t, int64_t v) {
  unsigned width = cast<IntegerType>(t).getWidth();
  return arith::ConstantOp::create(
      b, loc,
      IntegerAttr::get(t, APInt(width, static_cast<uint64_t>(v),
                                /*isSigned=*/true, /*implicitTrunc=*/true)));
}

Value zeroConst(OpBuilder &b, Location loc, Type t) {
  return arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(t)));
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return emptyTensor(b, loc, type.getShape(), type.getElementType());
}

/// A tensor of `type` with every element equal to `scalar`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar) {
  Value empty = emptyTensor(b, loc, type);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

Value zeroTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return filledTensor(b, loc, type, zeroConst(b, loc, type.getElementType()));
}

/// Results with no elements need no computation: a tensor.empty of each
/// type. (Slices and pads of zero-sized tensors also trip memref.subview's
/// verifier after bufferization.) Empty if some result has elements.
SmallVector<Value> emptyResults(OpBuilder &b, Operation *op) {
  auto types = llvm::map_to_vector(op->getResultTypes(),
                                   [](Type t) { return cast<RankedTensorType>(t); });
  if (llvm::any_of(types, [](RankedTensorType t) { return t.getNumElements() != 0; }))
    return {};
  return llvm::map_to_vector(
      types, [&](RankedTensorType t) { return emptyTensor(b, op->getLoc(), t); });
}

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return llvm::map_to_vector(values, [&](int64_t v) -> OpFoldResult {
    return b.getIndexAttr(v);
  });
}

SmallVector<OpFoldResult> unitStrides(OpBuilder &b, int64_t rank) {
  return SmallVector<OpFoldResult>(rank, b.getIndexAttr(1));
}

int64_t productOfDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= shape[d];
  return n;
}

SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> dropped) {
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
    if (!llvm::is_contained(dropped, d))
      kept.push_back(shape[d]);
  return kept;
}

bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  return llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()));
}

Value transposeUnlessIdentity(OpBuilder &b, Location loc, Value v,
                              ArrayRef<int64_t> perm) {
  if (isIdentityPermutation(perm))
    return v;
  return TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(perm));
}

//===----------------------------------------------------------------------===//
// linalg structure: iterators, indexing maps, generics
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> parallelIterators(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

/// Indexing map that reads `operandType` at the iteration point of a loop
/// nest over `shape` with DLVM broadcasting: a rank-0 operand has the empty
/// map; a size-1 dimension facing a larger one always reads index 0.
AffineMap broadcastingMap(RankedTensorType operandType,
                          ArrayRef<int64_t> shape, MLIRContext *ctx) {
  unsigned rank = shape.size();
  if (operandType.getRank() == 0)
    return AffineMap::get(rank, 0, ctx);
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    exprs.push_back(operandType.getDimSize(d) == 1 && shape[d] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// The map (d0, ..., d{rank-1}) -> (all d except those in `dropped`): reads a
/// reduced tensor from the loop nest of the unreduced one.
AffineMap dropDimsMap(unsigned rank, ArrayRef<int64_t> dropped,
                      MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    if (!llvm::is_contained(dropped, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// Builds a parallel linalg.generic producing `resultType` from `inputs`
/// (broadcast with DLVM's rules); `body` maps the input elements to the
/// result element. Explicit `maps` replace the broadcasting maps when given.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBodyFn body,
                       ArrayRef<AffineMap> maps) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> indexingMaps(maps);
  if (indexingMaps.empty())
    for (Value in : inputs)
      indexingMaps.push_back(
          broadcastingMap(tensorType(in), resultType.getShape(), ctx));
  indexingMaps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = emptyTensor(b, loc, resultType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, indexingMaps,
      parallelIterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

/// Reassociation that collapses away the unit dimensions `dropped` of a
/// tensor of rank `rank`: each dropped dimension joins the group of the next
/// kept one (or of the last kept one when it trails). Empty when every
/// dimension is dropped (a collapse to rank 0).
SmallVector<ReassociationIndices>
dropUnitDimsReassociation(int64_t rank, ArrayRef<int64_t> dropped) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0; d < rank; ++d) {
    pending.push_back(d);
    if (!llvm::is_contained(dropped, d)) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return groups;
}

/// Reshapes `v` (row-major) to `resultType` with collapse/expand_shape: one op
/// when the shapes are related by merging or splitting adjacent dimensions,
/// otherwise a collapse to 1-D followed by an expand.
Value reshapeTo(OpBuilder &b, Location loc, Value v,
                RankedTensorType resultType) {
  RankedTensorType srcType = tensorType(v);
  if (srcType == resultType)
    return v;
  ArrayRef<int64_t> src = srcType.getShape(), dst = resultType.getShape();
  // Rank 0 <-> all-ones shapes: the empty reassociation.
  if (src.empty())
    return tensor::ExpandShapeOp::create(b, loc, resultType, v,
                                         ArrayRef<ReassociationIndices>{});
  if (dst.empty())
    return tensor::CollapseShapeOp::create(b, loc, resultType, v,
                                           ArrayRef<ReassociationIndices>{});
  if (dst.size() < src.size())
    if (auto re = getReassociationIndicesForCollapse(src, dst))
      return tensor::CollapseShapeOp::create(b, loc, resultType, v, *re);
  if (dst.size() > src.size())
    if (auto re = getReassociationIndicesForCollapse(dst, src))
      return tensor::ExpandShapeOp::create(b, loc, resultType, v, *re);
  auto flatType = RankedTensorType::get({srcType.getNumElements()},
                                        srcType.getElementType());
  ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, src.size()));
  Value flat = src.size() == 1
                   ? v
                   : Value(tensor::CollapseShapeOp::create(
                         b, loc, flatType, v, ArrayRef<ReassociationIndices>{all}));
  if (dst.size() == 1)
    return flat;
  ReassociationIndices allDst =
      llvm::to_vector(llvm::seq<int64_t>(0, dst.size()));
  return tensor::ExpandShapeOp::create(b, loc, resultType, flat,
                                       ArrayRef<ReassociationIndices>{allDst});
}
//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

namespace {
/// Float to integer with XLA's semantics (llvm.fpto[su]i.sat): truncation
/// toward zero, saturated to the range of `to`, NaN to 0. arith.fptosi and
/// fptoui alone are poison for those inputs; selecting over them is well
/// defined (select does not propagate poison from the unselected operand).
/// Signed: the bounds +-2^(w-1) are powers of two, exact in every float type
/// or rounded to +-inf, so `x >= 2^(w-1)` and `x <= -2^(w-1)` are exactly
/// the out-of-range inputs. Unsigned: `x >= 2^w` overflows; `x <= -1`, and
/// NaN (unordered), give 0 (-1 < x < 0 truncates to 0, which fptoui gives).
Value saturatingFPToInt(OpBuilder &b, Location loc, Value v, IntegerType to) {
  auto from = cast<FloatType>(v.getType());
  unsigned w = to.getWidth();
  bool u = to.isUnsigned();
  APFloat bound = llvm::scalbn(APFloat::getOne(from.getFloatSemantics()),
                               static_cast<int>(u ? w : w - 1),
                               APFloat::rmNearestTiesToEven);
  Value hi = arith::ConstantOp::create(b, loc, b.getFloatAttr(from, bound));
  Value lo = u ? floatConst(b, loc, from, -1.0)
               : Value(arith::ConstantOp::create(b, loc, b.getFloatAttr(from, -bound)));
  Value r = u ? Value(arith::FPToUIOp::create(b, loc, to, v))
              : Value(arith::FPToSIOp::create(b, loc, to, v));
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  };
  auto intAttr = [&](const APInt &i) {
    return arith::ConstantOp::create(b, loc, IntegerAttr::get(to, i));
  };
  r = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OGE, v, hi),
                              intAttr(u ? APInt::getAllOnes(w) : APInt::getSignedMaxValue(w)), r);
  if (u)
    return arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::ULE, v, lo),
                                   intAttr(APInt::getZero(w)), r);
  r = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OLE, v, lo),
                              intAttr(APInt::getSignedMinValue(w)), r);
  return arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::UNO, v, v),
                                 intAttr(APInt::getZero(w)), r);
}
} // namespace

/// Converts a scalar between element types with dlvm.cast's semantics.
/// i1 is a boolean: it converts to 0/1 (unsigned), and conversion to i1 is a
/// comparison with zero (NaN converts to true, as in C). Float to integer
/// truncates toward zero, saturating (NaN gives 0); integer to a narrower
/// integer wraps.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from);
  auto toF = dyn_cast<FloatType>(to);
  if (fromF && toF) {
    if (toF.getWidth() > fromF.getWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    if (toF.getWidth() < fromF.getWidth())
      return arith::TruncFOp::create(b, loc, to, v);
    // f16 <-> bf16: no direct conversion; go through f32 (exact).
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (fromF) {
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   zeroConst(b, loc, from));
    return saturatingFPToInt(b, loc, v, cast<IntegerType>(to));
  }
  bool zeroExtends = from.isInteger(1) || from.isUnsignedInteger();
  if (from.isInteger(1) && !toF)
    return arith::ExtUIOp::create(b, loc, to, v);
  if (toF)
    return zeroExtends ? Value(arith::UIToFPOp::create(b, loc, to, v))
                       : Value(arith::SIToFPOp::create(b, loc, to, v));
  if (to.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 zeroConst(b, loc, from));
  unsigned toWidth = to.getIntOrFloatBitWidth();
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  if (toWidth > fromWidth)
    return zeroExtends ? Value(arith::ExtUIOp::create(b, loc, to, v))
                       : Value(arith::ExtSIOp::create(b, loc, to, v));
  if (toWidth == fromWidth) // i8 <-> ui8: the same bits (signless once erased)
    return arith::BitcastOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}


Value strictlyBefore(OpBuilder &b, Location l, Value a, Value c, bool greater,
                     bool nanFirst) {
  if (isFloat(a)) {
    auto p = greater ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
    Value ordered = arith::CmpFOp::create(b, l, p, a, c);
    Value nan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO,
                                      nanFirst ? a : c, nanFirst ? a : c);
    Value number = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ORD,
                                         nanFirst ? c : a, nanFirst ? c : a);
    return arith::OrIOp::create(b, l, ordered,
                                arith::AndIOp::create(b, l, nan, number));
  }
  bool u = hasUnsignedOrder(a);
  auto p = greater ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                   : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
  return arith::CmpIOp::create(b, l, p, a, c);
}

/// Combines two scalars with a reduction kind (`mean` combines as `add`).
Value combine(OpBuilder &b, Location loc, ReductionKind kind, Value x,
              Value y) {
  bool f = isFloat(x);
  bool i1 = isBool(x);
  switch (kind) {
  case ReductionKind::add:
  case ReductionKind::mean:
    return f ? Value(arith::AddFOp::create(b, loc, x, y))
             : Value(arith::AddIOp::create(b, loc, x, y));
  case ReductionKind::mul:
    return f ? Value(arith::MulFOp::create(b, loc, x, y))
             : Value(arith::MulIOp::create(b, loc, x, y));
  case ReductionKind::max:
    if (f)
      return arith::MaximumFOp::create(b, loc, x, y);
    if (i1)
      return arith::OrIOp::create(b, loc, x, y);
    return isUnsigned(x) ? Value(arith::MaxUIOp::create(b, loc, x, y))
                         : Value(arith::MaxSIOp::create(b, loc, x, y));
  case ReductionKind::min:
    if (f)
      return arith::MinimumFOp::create(b, loc, x, y);
    if (i1)
      return arith::AndIOp::create(b, loc, x, y);
    return isUnsigned(x) ? Value(arith::MinUIOp::create(b, loc, x, y))
                         : Value(arith::MinSIOp::create(b, loc, x, y));
  case ReductionKind::and_:
    return arith::AndIOp::create(b, loc, x, y);
  case ReductionKind::or_:
    return arith::OrIOp::create(b, loc, x, y);
  }
  llvm_unreachable("unknown reduction kind");
}

/// The identity of a combinator on `t`, or null for combinations the
/// verifier rejects (and/or on floats).
TypedAttr identityAttr(OpBuilder &b, ReductionKind kind, Type t) {
  if (auto ft = dyn_cast<FloatType>(t)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    switch (kind) {
    case ReductionKind::add:
    case ReductionKind::mean:
      return b.getFloatAttr(t, 0.0);
    case ReductionKind::mul:
      return b.getFloatAttr(t, 1.0);
    case ReductionKind::max:
      return b.getFloatAttr(t, APFloat::getInf(sem, /*Negative=*/true));
    case ReductionKind::min:
      return b.getFloatAttr(t, APFloat::getInf(sem, /*Negative=*/false));
    default:
      return {};
    }
  }
  unsigned w = t.getIntOrFloatBitWidth();
  bool i1 = w == 1, u = t.isUnsignedInteger();
  switch (kind) {
  case ReductionKind::add:
  case ReductionKind::mean:
  case ReductionKind::or_:
    return IntegerAttr::get(t, APInt::getZero(w));
  case ReductionKind::mul:
    return IntegerAttr::get(t, APInt(w, 1));
  case ReductionKind::max:
    return IntegerAttr::get(t, i1 || u ? APInt::getZero(w)
                                       : APInt::getSignedMinValue(w));
  case ReductionKind::min:
    return IntegerAttr::get(t, i1 || u ? APInt::getAllOnes(w)
                                       : APInt::getSignedMaxValue(w));
  case ReductionKind::and_:
    return IntegerAttr::get(t, APInt::getAllOnes(w));
  }
  return {};
}

} // namespace mlir::dlvm::to_linalg
