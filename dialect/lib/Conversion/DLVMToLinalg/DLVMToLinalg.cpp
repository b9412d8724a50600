//===- DLVMToLinalg.cpp - lower dlvm to linalg-on-tensors -----------------===//
//
// Rewrites every dlvm op into linalg, tensor, arith, math and scf ops on
// statically shaped tensors, ready for one-shot bufferization and the
// upstream CPU/GPU lowerings.
//
// Conventions used throughout:
// - Destination tensors are `tensor.empty` (filled with `linalg.fill` when an
//   op accumulates into them).
// - DLVM broadcasting (rank-0 operands, or size-1 dimensions facing larger
//   ones) is expressed in linalg.generic indexing maps: a broadcast dimension
//   reads index 0, a rank-0 operand has the empty map.
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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

namespace mlir::dlvm {
#define GEN_PASS_DEF_DLVMTOLINALG
#include "dlvm/Passes.h.inc"
} // namespace mlir::dlvm

using namespace mlir;
using namespace mlir::dlvm;

namespace {

//===----------------------------------------------------------------------===//
// Small helpers
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

/// A tensor of `type` with every element equal to `scalar`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar) {
  Value empty = emptyTensor(b, loc, type.getShape(), type.getElementType());
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
  return llvm::map_to_vector(types, [&](RankedTensorType t) {
    return emptyTensor(b, op->getLoc(), t.getShape(), t.getElementType());
  });
}

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return llvm::map_to_vector(values, [&](int64_t v) -> OpFoldResult {
    return b.getIndexAttr(v);
  });
}

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

using ScalarBodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Builds a parallel linalg.generic producing `resultType` from `inputs`
/// (broadcast with DLVM's rules); `body` maps the input elements to the
/// result element. Explicit `maps` replace the broadcasting maps when given.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBodyFn body,
                       ArrayRef<AffineMap> maps = {}) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> indexingMaps(maps);
  if (indexingMaps.empty())
    for (Value in : inputs)
      indexingMaps.push_back(
          broadcastingMap(tensorType(in), resultType.getShape(), ctx));
  indexingMaps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = emptyTensor(b, loc, resultType.getShape(),
                           resultType.getElementType());
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
// Scalar arithmetic
//===----------------------------------------------------------------------===//

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }
bool isBool(Value v) { return v.getType().isInteger(1); }

/// fptosi with XLA's (and llvm.fptosi.sat's) semantics: truncation toward
/// zero, saturated to [MIN, MAX] of `to`, NaN to 0. arith.fptosi is poison for
/// those inputs; selecting over it is well defined (select does not
/// propagate poison from the unselected operand). The bounds +-2^(w-1) are
/// powers of two, exact in every float type or rounded to +-inf, so `x >=
/// 2^(w-1)` and `x <= -2^(w-1)` are exactly the out-of-range inputs.
Value saturatingFPToSI(OpBuilder &b, Location loc, Value v, IntegerType to) {
  auto from = cast<FloatType>(v.getType());
  unsigned w = to.getWidth();
  APFloat bound = llvm::scalbn(APFloat::getOne(from.getFloatSemantics()),
                               static_cast<int>(w) - 1,
                               APFloat::rmNearestTiesToEven);
  Value hi = arith::ConstantOp::create(b, loc, b.getFloatAttr(from, bound));
  Value lo = arith::ConstantOp::create(b, loc, b.getFloatAttr(from, -bound));
  Value r = arith::FPToSIOp::create(b, loc, to, v);
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  };
  auto intAttr = [&](const APInt &i) {
    return arith::ConstantOp::create(b, loc, IntegerAttr::get(to, i));
  };
  r = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OGE, v, hi),
                              intAttr(APInt::getSignedMaxValue(w)), r);
  r = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OLE, v, lo),
                              intAttr(APInt::getSignedMinValue(w)), r);
  return arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::UNO, v, v),
                                 intAttr(APInt::getZero(w)), r);
}

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
    return saturatingFPToSI(b, loc, v, cast<IntegerType>(to));
  }
  if (from.isInteger(1)) {
    if (toF)
      return arith::UIToFPOp::create(b, loc, to, v);
    return arith::ExtUIOp::create(b, loc, to, v);
  }
  if (toF)
    return arith::SIToFPOp::create(b, loc, to, v);
  if (to.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                 zeroConst(b, loc, from));
  if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}

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

/// Special functions (lgamma, digamma) are evaluated in f64 for every float
/// type and rounded once, so that f32 (and f16/bf16) results are within an
/// ulp or so of the correctly rounded value.
Type specialComputeType(OpBuilder &b) { return b.getF64Type(); }

/// f16/bf16 <-> f64 through f32: a JIT without compiler-rt has no
/// __truncdfhf2 (the double rounding is harmless at half precision).
Value toF64(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  if (!t.isF64() && !t.isF32())
    x = convertScalar(b, loc, x, b.getF32Type());
  return convertScalar(b, loc, x, b.getF64Type());
}

Value fromF64(OpBuilder &b, Location loc, Value x, Type t) {
  if (t.isF64() || t.isF32())
    return convertScalar(b, loc, x, t);
  return convertScalar(b, loc, convertScalar(b, loc, x, b.getF32Type()), t);
}

/// Horner evaluation of sum c[i] z^i (c[0] first).
Value hornerAscending(const FloatMath &m, Value z, ArrayRef<double> c) {
  Value acc = m.c(c.back());
  for (int i = static_cast<int>(c.size()) - 2; i >= 0; --i)
    acc = m.add(m.mul(acc, z), m.c(c[i]));
  return acc;
}

/// ln Gamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) / k z^k
/// for |z| <= 1/2, through k = 27 (truncation below 1e-16 relative); the
/// coefficients were computed with 50-digit Hurwitz zeta sums. Exactly 0 at
/// z = 0.
Value lgammaAround2(const FloatMath &m, Value z) {
  static constexpr double kCoef[] = {
      0.42278433509846713,     0.3224670334241132,     -0.0673523010531981,
      0.020580808427784546,    -0.007385551028673986,  0.0028905103307415234,
      -0.001192753911703261,   0.0005096695247430425,  -0.00022315475845357939,
      9.945751278180853e-05,   -4.492623673813314e-05, 2.050721277567069e-05,
      -9.439488275268397e-06,  4.374866789907488e-06,  -2.039215753801366e-06,
      9.55141213040742e-07,    -4.492469198764566e-07, 2.1207184805554665e-07,
      -1.0043224823968099e-07, 4.7698101693639804e-08, -2.2711094608943164e-08,
      1.0838659214896955e-08,  -5.183475041970047e-09, 2.4836745438024785e-09,
      -1.1921401405860912e-09, 5.731367241678862e-10,  -2.7595228851242334e-10};
  return m.mul(z, hornerAscending(m, z, kCoef));
}

/// ln Gamma(y) for y >= 3.5 (f64): Lanczos approximation with g = 7, n = 9
/// (Godfrey's coefficients; relative error of Gamma below about 2e-15),
/// written as (z + 1/2)(ln t - 1) - 7 + ln a + ln(2 pi)/2 with t = z + 7.5
/// so that nothing overflows before the result does.
Value lanczosLgamma(const FloatMath &m, Value y) {
  static constexpr double kCoef[] = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  Value z = m.sub(y, m.c(1.0));
  Value a = m.c(kCoef[0]);
  for (int i = 1; i < 9; ++i)
    a = m.add(a, m.div(m.c(kCoef[i]), m.add(z, m.c(i))));
  Value t = m.add(z, m.c(7.5));
  Value r = m.mul(m.add(z, m.c(0.5)), m.sub(m.log(t), m.c(1.0)));
  r = m.add(m.sub(r, m.c(7.0)), m.log(a));
  return m.add(r, m.c(0.91893853320467274178));
}

/// ln Gamma(y) for y > 0 (f64), branch-free:
///   y < 1.5:         ln Gamma(2 + w) - log1p(w) [- ln y for y < 0.5],
///                    w = y (y < 0.5) or y - 1 (exact)
///   1.5 <= y < 2.5:  ln Gamma(2 + (y - 2))
///   2.5 <= y < 3.5:  ln Gamma(2 + (y - 3)) + ln(y - 1)
///   y >= 3.5:        Lanczos
/// so that the roots y = 1 and y = 2 give exactly 0 and the values around
/// them keep their relative accuracy.
Value positiveLgamma(const FloatMath &m, Value y) {
  Value below05 = m.lt(y, m.c(0.5));
  Value below15 = m.lt(y, m.c(1.5));
  Value below25 = m.lt(y, m.c(2.5));
  Value below35 = m.lt(y, m.c(3.5));
  Value w = m.select(below05, y, m.sub(y, m.c(1.0)));
  Value z = m.select(below15, w,
                     m.select(below25, m.sub(y, m.c(2.0)),
                              m.sub(y, m.c(3.0))));
  Value series = lgammaAround2(m, z);
  Value low = m.sub(series, m.log1p(w));
  low = m.select(below05, m.sub(low, m.log(y)), low);
  Value mid = m.select(below25, series,
                       m.add(series, m.log(m.sub(y, m.c(1.0)))));
  Value small = m.select(below15, low, mid);
  return m.select(below35, small, lanczosLgamma(m, y));
}

/// ln|Gamma(x)|: see positiveLgamma for x > 0; ln Gamma(1 + x) - ln(-x) for
/// -1/2 < x < 0; below, the reflection formula ln|Gamma(x)| = ln(pi) -
/// ln|sin(pi x)| - ln Gamma(1 - x), with sin(pi x) evaluated at the exactly
/// reduced x - rint(x). Poles
/// (non-positive integers, -0.0 included) and +-inf give +inf; NaN
/// propagates. Computed in f64 for every float type.
///
/// Accuracy (test/python/test_math_accuracy.py, docs/cpu.md): f32 within 1
/// ulp, f64 relative error below 1e-14 except where x < 0 is close to a
/// root of ln|Gamma| (the two terms of the reflection cancel: the error is
/// relative to their magnitude there).
Value emitLgamma(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  FloatMath m{b, loc, specialComputeType(b)};
  x = toF64(b, loc, x);
  Value negative = m.lt(x, m.c(0.0));
  // -1/2 < x < 0: ln Gamma(1 + x) - ln(-x) (no reflection: sin(pi x) of a
  // denormal x would lose digits)
  Value nearZero = arith::AndIOp::create(b, loc, negative,
                                         m.lt(m.c(-0.5), x));
  Value y = m.select(nearZero, m.add(m.c(1.0), x),
                     m.select(negative, m.sub(m.c(1.0), x), x));
  Value lg = positiveLgamma(m, y);
  Value sinPiX = m.abs(m.sin(m.mul(m.c(M_PI), m.reduceHalf(x))));
  Value reflected = m.sub(m.sub(m.c(1.1447298858494002), m.log(sinPiX)), lg);
  Value shifted = m.sub(lg, m.log(m.abs(x)));
  Value r = m.select(nearZero, shifted, m.select(negative, reflected, lg));
  Value pole = arith::AndIOp::create(
      b, loc, m.cmp(arith::CmpFPredicate::OLE, x, m.c(0.0)),
      m.cmp(arith::CmpFPredicate::OEQ, x, m.floor(x)));
  Value isInf = m.cmp(arith::CmpFPredicate::OEQ, m.abs(x), m.c(INFINITY));
  r = m.select(arith::OrIOp::create(b, loc, pole, isInf), m.c(INFINITY), r);
  return fromF64(b, loc, r, t);
}

/// digamma(y) for y > 0 (f64): the recurrence psi(y) = psi(y + 1) - 1/y
/// (unrolled, branch-free) until y >= 10, then the asymptotic series
/// ln y - 1/(2y) - sum_k B_2k/(2k y^2k) through k = 7 (truncation below
/// 1e-17 relative). Within 0.25 of the positive root x0 = 1.4616..., where
/// that sum cancels, a Taylor series in (y - x0) instead (x0 split in two
/// doubles; coefficients (-1)^(k+1) zeta(k + 1, x0), from 50-digit Hurwitz
/// zeta sums), so that the root keeps relative accuracy.
Value positiveDigamma(const FloatMath &m, Value y) {
  constexpr int kShift = 10;
  Value acc = m.c(0.0);
  Value limit = m.c(kShift);
  Value v = y;
  // y > 0 here, so kShift steps always reach v >= kShift.
  for (int i = 0; i < kShift; ++i) {
    Value small = m.lt(v, limit);
    acc = m.add(acc, m.select(small, m.div(m.c(1.0), v), m.c(0.0)));
    v = m.select(small, m.add(v, m.c(1.0)), v);
  }
  Value f = m.div(m.c(1.0), m.mul(v, v));
  // Horner form of 1/12 - f/120 + f^2/252 - f^3/240 + f^4/132
  // - 691 f^5/32760 + f^6/12.
  Value poly = m.sub(m.c(691.0 / 32760.0), m.mul(f, m.c(1.0 / 12.0)));
  poly = m.sub(m.c(1.0 / 132.0), m.mul(f, poly));
  poly = m.sub(m.c(1.0 / 240.0), m.mul(f, poly));
  poly = m.sub(m.c(1.0 / 252.0), m.mul(f, poly));
  poly = m.sub(m.c(1.0 / 120.0), m.mul(f, poly));
  poly = m.sub(m.c(1.0 / 12.0), m.mul(f, poly));
  Value series = m.sub(m.sub(m.log(v), m.div(m.c(0.5), v)), m.mul(f, poly));
  Value psi = m.sub(series, acc);

  static constexpr double kRoot[] = {
      0.9676722454476212,     -0.4427631689835921,    0.258499760955651,
      -0.16394270544240652,   0.10782405069126237,    -0.07219956125645471,
      0.04880428816414311,    -0.03316112647484736,   0.022597648232218104,
      -0.01542476590494896,   0.010538791616612175,   -0.007204534386356869,
      0.004926781395729853,   -0.003369801655439328,  0.002305126326734928,
      -0.0015769367714301972, 0.0010788252019162967,  -0.0007380709389960052,
      0.000504953265834602,   -0.0003454680251063077, 0.00023635601564027053,
      -0.00016170622091974803, 0.0001106337276874741};
  Value d = m.sub(m.sub(y, m.c(1.4616321449683622)), m.c(9.549995429965697e-17));
  Value nearRoot = m.lt(m.abs(d), m.c(0.25));
  return m.select(nearRoot, m.mul(d, hornerAscending(m, d, kRoot)), psi);
}

/// digamma(x) = d/dx ln Gamma(x): see positiveDigamma for x > 0; for x < 0
/// the reflection psi(x) = psi(1 - x) - pi/tan(pi x), with tan(pi x)
/// evaluated at the exactly reduced x - rint(x). Non-positive integers
/// (0 and -0.0 included) and -inf give NaN; +inf gives +inf. Computed in f64
/// for every float type.
///
/// Accuracy (test/python/test_math_accuracy.py, docs/cpu.md): f32 within 1
/// ulp, f64 relative error below 1e-14 except where x < 0 is close to a
/// root of digamma (the two terms of the reflection cancel: the error is
/// relative to their magnitude there).
Value emitDigamma(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  FloatMath m{b, loc, specialComputeType(b)};
  x = toF64(b, loc, x);
  Value negative = m.lt(x, m.c(0.0));
  Value y = m.select(negative, m.sub(m.c(1.0), x), x);
  Value psi = positiveDigamma(m, y);
  // pi cot(pi x) at r = x - rint(x) in [-1/2, 1/2]: for |r| > 1/4 as
  // pi tan(pi (1/2 - |r|)) with the sign of r (1/2 - |r| is exact), since
  // tan(pi r) near pi/2 would amplify the rounding of pi r.
  Value r = m.reduceHalf(x);
  Value absR = m.abs(r);
  Value nearHalf = m.cmp(arith::CmpFPredicate::OGT, absR, m.c(0.25));
  Value piTan =
      m.mul(m.c(M_PI), m.tan(m.mul(m.c(M_PI), m.sub(m.c(0.5), absR))));
  Value piCot = m.select(
      nearHalf,
      m.select(m.lt(r, m.c(0.0)), arith::NegFOp::create(b, loc, piTan), piTan),
      m.div(m.c(M_PI), m.tan(m.mul(m.c(M_PI), r))));
  Value result = m.select(negative, m.sub(psi, piCot), psi);
  Value pole = arith::AndIOp::create(
      b, loc, m.cmp(arith::CmpFPredicate::OLE, x, m.c(0.0)),
      m.cmp(arith::CmpFPredicate::OEQ, x, m.floor(x)));
  result = m.select(pole, m.c(NAN), result);
  return fromF64(b, loc, result, t);
}

/// The divisor for a non-trapping signed division x / y: 1 where y == 0 or
/// (x, y) == (MIN, -1), else y. Also returns the `y == 0` mask.
std::pair<Value, Value> safeDivisor(OpBuilder &b, Location loc, Value x,
                                    Value y) {
  Type t = y.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value zero = zeroConst(b, loc, t);
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  Value isMin = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, x,
      arith::ConstantOp::create(
          b, loc, IntegerAttr::get(t, APInt::getSignedMinValue(width))));
  Value isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y,
                                           intConst(b, loc, t, -1));
  Value overflow = arith::AndIOp::create(b, loc, isMin, isMinusOne);
  Value bad = arith::OrIOp::create(b, loc, isZero, overflow);
  Value safe = arith::SelectOp::create(b, loc, bad, intConst(b, loc, t, 1), y);
  return {safe, isZero};
}

/// True where a truncated remainder `r` of a division by `y` must be adjusted
/// for flooring: r != 0 and sign(r) != sign(y).
Value needsFloorAdjust(OpBuilder &b, Location loc, Value r, Value y) {
  Value zero = zeroConst(b, loc, r.getType());
  Value nonZero, rNeg, yNeg;
  if (isFloat(r)) {
    nonZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, r, zero);
    rNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, zero);
    yNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, y, zero);
  } else {
    nonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
    rNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
    yNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, y, zero);
  }
  return arith::AndIOp::create(b, loc, nonZero,
                               arith::XOrIOp::create(b, loc, rNeg, yNeg));
}

enum class DivKind { True, Trunc, Floor, Mod, Rem };

/// Division family. Floats: x / y, trunc(x / y), floor(x / y), the floored
/// remainder fmod(x, y) (+ y when the signs differ) and the truncated one
/// fmod(x, y). Integers: signed, never trapping, as XLA (x / 0 == -1,
/// x mod 0 == x rem 0 == x, MIN / -1 == MIN, MIN mod -1 == MIN rem -1 == 0).
/// i1 (one bit, where true is both 1 and -1): x / y is `x | !y` (x / true ==
/// x, x / false == true), x mod y and x rem y are `x & !y`.
Value emitDivision(OpBuilder &b, Location loc, DivKind kind, Value x, Value y) {
  if (isFloat(x)) {
    if (kind == DivKind::Rem)
      return arith::RemFOp::create(b, loc, x, y);
    if (kind == DivKind::Mod) {
      Value r = arith::RemFOp::create(b, loc, x, y);
      Value adjusted = arith::AddFOp::create(b, loc, r, y);
      return arith::SelectOp::create(b, loc, needsFloorAdjust(b, loc, r, y),
                                     adjusted, r);
    }
    Value q = arith::DivFOp::create(b, loc, x, y);
    if (kind == DivKind::Trunc)
      return math::TruncOp::create(b, loc, q);
    if (kind == DivKind::Floor)
      return math::FloorOp::create(b, loc, q);
    return q;
  }
  if (isBool(x)) {
    Value notY = arith::XOrIOp::create(b, loc, y, intConst(b, loc, y.getType(), 1));
    bool remainder = kind == DivKind::Mod || kind == DivKind::Rem;
    return remainder ? Value(arith::AndIOp::create(b, loc, x, notY))
                     : Value(arith::OrIOp::create(b, loc, x, notY));
  }
  auto [safe, isZero] = safeDivisor(b, loc, x, y);
  if (kind == DivKind::Rem) // MIN rem -1: remsi(MIN, 1) == 0; x rem 0: x.
    return arith::SelectOp::create(b, loc, isZero, x,
                                   arith::RemSIOp::create(b, loc, x, safe));
  if (kind == DivKind::Mod) {
    // MIN mod -1: remsi(MIN, 1) == 0; x mod 0: x.
    Value r = arith::RemSIOp::create(b, loc, x, safe);
    Value adjusted = arith::AddIOp::create(b, loc, r, y);
    Value m = arith::SelectOp::create(b, loc, needsFloorAdjust(b, loc, r, y),
                                      adjusted, r);
    return arith::SelectOp::create(b, loc, isZero, x, m);
  }
  Value q = arith::DivSIOp::create(b, loc, x, safe);
  if (kind == DivKind::Floor) {
    Value r = arith::RemSIOp::create(b, loc, x, safe);
    Value minusOne =
        arith::SubIOp::create(b, loc, q, intConst(b, loc, q.getType(), 1));
    q = arith::SelectOp::create(b, loc, needsFloorAdjust(b, loc, r, safe),
                                minusOne, q);
  }
  return arith::SelectOp::create(b, loc, isZero,
                                 intConst(b, loc, x.getType(), -1), q);
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
    return i1 ? Value(arith::OrIOp::create(b, loc, x, y))
              : Value(arith::MaxSIOp::create(b, loc, x, y));
  case ReductionKind::min:
    if (f)
      return arith::MinimumFOp::create(b, loc, x, y);
    return i1 ? Value(arith::AndIOp::create(b, loc, x, y))
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
  bool i1 = w == 1;
  switch (kind) {
  case ReductionKind::add:
  case ReductionKind::mean:
  case ReductionKind::or_:
    return IntegerAttr::get(t, APInt::getZero(w));
  case ReductionKind::mul:
    return IntegerAttr::get(t, APInt(w, 1));
  case ReductionKind::max:
    return IntegerAttr::get(t, i1 ? APInt::getZero(w)
                                  : APInt::getSignedMinValue(w));
  case ReductionKind::min:
    return IntegerAttr::get(t, i1 ? APInt::getAllOnes(w)
                                  : APInt::getSignedMaxValue(w));
  case ReductionKind::and_:
    return IntegerAttr::get(t, APInt::getAllOnes(w));
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise ops: one linalg.generic, the scalar computation per op.
//===----------------------------------------------------------------------===//

/// Computes one result element of `op` from its (broadcast) operand elements.
using ScalarFn = Value (*)(OpBuilder &, Location, Operation *, ValueRange);

template <typename OpT>
struct ElementwiseLowering : OpConversionPattern<OpT> {
  ElementwiseLowering(MLIRContext *ctx, ScalarFn fn)
      : OpConversionPattern<OpT>(ctx), fn(fn) {}

  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!hasStaticTensorTypes(op))
      return rewriter.notifyMatchFailure(op, "expected static tensor shapes");
    if (SmallVector<Value> empty = emptyResults(rewriter, op); !empty.empty()) {
      rewriter.replaceOp(op, empty);
      return success();
    }
    Operation *raw = op.getOperation();
    Value result = buildElementwise(
        rewriter, op.getLoc(), cast<RankedTensorType>(op.getType()),
        adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return fn(b, loc, raw, args);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  ScalarFn fn;
};

template <typename MathOp>
Value mathUnary(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return MathOp::create(b, loc, a[0]);
}

/// A binary arith op with a float and an integer form.
template <typename FloatOp, typename IntOp>
Value arithBinary(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  if (isFloat(a[0]))
    return FloatOp::create(b, loc, a[0], a[1]);
  return IntOp::create(b, loc, a[0], a[1]);
}

template <typename FloatOp>
Value floatBinary(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return FloatOp::create(b, loc, a[0], a[1]);
}

template <typename IntOp>
Value intBinary(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return IntOp::create(b, loc, a[0], a[1]);
}

Value emitNeg(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  if (isFloat(a[0]))
    return arith::NegFOp::create(b, loc, a[0]);
  return arith::SubIOp::create(b, loc, zeroConst(b, loc, a[0].getType()), a[0]);
}

Value emitAbs(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  if (isFloat(a[0]))
    return math::AbsFOp::create(b, loc, a[0]);
  if (isBool(a[0]))
    return a[0];
  // select(x < 0, -x, x) rather than math.absi, which convert-to-llvm does
  // not lower. |MIN| wraps to MIN, as in two's complement.
  Value zero = zeroConst(b, loc, a[0].getType());
  Value neg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a[0], zero);
  return arith::SelectOp::create(b, loc, neg,
                                 arith::SubIOp::create(b, loc, zero, a[0]),
                                 a[0]);
}

Value emitSquare(OpBuilder &b, Location loc, Operation *op, ValueRange a) {
  SmallVector<Value, 2> args = {a[0], a[0]};
  return arithBinary<arith::MulFOp, arith::MulIOp>(b, loc, op, args);
}

/// max(x, 0); NaN propagates for floats; identity on i1.
Value emitRelu(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  Value zero = zeroConst(b, loc, a[0].getType());
  if (isFloat(a[0]))
    return arith::MaximumFOp::create(b, loc, a[0], zero);
  if (isBool(a[0]))
    return a[0];
  return arith::MaxSIOp::create(b, loc, a[0], zero);
}

/// 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) for x < 0: one exp of -|x|,
/// so nothing overflows and the denormal results of very negative x (down
/// to about -103 in f32, -745 in f64) are kept. The division is by the
/// exact 1 + e (d + dlo, Fast2Sum) with one correction step (the residual
/// num - q d is exact with an FMA), so the error is about that of exp.
Value emitSigmoid(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  FloatMath m{b, loc, a[0].getType()};
  Value x = a[0];
  Value e = math::ExpOp::create(
      b, loc, arith::NegFOp::create(b, loc, m.abs(x)));
  Value num = m.select(m.cmp(arith::CmpFPredicate::OGE, x, m.c(0.0)),
                       m.c(1.0), e);
  Value d = m.add(m.c(1.0), e);
  Value dlo = m.add(m.sub(m.c(1.0), d), e);
  Value q = m.div(num, d);
  Value residual =
      math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, q), d, num);
  return m.add(q, m.div(m.sub(residual, m.mul(q, dlo)), d));
}

/// -1, 0 or 1; floats return +-0 and NaN unchanged.
Value emitSign(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  Value x = a[0];
  Type t = x.getType();
  Value zero = zeroConst(b, loc, t);
  Value pos, neg, one, minusOne;
  if (isFloat(x)) {
    pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    one = floatConst(b, loc, t, 1.0);
    minusOne = floatConst(b, loc, t, -1.0);
  } else {
    pos = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
    neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
    one = intConst(b, loc, t, 1);
    minusOne = intConst(b, loc, t, -1);
  }
  Value notPos =
      arith::SelectOp::create(b, loc, neg, minusOne, isFloat(x) ? x : zero);
  return arith::SelectOp::create(b, loc, pos, one, notPos);
}

Value emitLgammaFn(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return emitLgamma(b, loc, a[0]);
}

Value emitDigammaFn(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return emitDigamma(b, loc, a[0]);
}

Value emitNot(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return arith::XOrIOp::create(b, loc, a[0],
                               intConst(b, loc, a[0].getType(), -1));
}

/// NaN-propagating min/max for floats; signed for integers; and/or on i1.
template <bool IsMax>
Value emitMinMax(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return combine(b, loc, IsMax ? ReductionKind::max : ReductionKind::min, a[0],
                 a[1]);
}

template <DivKind Kind>
Value emitDiv(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return emitDivision(b, loc, Kind, a[0], a[1]);
}

/// Floats compare ordered (false with NaN) except `ne` (unordered: true with
/// NaN). Integers compare signed; i1 compares as a boolean (false < true).
Value emitCmp(OpBuilder &b, Location loc, Operation *op, ValueRange a) {
  CmpPredicate p = cast<CmpOp>(op).getPredicate();
  if (isFloat(a[0])) {
    arith::CmpFPredicate fp = arith::CmpFPredicate::UNE;
    switch (p) {
    case CmpPredicate::lt: fp = arith::CmpFPredicate::OLT; break;
    case CmpPredicate::le: fp = arith::CmpFPredicate::OLE; break;
    case CmpPredicate::gt: fp = arith::CmpFPredicate::OGT; break;
    case CmpPredicate::ge: fp = arith::CmpFPredicate::OGE; break;
    case CmpPredicate::eq: fp = arith::CmpFPredicate::OEQ; break;
    case CmpPredicate::ne: fp = arith::CmpFPredicate::UNE; break;
    }
    return arith::CmpFOp::create(b, loc, fp, a[0], a[1]);
  }
  bool u = isBool(a[0]);
  using P = arith::CmpIPredicate;
  P ip = P::ne;
  switch (p) {
  case CmpPredicate::lt: ip = u ? P::ult : P::slt; break;
  case CmpPredicate::le: ip = u ? P::ule : P::sle; break;
  case CmpPredicate::gt: ip = u ? P::ugt : P::sgt; break;
  case CmpPredicate::ge: ip = u ? P::uge : P::sge; break;
  case CmpPredicate::eq: ip = P::eq; break;
  case CmpPredicate::ne: ip = P::ne; break;
  }
  return arith::CmpIOp::create(b, loc, ip, a[0], a[1]);
}

/// x << y, x >> y (logical or arithmetic) with y read as unsigned; a shift
/// by the bit width or more moves every bit out (XLA): 0, or the sign fill.
enum class ShiftKind { Left, RightLogical, RightArithmetic };
template <ShiftKind Kind>
Value emitShift(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  Value x = a[0], y = a[1];
  Type t = x.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, y,
                                        intConst(b, loc, t, width));
  Value shifted, out;
  switch (Kind) {
  case ShiftKind::Left:
    shifted = arith::ShLIOp::create(b, loc, x, y);
    out = zeroConst(b, loc, t);
    break;
  case ShiftKind::RightLogical:
    shifted = arith::ShRUIOp::create(b, loc, x, y);
    out = zeroConst(b, loc, t);
    break;
  case ShiftKind::RightArithmetic:
    shifted = arith::ShRSIOp::create(b, loc, x, y);
    out = arith::ShRSIOp::create(b, loc, x, intConst(b, loc, t, width - 1));
    break;
  }
  return arith::SelectOp::create(b, loc, inRange, shifted, out);
}

/// |x| < inf: false for +-inf and NaN.
Value emitIsFinite(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  Value magnitude = math::AbsFOp::create(b, loc, a[0]);
  auto type = cast<FloatType>(a[0].getType());
  Value inf = arith::ConstantOp::create(
      b, loc, FloatAttr::get(type, APFloat::getInf(type.getFloatSemantics())));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, magnitude, inf);
}

/// min(max(x, lo), hi) with the min/max semantics of dlvm.min / dlvm.max.
Value emitClamp(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  Value low = combine(b, loc, ReductionKind::max, a[1], a[0]);
  return combine(b, loc, ReductionKind::min, low, a[2]);
}

Value emitSelect(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
}

Value emitCast(OpBuilder &b, Location loc, Operation *op, ValueRange a) {
  return convertScalar(b, loc, a[0], cast<CastOp>(op).getDtype());
}

Value emitBitcast(OpBuilder &b, Location loc, Operation *op, ValueRange a) {
  return arith::BitcastOp::create(b, loc, cast<BitcastOp>(op).getDtype(), a[0]);
}

template <typename OpT>
void addElementwise(RewritePatternSet &patterns, ScalarFn fn) {
  patterns.add<ElementwiseLowering<OpT>>(patterns.getContext(), fn);
}

//===----------------------------------------------------------------------===//
// Base for the remaining patterns: rejects dynamic shapes up front.
//===----------------------------------------------------------------------===//

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
// dot
//===----------------------------------------------------------------------===//

/// If `v` is a `dlvm.transpose` that swaps the last two dimensions and keeps
/// the others in place (a matrix transpose, batched or not), its operand;
/// null otherwise.
Value matrixTransposeSource(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || !isStaticTensor(t.getOperand().getType()))
    return {};
  SmallVector<int64_t> perm = t.getPermutation();
  int64_t r = perm.size();
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2)
    return {};
  for (int64_t i = 0; i < r - 2; ++i)
    if (perm[i] != i)
      return {};
  return t.getOperand();
}

/// matrix x matrix -> linalg.matmul; batched -> linalg.batch_matmul (batch
/// dimensions collapsed into one when there are several); matrix x vector ->
/// linalg.matvec; vector x matrix -> linalg.vecmat; vector . vector ->
/// linalg.dot. The accumulator starts at zero.
///
/// A matrix operand produced by a `dlvm.transpose` of its last two dimensions
/// (what the AD emits for `dz . transpose(w)` and `transpose(h) . dz`) is not
/// materialized: the matmul / batch_matmul reads the transpose's operand
/// through transposed `indexing_maps`, and `transpose(A) . v` / `v .
/// transpose(A)` become `v . A` (vecmat) / `A . v` (matvec). The transpose
/// itself is lowered as usual; the pass erases it when nothing else uses it.
struct DotLowering : StaticOpLowering<DotOp> {
  using StaticOpLowering::StaticOpLowering;

  template <typename NamedOp>
  static Value contract(OpBuilder &b, Location loc, Value l, Value r,
                        RankedTensorType type) {
    Value acc = zeroTensor(b, loc, type);
    return NamedOp::create(b, loc, TypeRange{type}, ValueRange{l, r},
                           ValueRange{acc})
        ->getResult(0);
  }

  /// A (batch_)matmul whose operands are read transposed where `transA` /
  /// `transB` say: over loops (batch?, m, n, k), A reads (k, m) instead of
  /// (m, k) and B reads (n, k) instead of (k, n).
  template <typename NamedOp>
  static Value transposedContract(OpBuilder &b, Location loc, Value l, Value r,
                                  RankedTensorType type, bool transA,
                                  bool transB) {
    if (!transA && !transB)
      return contract<NamedOp>(b, loc, l, r, type);
    MLIRContext *ctx = b.getContext();
    unsigned batch = type.getRank() - 2;
    unsigned nd = batch + 3;
    SmallVector<AffineExpr> bd;
    for (unsigned i = 0; i < batch; ++i)
      bd.push_back(getAffineDimExpr(i, ctx));
    AffineExpr m = getAffineDimExpr(batch, ctx);
    AffineExpr n = getAffineDimExpr(batch + 1, ctx);
    AffineExpr k = getAffineDimExpr(batch + 2, ctx);
    auto map = [&](AffineExpr x, AffineExpr y) {
      SmallVector<AffineExpr> exprs(bd);
      exprs.push_back(x);
      exprs.push_back(y);
      return AffineMapAttr::get(AffineMap::get(nd, 0, exprs, ctx));
    };
    Value acc = zeroTensor(b, loc, type);
    auto op = NamedOp::create(b, loc, TypeRange{type}, ValueRange{l, r},
                              ValueRange{acc});
    op.setIndexingMapsAttr(b.getArrayAttr({transA ? map(k, m) : map(m, k),
                                           transB ? map(n, k) : map(k, n),
                                           map(m, n)}));
    return op->getResult(0);
  }

  LogicalResult lower(DotOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    int64_t lr = tensorType(lhs).getRank(), rr = tensorType(rhs).getRank();
    // Transposed matrix operands, read in place (see above).
    Value lhsT = lr >= 2 ? matrixTransposeSource(op.getLhs()) : Value();
    Value rhsT = rr >= 2 ? matrixTransposeSource(op.getRhs()) : Value();
    if (lhsT && !(lhsT = rewriter.getRemappedValue(lhsT)))
      return rewriter.notifyMatchFailure(op, "unmapped transpose operand");
    if (rhsT && !(rhsT = rewriter.getRemappedValue(rhsT)))
      return rewriter.notifyMatchFailure(op, "unmapped transpose operand");
    bool transA = static_cast<bool>(lhsT), transB = static_cast<bool>(rhsT);
    Value l = transA ? lhsT : lhs, r = transB ? rhsT : rhs;
    // f16 / bf16 products are summed in f32 and rounded once (as numpy's
    // half matmul and XLA on CPU): an f16 sum of hundreds of terms loses
    // most of its digits.
    auto resultType = cast<RankedTensorType>(op.getType());
    Type element = resultType.getElementType();
    bool lowFloat = element.isF16() || element.isBF16();
    if (lowFloat)
      resultType = resultType.clone(rewriter.getF32Type());
    Value result;
    if (lr == 1 && rr == 1)
      result = contract<linalg::DotOp>(rewriter, loc, lhs, rhs, resultType);
    else if (lr == 2 && rr == 1)
      result = transA ? contract<linalg::VecmatOp>(rewriter, loc, rhs, l,
                                                   resultType)
                      : contract<linalg::MatvecOp>(rewriter, loc, lhs, rhs,
                                                   resultType);
    else if (lr == 1 && rr == 2)
      result = transB ? contract<linalg::MatvecOp>(rewriter, loc, r, lhs,
                                                   resultType)
                      : contract<linalg::VecmatOp>(rewriter, loc, lhs, rhs,
                                                   resultType);
    else if (lr == 2 && rr == 2)
      result = transposedContract<linalg::MatmulOp>(rewriter, loc, l, r,
                                                    resultType, transA, transB);
    else if (lr == 3 && rr == 3)
      result = transposedContract<linalg::BatchMatmulOp>(
          rewriter, loc, l, r, resultType, transA, transB);
    else if (lr == rr && lr > 3) {
      // Fold the batch dimensions into one: [B..., X, Y] -> [B, X, Y] (a
      // transposed operand is collapsed before it is read transposed).
      SmallVector<ReassociationIndices> re;
      re.push_back(llvm::to_vector(llvm::seq<int64_t>(0, lr - 2)));
      re.push_back({lr - 2});
      re.push_back({lr - 1});
      auto collapse = [&](Value v) -> Value {
        return tensor::CollapseShapeOp::create(rewriter, loc, v, re);
      };
      Value cl = collapse(l), cr = collapse(r);
      ArrayRef<int64_t> shape = resultType.getShape();
      int64_t batch = 1;
      for (int64_t d : shape.drop_back(2))
        batch *= d;
      auto flatType = RankedTensorType::get(
          {batch, shape[lr - 2], shape[lr - 1]}, resultType.getElementType());
      Value flat = transposedContract<linalg::BatchMatmulOp>(
          rewriter, loc, cl, cr, flatType, transA, transB);
      result =
          tensor::ExpandShapeOp::create(rewriter, loc, resultType, flat, re);
    } else {
      // The verifier rejects other ranks; nothing has been created yet.
      return rewriter.notifyMatchFailure(op, "unsupported operand ranks");
    }
    if (lowFloat)
      result = buildElementwise(
          rewriter, loc, cast<RankedTensorType>(op.getType()), result,
          [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::TruncFOp::create(nb, nl, element, args[0]);
          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `dlvm.dot_general` as a `dlvm.dot` of rank 1 to 3 (lowered above): each
/// operand is permuted to [batch, free, contracting] or [batch, contracting,
/// free] (whichever needs no transpose; lhs [B, M, K], rhs [B, K, N] when
/// neither does), its groups collapsed to one dimension each, and the second
/// layout read through a transpose of the last two dimensions, which the dot
/// reads in place. Without batch dimensions a side with no free dimension is
/// a vector (matvec, vecmat, inner product). The result is expanded back.
struct DotGeneralLowering : StaticOpLowering<DotGeneralOp> {
  using StaticOpLowering::StaticOpLowering;

  /// `v` (one operand) as the dot's operand: `groups` are its dimension
  /// groups (batch, then the two others in the order the dot reads them);
  /// `vector`: no batch and no free dimension, a rank-1 operand.
  static Value operand(OpBuilder &b, Location loc, Value v,
                       ArrayRef<SmallVector<int64_t>> groups, bool vector) {
    ArrayRef<int64_t> shape = tensorType(v).getShape();
    auto perm = [&](bool swapped) {
      SmallVector<int64_t> p(groups[0]);
      for (int g : swapped ? std::array{2, 1} : std::array{1, 2})
        p.append(groups[g]);
      return p;
    };
    auto identity = [](ArrayRef<int64_t> p) {
      return llvm::equal(p, llvm::seq<int64_t>(0, p.size()));
    };
    bool swapped = !identity(perm(false)) && identity(perm(true));
    SmallVector<int64_t> p = perm(swapped);
    if (!identity(p))
      v = TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(p));
    auto size = [&](ArrayRef<int64_t> dims) {
      int64_t n = 1;
      for (int64_t d : dims)
        n *= shape[d];
      return n;
    };
    SmallVector<int64_t> flat;
    if (!groups[0].empty())
      flat.push_back(size(groups[0]));
    if (vector) {
      flat.push_back(size(groups[1]) * size(groups[2]));
      swapped = false;
    } else if (swapped) {
      flat.append({size(groups[2]), size(groups[1])});
    } else {
      flat.append({size(groups[1]), size(groups[2])});
    }
    if (!llvm::equal(flat, tensorType(v).getShape()))
      v = ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr(flat));
    if (swapped) {
      SmallVector<int64_t> last = llvm::to_vector(llvm::seq<int64_t>(0, flat.size()));
      std::swap(last[last.size() - 2], last.back());
      v = TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(last));
    }
    return v;
  }

  LogicalResult lower(DotGeneralOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto free = [](int64_t rank, ArrayRef<int64_t> batch, ArrayRef<int64_t> contract) {
      SmallVector<int64_t> dims;
      for (int64_t d = 0; d < rank; ++d)
        if (!llvm::is_contained(batch, d) && !llvm::is_contained(contract, d))
          dims.push_back(d);
      return dims;
    };
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    ArrayRef<int64_t> lb = op.getLhsBatchingDims(), rb = op.getRhsBatchingDims();
    ArrayRef<int64_t> lc = op.getLhsContractingDims(), rc = op.getRhsContractingDims();
    SmallVector<int64_t> lf = free(tensorType(lhs).getRank(), lb, lc);
    SmallVector<int64_t> rf = free(tensorType(rhs).getRank(), rb, rc);
    bool batched = !lb.empty();
    SmallVector<int64_t> lcv(lc), rcv(rc), lbv(lb), rbv(rb);
    // lhs reads [B, M, K]; rhs reads [B, K, N]
    Value l = operand(rewriter, loc, lhs, {lbv, lf, lcv}, !batched && lf.empty());
    Value r = operand(rewriter, loc, rhs, {rbv, rcv, rf}, !batched && rf.empty());
    Value dot = DotOp::create(rewriter, loc, l, r);
    auto type = cast<RankedTensorType>(op.getType());
    if (tensorType(dot).getShape() != type.getShape())
      dot = ReshapeOp::create(rewriter, loc, dot,
                              rewriter.getDenseI64ArrayAttr(type.getShape()));
    rewriter.replaceOp(op, dot);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

struct TransposeLowering : StaticOpLowering<TransposeOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(TransposeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    SmallVector<int64_t> perm = op.getPermutation();
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      rewriter.replaceOp(op, adaptor.getOperand());
      return success();
    }
    auto type = cast<RankedTensorType>(op.getType());
    Value init = emptyTensor(rewriter, op.getLoc(), type.getShape(),
                             type.getElementType());
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       adaptor.getOperand(),
                                                       init, perm)
                               ->getResult(0));
    return success();
  }
};

/// A generic that reads the operand at index (size - 1 - i) along reversed
/// dims with tensor.extract (a gather the vectorizer handles), not through an
/// input map `size - 1 - d`: upstream tiling asserts on a negative coefficient
/// in an indexing map, so such a generic could be neither tiled, threaded nor
/// vectorized.
struct ReverseLowering : StaticOpLowering<ReverseOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ReverseOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value operand = adaptor.getOperand();
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, ValueRange{},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < type.getRank(); ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            if (llvm::is_contained(op.getDims(), d)) {
              Value last = arith::ConstantIndexOp::create(
                  b, l, type.getDimSize(d) - 1);
              i = arith::SubIOp::create(b, l, last, i);
            }
            indices.push_back(i);
          }
          return tensor::ExtractOp::create(b, l, operand, indices);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// tensor.insert_slice of each operand into an empty result.
struct ConcatenateLowering : StaticOpLowering<ConcatenateOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ConcatenateOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    if (adaptor.getOperands().size() == 1) {
      rewriter.replaceOp(op, adaptor.getOperands().front());
      return success();
    }
    Value result =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    SmallVector<int64_t> offsets(type.getRank(), 0);
    SmallVector<int64_t> strides(type.getRank(), 1);
    for (Value v : adaptor.getOperands()) {
      ArrayRef<int64_t> sizes = tensorType(v).getShape();
      // Empty operands contribute nothing (and an insertion at the end of the
      // axis would be out of bounds for memref.subview after bufferization).
      if (tensorType(v).getNumElements() == 0)
        continue;
      result = tensor::InsertSliceOp::create(
          rewriter, loc, v, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, sizes), indexAttrs(rewriter, strides));
      offsets[axis] += sizes[axis];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : StaticOpLowering<SliceOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(SliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, tensor::ExtractSliceOp::create(
                rewriter, op.getLoc(), cast<RankedTensorType>(op.getType()),
                adaptor.getOperand(), indexAttrs(rewriter, op.getOffsets()),
                indexAttrs(rewriter, op.getSizes()),
                indexAttrs(rewriter, op.getStrideValues())));
    return success();
  }
};

/// pad: the result filled with the value, then the operand elements that land
/// inside it (a window of the operand) inserted with stride interior + 1.
struct PadLowering : StaticOpLowering<PadOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(PadOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    Value value = tensor::ExtractOp::create(rewriter, loc, adaptor.getValue(), ValueRange{});
    Value result = linalg::FillOp::create(
                       rewriter, loc, value,
                       emptyTensor(rewriter, loc, type.getShape(), type.getElementType()))
                       .getResult(0);
    SmallVector<int64_t> first, count, at, step;
    for (int64_t d = 0; d < rank; ++d) {
      PadOp::Kept k = op.kept(d);
      first.push_back(k.first);
      count.push_back(k.count);
      at.push_back(k.at);
      step.push_back(op.getInterior()[d] + 1);
    }
    if (llvm::any_of(count, [](int64_t c) { return c == 0; })) {
      rewriter.replaceOp(op, result);
      return success();
    }
    auto windowType = RankedTensorType::get(count, type.getElementType());
    SmallVector<int64_t> ones(rank, 1);
    Value window = tensor::ExtractSliceOp::create(
        rewriter, loc, windowType, adaptor.getOperand(), indexAttrs(rewriter, first),
        indexAttrs(rewriter, count), indexAttrs(rewriter, ones));
    rewriter.replaceOp(op, tensor::InsertSliceOp::create(
                               rewriter, loc, window, result, indexAttrs(rewriter, at),
                               indexAttrs(rewriter, count), indexAttrs(rewriter, step)));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// dynamic_slice, dynamic_update_slice, iota, argmax, argmin
//===----------------------------------------------------------------------===//

/// The start offsets of a window of `sizes` at run-time indices (rank-0
/// integer tensors), clamped as XLA does: clamp(index, 0, dim - size).
SmallVector<OpFoldResult> clampedStarts(OpBuilder &b, Location loc, ValueRange indices,
                                        ArrayRef<int64_t> shape, ArrayRef<int64_t> sizes) {
  SmallVector<OpFoldResult> starts;
  for (auto [d, index] : llvm::enumerate(indices)) {
    Value scalar = tensor::ExtractOp::create(b, loc, index, ValueRange{});
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), scalar);
    Value high = indexConst(b, loc, shape[d] - sizes[d]);
    Value low = indexConst(b, loc, 0);
    i = arith::MinSIOp::create(b, loc, i, high);
    starts.push_back(arith::MaxSIOp::create(b, loc, i, low).getResult());
  }
  return starts;
}

struct DynamicSliceLowering : StaticOpLowering<DynamicSliceOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(DynamicSliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType t = tensorType(adaptor.getOperand());
    ArrayRef<int64_t> sizes = op.getSizes();
    SmallVector<OpFoldResult> starts =
        clampedStarts(rewriter, loc, adaptor.getStartIndices(), t.getShape(), sizes);
    SmallVector<int64_t> ones(sizes.size(), 1);
    rewriter.replaceOp(op, tensor::ExtractSliceOp::create(
                               rewriter, loc, cast<RankedTensorType>(op.getType()),
                               adaptor.getOperand(), starts, indexAttrs(rewriter, sizes),
                               indexAttrs(rewriter, ones)));
    return success();
  }
};

struct DynamicUpdateSliceLowering : StaticOpLowering<DynamicUpdateSliceOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(DynamicUpdateSliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType t = tensorType(adaptor.getOperand());
    ArrayRef<int64_t> sizes = tensorType(adaptor.getUpdate()).getShape();
    SmallVector<OpFoldResult> starts =
        clampedStarts(rewriter, loc, adaptor.getStartIndices(), t.getShape(), sizes);
    SmallVector<int64_t> ones(sizes.size(), 1);
    rewriter.replaceOp(op, tensor::InsertSliceOp::create(
                               rewriter, loc, adaptor.getUpdate(), adaptor.getOperand(),
                               starts, indexAttrs(rewriter, sizes),
                               indexAttrs(rewriter, ones)));
    return success();
  }
};

/// linalg.index of the dimension, converted to the element type.
struct IotaLowering : StaticOpLowering<IotaOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(IotaOp op, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t dim = op.getDim();
    MLIRContext *ctx = rewriter.getContext();
    Value empty = emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{empty},
        SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(type.getRank(), ctx)},
        parallelIterators(type.getRank()),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = linalg::IndexOp::create(b, l, dim);
          Value wide = arith::IndexCastOp::create(b, l, b.getI64Type(), i);
          linalg::YieldOp::create(b, l, convertScalar(b, l, wide, type.getElementType()));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// The clamped window starts of one gather/scatter batch position: element k
/// of the start vector (read from `indices` at `batch` with k at
/// `indexVectorDim`) starts operand dimension `toOperand[k]`, clamped to
/// [0, dim - windowSize]; the other dimensions start at 0.
SmallVector<Value> gatherStarts(OpBuilder &b, Location loc, Value indices, ValueRange batch,
                                int64_t indexVectorDim, ArrayRef<int64_t> toOperand,
                                ArrayRef<int64_t> operandShape, ArrayRef<int64_t> windowSizes) {
  SmallVector<Value> starts(operandShape.size(), indexConst(b, loc, 0));
  int64_t indicesRank = tensorType(indices).getRank();
  for (auto [k, d] : llvm::enumerate(toOperand)) {
    SmallVector<Value> at(batch.begin(), batch.end());
    if (indexVectorDim < indicesRank)
      at.insert(at.begin() + indexVectorDim, indexConst(b, loc, k));
    Value raw = tensor::ExtractOp::create(b, loc, indices, at);
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
    i = arith::MinSIOp::create(b, loc, i, indexConst(b, loc, operandShape[d] - windowSizes[d]));
    starts[d] = arith::MaxSIOp::create(b, loc, i, indexConst(b, loc, 0));
  }
  return starts;
}

/// A linalg.generic over the result: each element reads the operand at its
/// window start (read from the indices in the body) plus its window offset.
struct GatherLowering : StaticOpLowering<GatherOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(GatherOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto out = cast<RankedTensorType>(op.getType());
    Value operand = adaptor.getOperand(), indices = adaptor.getIndices();
    ArrayRef<int64_t> shape = tensorType(operand).getShape();
    ArrayRef<int64_t> offsetDims = op.getOffsetDims(), collapsed = op.getCollapsedSliceDims();
    MLIRContext *ctx = rewriter.getContext();
    Value empty = emptyTensor(rewriter, loc, out.getShape(), out.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{out}, ValueRange{}, ValueRange{empty},
        SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(out.getRank(), ctx)},
        parallelIterators(out.getRank()), [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> batch, window;
          for (int64_t i = 0; i < out.getRank(); ++i)
            (llvm::is_contained(offsetDims, i) ? window : batch)
                .push_back(linalg::IndexOp::create(b, l, i));
          SmallVector<Value> at = gatherStarts(b, l, indices, batch, op.getIndexVectorDim(),
                                               op.getStartIndexMap(), shape, op.getSliceSizes());
          auto next = window.begin();
          for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
            if (!llvm::is_contained(collapsed, d))
              at[d] = arith::AddIOp::create(b, l, at[d], *next++);
          linalg::YieldOp::create(b, l, ValueRange{tensor::ExtractOp::create(b, l, operand, at)});
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// A loop nest over the updates (in row-major order, so a later update of
/// the same element is applied after an earlier one) combining each into the
/// operand element it reaches: tensor.extract / tensor.insert on a carried
/// tensor, which bufferizes in place.
struct ScatterLowering : StaticOpLowering<ScatterOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ScatterOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    ArrayRef<int64_t> shape = tensorType(operand).getShape();
    RankedTensorType updatesType = tensorType(updates);
    ArrayRef<int64_t> windowDims = op.getUpdateWindowDims(), inserted = op.getInsertedWindowDims();
    // the window's size along each operand dimension (1 for the inserted ones)
    SmallVector<int64_t> windowSizes(shape.size(), 1);
    auto nextWindow = windowDims.begin();
    for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
      if (!llvm::is_contained(inserted, d))
        windowSizes[d] = updatesType.getDimSize(*nextWindow++);
    ScatterKind kind = op.getKind();
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t n : updatesType.getShape()) {
      lbs.push_back(indexConst(rewriter, loc, 0));
      ubs.push_back(indexConst(rewriter, loc, n));
      steps.push_back(indexConst(rewriter, loc, 1));
    }
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps, ValueRange{operand},
        [&](OpBuilder &b, Location l, ValueRange ivs, ValueRange carried) -> scf::ValueVector {
          SmallVector<Value> batch, window;
          for (int64_t i = 0; i < updatesType.getRank(); ++i)
            (llvm::is_contained(windowDims, i) ? window : batch).push_back(ivs[i]);
          SmallVector<Value> at =
              gatherStarts(b, l, indices, batch, op.getIndexVectorDim(),
                           op.getScatterDimsToOperandDims(), shape, windowSizes);
          auto next = window.begin();
          for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
            if (!llvm::is_contained(inserted, d))
              at[d] = arith::AddIOp::create(b, l, at[d], *next++);
          Value update = tensor::ExtractOp::create(b, l, updates, ivs);
          Value value = update;
          if (kind != ScatterKind::replace) {
            Value current = tensor::ExtractOp::create(b, l, carried[0], at);
            ReductionKind combinator = kind == ScatterKind::add ? ReductionKind::add
                                       : kind == ScatterKind::max ? ReductionKind::max
                                                                  : ReductionKind::min;
            value = combine(b, l, combinator, current, update);
          }
          return {tensor::InsertOp::create(b, l, value, carried[0], at)};
        });
    rewriter.replaceOp(op, nest.results.empty() ? operand : nest.results[0]);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// sort, top_k
//===----------------------------------------------------------------------===//

/// Whether key `a` goes strictly before key `b`: ascending puts NaN last,
/// descending puts it first; i1 is false < true.
Value sortsBefore(OpBuilder &b, Location l, Value a, Value c, bool descending) {
  if (isFloat(a)) {
    auto p = descending ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
    Value ordered = arith::CmpFOp::create(b, l, p, a, c);
    Value nan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, descending ? a : c,
                                      descending ? a : c);
    Value number = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ORD, descending ? c : a,
                                         descending ? c : a);
    return arith::OrIOp::create(b, l, ordered, arith::AndIOp::create(b, l, nan, number));
  }
  bool u = isBool(a);
  auto p = descending ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                      : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
  return arith::CmpIOp::create(b, l, p, a, c);
}

/// The stable sorting permutation of each row of `keys` ([rows, n]): a
/// tensor<rows x n x index> whose row r lists the positions of row r's keys
/// in sorted order. A bottom-up merge sort: pass p merges runs of 2^p
/// positions into a new tensor; a merge step takes the right run's head only
/// when it sorts strictly before the left's (stability), branch-free.
Value sortedPositions(OpBuilder &b, Location loc, Value keys, bool descending) {
  RankedTensorType keyType = tensorType(keys);
  int64_t rows = keyType.getDimSize(0), n = keyType.getDimSize(1);
  Type index = b.getIndexType();
  auto permType = RankedTensorType::get({rows, n}, index);
  MLIRContext *ctx = b.getContext();
  auto identity = linalg::GenericOp::create(
      b, loc, TypeRange{permType}, ValueRange{}, ValueRange{emptyTensor(b, loc, {rows, n}, index)},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(2, ctx)}, parallelIterators(2),
      [&](OpBuilder &nb, Location l, ValueRange) {
        linalg::YieldOp::create(nb, l, ValueRange{linalg::IndexOp::create(nb, l, 1)});
      });
  Value perm = identity.getResult(0);
  int64_t passes = llvm::Log2_64_Ceil(static_cast<uint64_t>(n));
  if (n <= 1)
    return perm;
  Value c0 = indexConst(b, loc, 0), c1 = indexConst(b, loc, 1);
  Value cn = indexConst(b, loc, n), last = indexConst(b, loc, n - 1);
  auto minIndex = [](OpBuilder &nb, Location l, Value x, Value y) -> Value {
    return arith::MinSIOp::create(nb, l, x, y);
  };
  auto sorted = scf::ForOp::create(
      b, loc, c0, indexConst(b, loc, passes), c1, ValueRange{perm},
      [&](OpBuilder &b1, Location l, Value pass, ValueRange src) {
        Value width = arith::ShLIOp::create(b1, l, c1, pass);
        Value step = arith::ShLIOp::create(b1, l, width, c1);
        Value dst = emptyTensor(b1, l, {rows, n}, index);
        auto rowLoop = scf::ForOp::create(
            b1, l, c0, indexConst(b1, l, rows), c1, ValueRange{dst},
            [&](OpBuilder &b2, Location l2, Value row, ValueRange rowDst) {
              auto runLoop = scf::ForOp::create(
                  b2, l2, c0, cn, step, ValueRange{rowDst[0]},
                  [&](OpBuilder &b3, Location l3, Value lo, ValueRange runDst) {
                    Value mid = minIndex(b3, l3, arith::AddIOp::create(b3, l3, lo, width), cn);
                    Value hi = minIndex(b3, l3, arith::AddIOp::create(b3, l3, lo, step), cn);
                    auto merge = scf::ForOp::create(
                        b3, l3, lo, hi, c1, ValueRange{lo, mid, runDst[0]},
                        [&](OpBuilder &b4, Location l4, Value out, ValueRange st) {
                          Value i = st[0], j = st[1];
                          Value pi = tensor::ExtractOp::create(
                              b4, l4, src[0], ValueRange{row, minIndex(b4, l4, i, last)});
                          Value pj = tensor::ExtractOp::create(
                              b4, l4, src[0], ValueRange{row, minIndex(b4, l4, j, last)});
                          Value ki = tensor::ExtractOp::create(b4, l4, keys, ValueRange{row, pi});
                          Value kj = tensor::ExtractOp::create(b4, l4, keys, ValueRange{row, pj});
                          Value leftDone = arith::CmpIOp::create(b4, l4, arith::CmpIPredicate::sge, i, mid);
                          Value rightLeft = arith::CmpIOp::create(b4, l4, arith::CmpIPredicate::slt, j, hi);
                          Value right = arith::OrIOp::create(
                              b4, l4, leftDone,
                              arith::AndIOp::create(b4, l4, rightLeft, sortsBefore(b4, l4, kj, ki, descending)));
                          Value taken = arith::SelectOp::create(b4, l4, right, pj, pi);
                          Value written = tensor::InsertOp::create(b4, l4, taken, st[2], ValueRange{row, out});
                          Value i1 = arith::AddIOp::create(b4, l4, i, c1);
                          Value j1 = arith::AddIOp::create(b4, l4, j, c1);
                          scf::YieldOp::create(b4, l4, ValueRange{arith::SelectOp::create(b4, l4, right, i, i1),
                                                                  arith::SelectOp::create(b4, l4, right, j1, j),
                                                                  written});
                        });
                    scf::YieldOp::create(b3, l3, merge.getResult(2));
                  });
              scf::YieldOp::create(b2, l2, runLoop.getResult(0));
            });
        scf::YieldOp::create(b1, l, rowLoop.getResult(0));
      });
  return sorted.getResult(0);
}

/// `x` ([rows, n]) read at `positions` ([rows, m], index): x[r, positions[r, i]],
/// or the positions themselves cast to `castTo` when `x` is null.
Value readAtPositions(OpBuilder &b, Location loc, Value x, Value positions, Type castTo = {}) {
  RankedTensorType pt = tensorType(positions);
  Type element = x ? tensorType(x).getElementType() : castTo;
  auto type = RankedTensorType::get(pt.getShape(), element);
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{positions},
             ValueRange{emptyTensor(b, loc, pt.getShape(), element)}, SmallVector<AffineMap>{id, id},
             parallelIterators(2),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value v = x ? Value(tensor::ExtractOp::create(
                                 nb, l, x, ValueRange{linalg::IndexOp::create(nb, l, 0), a[0]}))
                           : Value(arith::IndexCastOp::create(nb, l, castTo, a[0]));
               linalg::YieldOp::create(nb, l, ValueRange{v});
             })
      .getResult(0);
}

/// Moves dimension `dim` of tensors of `shape` last and collapses the others
/// into rows ([rows, n]), and back (dlvm ops, lowered by their patterns).
struct RowsAlong {
  SmallVector<int64_t> perm, inverse, moved;
  int64_t rows = 1, n;

  RowsAlong(ArrayRef<int64_t> shape, int64_t dim) : n(shape[dim]) {
    for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
      if (d != dim) {
        perm.push_back(d);
        rows *= shape[d];
      }
    perm.push_back(dim);
    inverse.resize(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    moved = llvm::map_to_vector(perm, [&](int64_t d) { return shape[d]; });
  }

  static bool isIdentity(ArrayRef<int64_t> p) {
    return llvm::equal(p, llvm::seq<int64_t>(0, p.size()));
  }

  Value to(OpBuilder &b, Location loc, Value v) const {
    if (!isIdentity(perm))
      v = TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(perm));
    return ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr({rows, n}));
  }

  /// `v` ([rows, m]) back to the operand layout, with `m` along `dim`.
  Value from(OpBuilder &b, Location loc, Value v, int64_t m) const {
    SmallVector<int64_t> shape(moved);
    shape.back() = m;
    v = ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr(shape));
    if (!isIdentity(inverse))
      v = TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(inverse));
    return v;
  }
};

/// dlvm.sort: the sorting permutation of the keys' rows, then every operand
/// read through it.
struct SortLowering : StaticOpLowering<SortOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(SortOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange operands = adaptor.getOperands();
    RowsAlong rows(tensorType(operands[0]).getShape(), op.getDim());
    Value perm = sortedPositions(rewriter, loc, rows.to(rewriter, loc, operands[0]), op.getDescending());
    SmallVector<Value> results;
    for (Value v : operands)
      results.push_back(rows.from(rewriter, loc,
                                  readAtPositions(rewriter, loc, rows.to(rewriter, loc, v), perm), rows.n));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// dlvm.top_k: the first k positions of a stable descending sort.
struct TopKLowering : StaticOpLowering<TopKOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(TopKOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    ArrayRef<int64_t> shape = tensorType(x).getShape();
    RowsAlong rows(shape, shape.size() - 1);
    int64_t k = op.getK();
    Value xr = rows.to(rewriter, loc, x);
    Value perm = sortedPositions(rewriter, loc, xr, /*descending=*/true);
    Value first = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get({rows.rows, k}, rewriter.getIndexType()), perm,
        ValueRange{}, ValueRange{}, ValueRange{}, rewriter.getDenseI64ArrayAttr({0, 0}),
        rewriter.getDenseI64ArrayAttr({rows.rows, k}), rewriter.getDenseI64ArrayAttr({1, 1}));
    Type i32 = tensorType(op.getIndices()).getElementType();
    rewriter.replaceOp(op, {rows.from(rewriter, loc, readAtPositions(rewriter, loc, xr, first), k),
                            rows.from(rewriter, loc, readAtPositions(rewriter, loc, Value(), first, i32), k)});
    return success();
  }
};

/// A reduction carrying (best value, its index): a candidate replaces the
/// best when it is strictly larger (smaller), or a NaN facing a number, so
/// ties keep the first position and the first NaN wins. i1 compares as a
/// boolean (false < true).
template <typename OpT, bool IsMax>
struct ArgExtremumLowering : StaticOpLowering<OpT> {
  using StaticOpLowering<OpT>::StaticOpLowering;

  LogicalResult lower(OpT op, typename OpT::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    RankedTensorType in = tensorType(x);
    auto out = cast<RankedTensorType>(op.getType());
    Type element = in.getElementType();
    int64_t axis = op.getAxis(), rank = in.getRank();
    MLIRContext *ctx = rewriter.getContext();
    // the worst value: -inf / +inf, MIN / MAX, false / true
    Value worst;
    if (auto f = dyn_cast<FloatType>(element)) {
      worst = arith::ConstantOp::create(
          rewriter, loc, FloatAttr::get(f, APFloat::getInf(f.getFloatSemantics(), IsMax)));
    } else {
      unsigned w = element.getIntOrFloatBitWidth();
      APInt v = w == 1 ? APInt(1, IsMax ? 0 : 1)
                       : (IsMax ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w));
      worst = arith::ConstantOp::create(rewriter, loc, IntegerAttr::get(element, v));
    }
    auto bestType = RankedTensorType::get(out.getShape(), element);
    Value best = filledTensor(rewriter, loc, bestType, worst);
    Value where = zeroTensor(rewriter, loc, out);
    SmallVector<AffineExpr> kept;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        kept.push_back(getAffineDimExpr(d, ctx));
    AffineMap inMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap outMap = AffineMap::get(rank, 0, kept, ctx);
    SmallVector<utils::IteratorType> iterators = parallelIterators(rank);
    iterators[axis] = utils::IteratorType::reduction;
    Type indexType = out.getElementType();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{bestType, out}, ValueRange{x}, ValueRange{best, where},
        SmallVector<AffineMap>{inMap, outMap, outMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value v = a[0], current = a[1], position = a[2];
          Value better;
          if (isFloat(v)) {
            auto p = IsMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
            Value beats = arith::CmpFOp::create(b, l, p, v, current);
            Value vNaN = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, v, v);
            Value cNum = arith::CmpFOp::create(b, l, arith::CmpFPredicate::ORD, current, current);
            better = arith::OrIOp::create(b, l, beats, arith::AndIOp::create(b, l, vNaN, cNum));
          } else {
            bool u = isBool(v);
            auto p = IsMax ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                           : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt);
            better = arith::CmpIOp::create(b, l, p, v, current);
          }
          Value i = linalg::IndexOp::create(b, l, axis);
          Value index = arith::IndexCastOp::create(b, l, indexType, i);
          linalg::YieldOp::create(b, l, ValueRange{arith::SelectOp::create(b, l, better, v, current),
                                                   arith::SelectOp::create(b, l, better, index, position)});
        });
    rewriter.replaceOp(op, generic.getResult(1));
    return success();
  }
};

/// reshape, pad_shape and squeeze_shape: row-major reinterpretation through
/// tensor.collapse_shape / tensor.expand_shape.
template <typename OpT>
struct ReshapeLikeLowering : StaticOpLowering<OpT> {
  using StaticOpLowering<OpT>::StaticOpLowering;

  LogicalResult lower(OpT op, typename OpT::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       reshapeTo(rewriter, op.getLoc(), adaptor.getOperand(),
                                 cast<RankedTensorType>(op.getType())));
    return success();
  }
};

/// Collapses away the broadcast unit dimensions, then linalg.broadcast adds
/// them back at the target sizes.
struct BroadcastToLowering : StaticOpLowering<BroadcastToOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(BroadcastToOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getOperand();
    RankedTensorType inType = tensorType(input);
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (inType.getRank() == 0 ||
          (inType.getDimSize(d) == 1 && type.getDimSize(d) != 1))
        dims.push_back(d);
    if (dims.empty()) {
      rewriter.replaceOp(op, input);
      return success();
    }
    if (inType.getRank() != 0) {
      SmallVector<int64_t> kept;
      for (int64_t d = 0; d < inType.getRank(); ++d)
        if (!llvm::is_contained(dims, d))
          kept.push_back(inType.getDimSize(d));
      input = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get(kept, inType.getElementType()),
          input, dropUnitDimsReassociation(inType.getRank(), dims));
    }
    Value init =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    rewriter.replaceOp(
        op, linalg::BroadcastOp::create(rewriter, loc, input, init, dims)
                ->getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Constants, random
//===----------------------------------------------------------------------===//

/// Splats become linalg.fill (no global buffer; fusable), other literals
/// arith.constant.
struct ConstantLowering : StaticOpLowering<ConstantOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ConstantOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
        dense && dense.isSplat() && type.getRank() > 0) {
      Value scalar = arith::ConstantOp::create(
          rewriter, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
      rewriter.replaceOp(op, filledTensor(rewriter, loc, type, scalar));
      return success();
    }
    rewriter.replaceOp(op, arith::ConstantOp::create(
                               rewriter, loc, type,
                               cast<TypedAttr>(op.getValue())));
    return success();
  }
};

/// SplitMix64's output function (Steele, Lea, Flood 2014).
uint64_t splitMix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Counter-based uniform random numbers. Element i (row-major linear index)
/// is the (i + 1)-th output of a SplitMix64 stream whose state starts at
/// mix(seed + golden): a pure function of (seed, i), so the op is
/// deterministic and every element is computed independently. The top 53
/// (f64) or 24 (other floats, computed in f32) bits give u in [0, 1); the
/// value is low*(1 - u) + high*u (no overflow even for huge ranges), rounded
/// to the element type and clamped to [low, high) so rounding can never
/// produce `high`.
struct RandomLowering : StaticOpLowering<RandomOp> {
  using StaticOpLowering::StaticOpLowering;

  static APFloat convert(double v, Type t) {
    APFloat f(v);
    bool lost;
    f.convert(cast<FloatType>(t).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    return f;
  }

  LogicalResult lower(RandomOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Type elt = type.getElementType();
    double low = op.getLow().convertToDouble();
    double high = op.getHigh().convertToDouble();
    uint64_t key = splitMix64(static_cast<uint64_t>(op.getSeed()) +
                              0x9E3779B97F4A7C15ULL);
    // Bounds of the result in the element type.
    APFloat lowT = convert(low, elt), highT = convert(high, elt);
    APFloat below = highT;
    below.next(/*nextDown=*/true);
    if (below.compare(lowT) == APFloat::cmpLessThan)
      below = lowT;

    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> strides(shape.size(), 1);
    for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];

    auto body = [&](OpBuilder &b, Location l, ValueRange) -> Value {
      Type i64 = b.getI64Type();
      Value linear = indexConst(b, l, 0);
      for (auto [d, stride] : llvm::enumerate(strides)) {
        Value idx = linalg::IndexOp::create(b, l, d);
        linear = arith::AddIOp::create(
            b, l, linear,
            arith::MulIOp::create(b, l, idx, indexConst(b, l, stride)));
      }
      Value i = arith::IndexCastOp::create(b, l, i64, linear);
      // (Operands are created in separate statements so that the IR order
      // does not depend on the C++ compiler's argument evaluation order.)
      auto c = [&](uint64_t v) { return intConst(b, l, i64, (int64_t)v); };
      auto mulConst = [&](Value v, uint64_t k) -> Value {
        Value kv = c(k);
        return arith::MulIOp::create(b, l, v, kv);
      };
      auto xorShift = [&](Value v, uint64_t s) -> Value {
        Value sv = c(s);
        Value shifted = arith::ShRUIOp::create(b, l, v, sv);
        return arith::XOrIOp::create(b, l, v, shifted);
      };
      // z = key + (i + 1) * golden, then the SplitMix64 output function.
      Value one = c(1);
      Value counter = arith::AddIOp::create(b, l, i, one);
      Value keyV = c(key);
      Value z = arith::AddIOp::create(
          b, l, keyV, mulConst(counter, 0x9E3779B97F4A7C15ULL));
      z = mulConst(xorShift(z, 30), 0xBF58476D1CE4E5B9ULL);
      z = mulConst(xorShift(z, 27), 0x94D049BB133111EBULL);
      z = xorShift(z, 31);
      bool f64 = elt.isF64();
      FloatMath m{b, l, f64 ? elt : b.getF32Type()};
      unsigned bits = f64 ? 53 : 24;
      Value shift = c(64 - bits);
      Value top = arith::ShRUIOp::create(b, l, z, shift);
      Value topF = arith::UIToFPOp::create(b, l, m.type, top);
      Value u = m.mul(topF, m.c(std::ldexp(1.0, -(int)bits)));
      // low*(1 - u) + high*u
      Value oneMinusU = m.sub(m.c(1.0), u);
      Value lowPart = m.mul(m.c(low), oneMinusU);
      Value highPart = m.mul(m.c(high), u);
      Value v = m.add(lowPart, highPart);
      v = convertScalar(b, l, v, elt);
      Value lowV = arith::ConstantOp::create(b, l, b.getFloatAttr(elt, lowT));
      Value highV = arith::ConstantOp::create(b, l, b.getFloatAttr(elt, highT));
      Value belowV =
          arith::ConstantOp::create(b, l, b.getFloatAttr(elt, below));
      v = arith::MaximumFOp::create(b, l, v, lowV);
      Value tooHigh =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, v, highV);
      return arith::SelectOp::create(b, l, tooHigh, belowV, v);
    };
    rewriter.replaceOp(
        op, buildElementwise(rewriter, loc, type, ValueRange{}, body));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// linalg.reduce of `input` along `dims` into `resultType`, starting from the
/// scalar `init`.
Value buildReduce(OpBuilder &b, Location loc, ReductionKind kind, Value input,
                  ArrayRef<int64_t> dims, RankedTensorType resultType,
                  Value init) {
  Value acc = filledTensor(b, loc, resultType, init);
  SmallVector<int64_t> sorted(dims);
  llvm::sort(sorted);
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{input}, ValueRange{acc}, sorted,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc,
                                combine(nb, nloc, kind, args[0], args[1]));
      });
  return reduce.getResult(0);
}

/// linalg.reduce starting from the combinator's identity or from `init`.
/// mean = sum / count (+ init when given).
struct ReduceLowering : StaticOpLowering<ReduceOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ReduceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ReductionKind kind = op.getKind();
    Value input = adaptor.getOperand(), init = adaptor.getInit();
    RankedTensorType inType = tensorType(input);
    auto type = cast<RankedTensorType>(op.getType());
    Type elt = type.getElementType();
    TypedAttr identity = identityAttr(rewriter, kind, elt);
    if (!identity)
      return rewriter.notifyMatchFailure(op, "combinator invalid for the type");
    bool mean = kind == ReductionKind::mean;
    ArrayRef<int64_t> dims = op.getDims();

    if (dims.empty()) {
      // Nothing is reduced: combine(x, init) elementwise (the mean of one
      // element is the element).
      if (!init) {
        rewriter.replaceOp(op, input);
        return success();
      }
      rewriter.replaceOp(
          op, buildElementwise(rewriter, loc, type, ValueRange{input, init},
                               [&](OpBuilder &b, Location l, ValueRange a) {
                                 return combine(b, l, kind, a[0], a[1]);
                               }));
      return success();
    }

    Value start =
        init && !mean
            ? Value(tensor::ExtractOp::create(rewriter, loc, init, ValueRange{}))
            : Value(arith::ConstantOp::create(rewriter, loc, identity));
    Value result = buildReduce(rewriter, loc, kind, input, dims, type, start);
    if (mean) {
      int64_t count = 1;
      for (int64_t d : dims)
        count *= inType.getDimSize(d);
      SmallVector<Value> ins = {result};
      if (init)
        ins.push_back(init);
      result = buildElementwise(
          rewriter, loc, type, ins,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value r = arith::DivFOp::create(
                b, l, a[0], floatConst(b, l, elt, (double)count));
            return a.size() > 1 ? Value(arith::AddFOp::create(b, l, r, a[1]))
                                : r;
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Scan: an scf.for over the scanned dimension (backwards when `reverse`)
/// carrying the running value (a unit-thick slice) and the result; each step
/// combines the next input slice into the running value in place and inserts
/// it (exclusive: inserts the running value before combining, after a first
/// slice of the combinator's identity).
struct ScanLowering : StaticOpLowering<ScanOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ScanOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getOperand();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t dim = op.getDim(), rank = type.getRank();
    int64_t n = type.getDimSize(dim);
    ReductionKind kind = op.getKind();
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    if (type.getNumElements() == 0 || (n == 1 && !exclusive)) {
      rewriter.replaceOp(op, input);
      return success();
    }
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[dim] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    SmallVector<OpFoldResult> sizes = indexAttrs(rewriter, sliceShape);
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    auto offsetsAt = [&](OpFoldResult pos) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[dim] = pos;
      return offsets;
    };
    // step i of the scan reads and writes position n - 1 - i when reversed
    OpFoldResult start = rewriter.getIndexAttr(reverse ? n - 1 : 0);
    auto position = [&](OpBuilder &b, Location l, Value i) -> OpFoldResult {
      if (!reverse)
        return i;
      return arith::SubIOp::create(b, l, indexConst(b, l, n - 1), i).getResult();
    };

    Value first = tensor::ExtractSliceOp::create(
        rewriter, loc, sliceType, input, offsetsAt(start), sizes, strides);
    Value result =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    Value head = first;
    if (exclusive) {
      TypedAttr identity = identityAttr(rewriter, kind, type.getElementType());
      if (!identity)
        return rewriter.notifyMatchFailure(op, "combinator invalid for the type");
      Value value = arith::ConstantOp::create(rewriter, loc, identity);
      Value empty = emptyTensor(rewriter, loc, sliceShape, type.getElementType());
      head = linalg::FillOp::create(rewriter, loc, value, empty).getResult(0);
    }
    result = tensor::InsertSliceOp::create(rewriter, loc, head, result,
                                           offsetsAt(start), sizes, strides);
    if (n == 1) {
      rewriter.replaceOp(op, result);
      return success();
    }
    // The running value is updated in place: give it its own buffer rather
    // than a view of the input.
    Value running = buildElementwise(
        rewriter, loc, sliceType, first,
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });

    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
    auto loop = scf::ForOp::create(
        rewriter, loc, indexConst(rewriter, loc, 1),
        indexConst(rewriter, loc, n), indexConst(rewriter, loc, 1),
        ValueRange{running, result},
        [&](OpBuilder &b, Location l, Value iv, ValueRange iterArgs) {
          OpFoldResult at = position(b, l, iv);
          Value res = iterArgs[1];
          if (exclusive)
            res = tensor::InsertSliceOp::create(b, l, iterArgs[0], res,
                                                offsetsAt(at), sizes, strides);
          Value next = tensor::ExtractSliceOp::create(
              b, l, sliceType, input, offsetsAt(at), sizes, strides);
          Value acc =
              linalg::GenericOp::create(
                  b, l, TypeRange{sliceType}, ValueRange{next},
                  ValueRange{iterArgs[0]}, ArrayRef<AffineMap>{id, id},
                  parallelIterators(rank),
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    linalg::YieldOp::create(
                        nb, nl, combine(nb, nl, kind, args[1], args[0]));
                  })
                  .getResult(0);
          if (!exclusive)
            res = tensor::InsertSliceOp::create(b, l, acc, res, offsetsAt(at),
                                                sizes, strides);
          scf::YieldOp::create(b, l, ValueRange{acc, res});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

/// Pads with the combinator's identity (a fill, the operand inserted with
/// stride base_dilation at the low padding), then a linalg.generic over
/// (output dims, window dims) reads input[o*s + w*window_dilation]; a
/// window-shaped tensor.empty operand gives the window loops their bounds (as
/// linalg's pooling ops do). mean divides the sum by the number of operand
/// elements in each window, a product of per-dimension counts (constants).
struct ReduceWindowLowering : StaticOpLowering<ReduceWindowOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ReduceWindowOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ReductionKind kind = op.getKind();
    Value input = adaptor.getOperand();
    RankedTensorType inType = tensorType(input);
    auto type = cast<RankedTensorType>(op.getType());
    Type elt = type.getElementType();
    TypedAttr identity = identityAttr(rewriter, kind, elt);
    if (!identity)
      return rewriter.notifyMatchFailure(op, "combinator invalid for the type");
    int64_t rank = type.getRank();
    SmallVector<int64_t> window(op.getWindow()), strides(op.getStrides());
    SmallVector<int64_t> wd = op.getWindowDilationValues(), bd = op.getBaseDilationValues();
    SmallVector<int64_t> in(inType.getShape()), out(type.getShape());
    SmallVector<int64_t> low = op.getLowPadding(), dilated, padded;
    for (int64_t d = 0; d < rank; ++d) {
      dilated.push_back(in[d] > 0 ? (in[d] - 1) * bd[d] + 1 : 0);
      int64_t reach = (out[d] - 1) * strides[d] + (window[d] - 1) * wd[d] + 1;
      padded.push_back(std::max(low[d] + dilated[d], reach));
    }

    Value ident = arith::ConstantOp::create(rewriter, loc, identity);
    if (padded != in) {
      auto paddedType = RankedTensorType::get(padded, elt);
      bool dilatedBase = llvm::any_of(bd, [](int64_t b) { return b != 1; });
      SmallVector<int64_t> high;
      for (int64_t d = 0; d < rank; ++d)
        high.push_back(padded[d] - low[d] - dilated[d]);
      if (inType.getNumElements() == 0) // windows over an empty input see padding only
        input = filledTensor(rewriter, loc, paddedType, ident);
      else if (!dilatedBase)
        input = tensor::PadOp::create(rewriter, loc, paddedType, input, indexAttrs(rewriter, low),
                                      indexAttrs(rewriter, high), ident);
      else
        input = tensor::InsertSliceOp::create(
            rewriter, loc, input, filledTensor(rewriter, loc, paddedType, ident),
            indexAttrs(rewriter, low), indexAttrs(rewriter, in), indexAttrs(rewriter, bd));
    }

    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> inExprs, winExprs, outExprs;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr o = getAffineDimExpr(d, ctx);
      AffineExpr w = getAffineDimExpr(rank + d, ctx);
      inExprs.push_back(o * strides[d] + w * wd[d]);
      winExprs.push_back(w);
      outExprs.push_back(o);
    }
    SmallVector<AffineMap> maps = {AffineMap::get(2 * rank, 0, inExprs, ctx),
                                   AffineMap::get(2 * rank, 0, winExprs, ctx),
                                   AffineMap::get(2 * rank, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators = parallelIterators(rank);
    iterators.append(rank, utils::IteratorType::reduction);
    Value windowShape = emptyTensor(rewriter, loc, window, elt);
    Value acc = filledTensor(rewriter, loc, type, ident);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{input, windowShape},
            ValueRange{acc}, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l,
                                      combine(b, l, kind, args[2], args[0]));
            })
            .getResult(0);

    if (kind == ReductionKind::mean && type.getNumElements() > 0) {
      // counts[d][o]: the operand elements that window o reads along d
      SmallVector<Value> inputs{result};
      SmallVector<AffineMap> countMaps{AffineMap::getMultiDimIdentityMap(rank, ctx)};
      for (int64_t d = 0; d < rank; ++d) {
        SmallVector<double> counts;
        for (int64_t o = 0; o < out[d]; ++o) {
          int64_t c = 0;
          for (int64_t k = 0; k < window[d]; ++k) {
            int64_t p = o * strides[d] + k * wd[d] - low[d];
            c += p >= 0 && p < dilated[d] && p % bd[d] == 0;
          }
          counts.push_back((double)c);
        }
        if (llvm::all_of(counts, [](double c) { return c == 1.0; }))
          continue;
        auto countType = RankedTensorType::get({out[d]}, elt);
        SmallVector<Attribute> values;
        for (double c : counts)
          values.push_back(FloatAttr::get(elt, c));
        inputs.push_back(arith::ConstantOp::create(
            rewriter, loc, DenseElementsAttr::get(countType, values)));
        countMaps.push_back(AffineMap::get(rank, 0, {getAffineDimExpr(d, ctx)}, ctx));
      }
      if (inputs.size() > 1) {
        countMaps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
        result = linalg::GenericOp::create(
                     rewriter, loc, TypeRange{type}, inputs,
                     ValueRange{emptyTensor(rewriter, loc, type.getShape(), elt)}, countMaps,
                     parallelIterators(rank),
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       // one division by the (exact, integer) product of the counts
                       Value count = args[1];
                       for (size_t i = 2; i + 1 < args.size(); ++i)
                         count = arith::MulFOp::create(b, l, count, args[i]);
                       linalg::YieldOp::create(b, l, arith::DivFOp::create(b, l, args[0], count).getResult());
                     })
                     .getResult(0);
      }
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// softmax: e = exp(x - max), e / sum(e). log_softmax: (x - max) - ln(sum(e)).
/// The maximum along the axis is subtracted first, so exp never overflows.
template <typename OpT, bool IsLog>
struct SoftmaxLowering : StaticOpLowering<OpT> {
  using StaticOpLowering<OpT>::StaticOpLowering;

  LogicalResult lower(OpT op, typename OpT::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    auto type = cast<RankedTensorType>(op.getType());
    Type elt = type.getElementType();
    int64_t axis = op.getAxis(), rank = type.getRank();
    SmallVector<int64_t> redShape;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        redShape.push_back(type.getDimSize(d));
    auto redType = RankedTensorType::get(redShape, elt);
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap red = dropDimsMap(rank, {axis}, ctx);

    Value negInf = arith::ConstantOp::create(
        rewriter, loc, identityAttr(rewriter, ReductionKind::max, elt));
    Value max = buildReduce(rewriter, loc, ReductionKind::max, x, {axis},
                            redType, negInf);
    Value exps = buildElementwise(
        rewriter, loc, type, ValueRange{x, max},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::ExpOp::create(b, l,
                                     arith::SubFOp::create(b, l, a[0], a[1]));
        },
        {id, red});
    Value sum = buildReduce(rewriter, loc, ReductionKind::add, exps, {axis},
                            redType, zeroConst(rewriter, loc, elt));
    Value result;
    if (IsLog)
      result = buildElementwise(
          rewriter, loc, type, ValueRange{x, max, sum},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
            return arith::SubFOp::create(b, l, shifted,
                                         math::LogOp::create(b, l, a[2]));
          },
          {id, red, red});
    else
      result = buildElementwise(
          rewriter, loc, type, ValueRange{exps, sum},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::DivFOp::create(b, l, a[0], a[1]);
          },
          {id, red});
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// convolve
//===----------------------------------------------------------------------===//

/// 1. Input dilation and padding: with lhs dilation the input is inserted
///    with strides into a zero tensor of the dilated, padded size; otherwise
///    tensor.pad with zeros. Negative padding (cropping) is an extract_slice.
/// 2. The convolution proper (strides, kernel dilation, no padding):
///    linalg.conv_1d_ncw_fcw / conv_2d_nchw_fchw / conv_3d_ncdhw_fcdhw for one
///    group, conv_2d_ngchw_gfchw for grouped 2-D, else a linalg.generic over
///    (n, g, f, out..., c, window...) on group-expanded tensors.
struct ConvolveLowering : StaticOpLowering<ConvolveOp> {
  using StaticOpLowering::StaticOpLowering;

  static Value padAndDilate(OpBuilder &b, Location loc, Value x,
                            ArrayRef<int64_t> padding,
                            ArrayRef<int64_t> dilation) {
    RankedTensorType type = tensorType(x);
    ArrayRef<int64_t> shape = type.getShape();
    int64_t ns = shape.size() - 2;
    bool dilate = llvm::any_of(dilation, [](int64_t v) { return v != 1; });
    bool grow = llvm::any_of(padding, [](int64_t v) { return v > 0; });
    bool crop = llvm::any_of(padding, [](int64_t v) { return v < 0; });
    if (!dilate && !grow && !crop)
      return x;
    SmallVector<int64_t> lo = {0, 0}, hi = {0, 0}, full = {shape[0], shape[1]};
    for (int64_t i = 0; i < ns; ++i) {
      int64_t n = shape[i + 2];
      int64_t dilated = n == 0 ? 0 : dilation[i] * (n - 1) + 1;
      lo.push_back(std::max<int64_t>(padding[2 * i], 0));
      hi.push_back(std::max<int64_t>(padding[2 * i + 1], 0));
      full.push_back(lo.back() + dilated + hi.back());
    }
    auto fullType = RankedTensorType::get(full, type.getElementType());
    SmallVector<int64_t> offsets = {0, 0}, sizes = {full[0], full[1]};
    for (int64_t i = 0; i < ns; ++i) {
      int64_t cutLo = std::max<int64_t>(-padding[2 * i], 0);
      int64_t cutHi = std::max<int64_t>(-padding[2 * i + 1], 0);
      offsets.push_back(cutLo);
      sizes.push_back(full[i + 2] - cutLo - cutHi);
    }
    auto resultType = RankedTensorType::get(sizes, type.getElementType());
    // An empty input leaves only zero padding. (Building it from slices would
    // also trip memref.subview's verifier on zero-sized dimensions.)
    if (type.getNumElements() == 0)
      return zeroTensor(b, loc, resultType);
    if (dilate) {
      SmallVector<int64_t> strides = {1, 1};
      strides.append(dilation.begin(), dilation.end());
      Value zeros = zeroTensor(b, loc, fullType);
      x = tensor::InsertSliceOp::create(b, loc, x, zeros, indexAttrs(b, lo),
                                        indexAttrs(b, shape),
                                        indexAttrs(b, strides));
    } else if (grow) {
      x = tensor::PadOp::create(b, loc, fullType, x, indexAttrs(b, lo),
                                indexAttrs(b, hi),
                                zeroConst(b, loc, type.getElementType()));
    }
    if (!crop)
      return x;
    SmallVector<int64_t> ones(shape.size(), 1);
    return tensor::ExtractSliceOp::create(b, loc, resultType, x,
                                          indexAttrs(b, offsets),
                                          indexAttrs(b, sizes),
                                          indexAttrs(b, ones));
  }

  /// Splits dimension `dim` of `v` into (groups, size / groups).
  static Value splitGroups(OpBuilder &b, Location loc, Value v, int64_t dim,
                           int64_t groups) {
    RankedTensorType type = tensorType(v);
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> re;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t next = shape.size();
      if (d == dim) {
        shape.push_back(groups);
        shape.push_back(type.getDimSize(d) / groups);
        re.push_back({next, next + 1});
      } else {
        shape.push_back(type.getDimSize(d));
        re.push_back({next});
      }
    }
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), v, re);
  }

  /// Grouped convolution as a linalg.generic on x: N x G x Cg x D...,
  /// k: G x Og x Cg x K..., acc: N x G x Og x P....
  static Value genericConv(OpBuilder &b, Location loc, Value x, Value k,
                           Value acc, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilation) {
    MLIRContext *ctx = b.getContext();
    int64_t ns = strides.size();
    int64_t numLoops = 4 + 2 * ns;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    AffineExpr n = dim(0), g = dim(1), f = dim(2), c = dim(3 + ns);
    SmallVector<AffineExpr> xe = {n, g, c}, ke = {g, f, c}, oe = {n, g, f};
    for (int64_t i = 0; i < ns; ++i) {
      AffineExpr o = dim(3 + i), w = dim(4 + ns + i);
      xe.push_back(o * strides[i] + w * dilation[i]);
      ke.push_back(w);
      oe.push_back(o);
    }
    SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, xe, ctx),
                                   AffineMap::get(numLoops, 0, ke, ctx),
                                   AffineMap::get(numLoops, 0, oe, ctx)};
    SmallVector<utils::IteratorType> iterators = parallelIterators(3 + ns);
    iterators.append(1 + ns, utils::IteratorType::reduction);
    return linalg::GenericOp::create(
               b, loc, TypeRange{acc.getType()}, ValueRange{x, k},
               ValueRange{acc}, maps, iterators,
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 // i1: AND products, OR sum (as linalg's named convolutions
                 // and dot do)
                 bool i1 = isBool(a[0]);
                 Value p = combine(nb, l, i1 ? ReductionKind::min : ReductionKind::mul,
                                   a[0], a[1]);
                 linalg::YieldOp::create(
                     nb, l, combine(nb, l, i1 ? ReductionKind::max : ReductionKind::add,
                                    a[2], p));
               })
        .getResult(0);
  }

  LogicalResult lower(ConvolveOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t ns = op.getNumSpatialDims();
    int64_t groups = op.getGroups();
    SmallVector<int64_t> strides = op.getStrideValues();
    SmallVector<int64_t> rhsDilation = op.getRhsDilationValues();
    Value x = padAndDilate(rewriter, loc, adaptor.getInput(),
                           op.getPaddingValues(), op.getLhsDilationValues());
    Value k = adaptor.getKernel();
    Attribute stridesAttr = rewriter.getI64TensorAttr(strides);
    Attribute dilationAttr = rewriter.getI64TensorAttr(rhsDilation);

    auto named = [&](auto opTag, Value in, Value kernel,
                     RankedTensorType outType) -> Value {
      using NamedOp = decltype(opTag);
      Value acc = zeroTensor(rewriter, loc, outType);
      return NamedOp::create(rewriter, loc, TypeRange{outType},
                             ValueRange{in, kernel}, ValueRange{acc},
                             stridesAttr, dilationAttr)
          ->getResult(0);
    };

    Value result;
    if (groups == 1 && ns == 1) {
      result = named(linalg::Conv1DNcwFcwOp(), x, k, type);
    } else if (groups == 1 && ns == 2) {
      result = named(linalg::Conv2DNchwFchwOp(), x, k, type);
    } else if (groups == 1 && ns == 3) {
      result = named(linalg::Conv3DNcdhwFcdhwOp(), x, k, type);
    } else {
      Value xg = splitGroups(rewriter, loc, x, 1, groups);
      Value kg = splitGroups(rewriter, loc, k, 0, groups);
      SmallVector<int64_t> outShape = {type.getDimSize(0), groups,
                                       type.getDimSize(1) / groups};
      outShape.append(type.getShape().begin() + 2, type.getShape().end());
      auto outType = RankedTensorType::get(outShape, type.getElementType());
      Value grouped;
      if (ns == 2)
        grouped = named(linalg::Conv2DNgchwGfchwOp(), xg, kg, outType);
      else
        grouped = genericConv(rewriter, loc, xg, kg,
                              zeroTensor(rewriter, loc, outType), strides,
                              rhsDilation);
      SmallVector<ReassociationIndices> re = {{0}, {1, 2}};
      for (int64_t i = 0; i < ns; ++i)
        re.push_back({3 + i});
      result =
          tensor::CollapseShapeOp::create(rewriter, loc, type, grouped, re);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct DLVMToLinalgPass
    : mlir::dlvm::impl::DLVMToLinalgBase<DLVMToLinalgPass> {
  void runOnOperation() override {
    // Report every op the patterns cannot handle with a precise message
    // (rather than the conversion driver's generic "failed to legalize").
    bool bad = false;
    getOperation()->walk([&](Operation *op) {
      if (!isa_and_nonnull<DLVMDialect>(op->getDialect()) ||
          hasStaticTensorTypes(op))
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
  // Unary.
  addElementwise<NegOp>(patterns, emitNeg);
  addElementwise<ExpOp>(patterns, mathUnary<math::ExpOp>);
  addElementwise<LogOp>(patterns, mathUnary<math::LogOp>);
  addElementwise<TanhOp>(patterns, mathUnary<math::TanhOp>);
  addElementwise<SigmoidOp>(patterns, emitSigmoid);
  addElementwise<ReluOp>(patterns, emitRelu);
  addElementwise<SqrtOp>(patterns, mathUnary<math::SqrtOp>);
  addElementwise<RsqrtOp>(patterns, mathUnary<math::RsqrtOp>);
  addElementwise<SquareOp>(patterns, emitSquare);
  addElementwise<SignOp>(patterns, emitSign);
  addElementwise<AbsOp>(patterns, emitAbs);
  addElementwise<SinOp>(patterns, mathUnary<math::SinOp>);
  addElementwise<CosOp>(patterns, mathUnary<math::CosOp>);
  addElementwise<TanOp>(patterns, mathUnary<math::TanOp>);
  addElementwise<AsinOp>(patterns, mathUnary<math::AsinOp>);
  addElementwise<AcosOp>(patterns, mathUnary<math::AcosOp>);
  addElementwise<AtanOp>(patterns, mathUnary<math::AtanOp>);
  addElementwise<SinhOp>(patterns, mathUnary<math::SinhOp>);
  addElementwise<CoshOp>(patterns, mathUnary<math::CoshOp>);
  addElementwise<FloorOp>(patterns, mathUnary<math::FloorOp>);
  addElementwise<CeilOp>(patterns, mathUnary<math::CeilOp>);
  addElementwise<RoundOp>(patterns, mathUnary<math::RoundOp>);
  addElementwise<RintOp>(patterns, mathUnary<math::RoundEvenOp>);
  addElementwise<ErfOp>(patterns, mathUnary<math::ErfOp>);
  addElementwise<ErfcOp>(patterns, mathUnary<math::ErfcOp>);
  addElementwise<LgammaOp>(patterns, emitLgammaFn);
  addElementwise<DigammaOp>(patterns, emitDigammaFn);
  addElementwise<Log1pOp>(patterns, mathUnary<math::Log1pOp>);
  addElementwise<Expm1Op>(patterns, mathUnary<math::ExpM1Op>);
  addElementwise<NotOp>(patterns, emitNot);
  addElementwise<AsinhOp>(patterns, mathUnary<math::AsinhOp>);
  addElementwise<AcoshOp>(patterns, mathUnary<math::AcoshOp>);
  addElementwise<AtanhOp>(patterns, mathUnary<math::AtanhOp>);
  addElementwise<Exp2Op>(patterns, mathUnary<math::Exp2Op>);
  addElementwise<Log2Op>(patterns, mathUnary<math::Log2Op>);
  addElementwise<Log10Op>(patterns, mathUnary<math::Log10Op>);
  addElementwise<CbrtOp>(patterns, mathUnary<math::CbrtOp>);
  addElementwise<PopcountOp>(patterns, mathUnary<math::CtPopOp>);
  addElementwise<IsFiniteOp>(patterns, emitIsFinite);
  // Binary (broadcasting), comparisons, select, casts.
  addElementwise<AddOp>(patterns, arithBinary<arith::AddFOp, arith::AddIOp>);
  addElementwise<SubOp>(patterns, arithBinary<arith::SubFOp, arith::SubIOp>);
  addElementwise<MulOp>(patterns, arithBinary<arith::MulFOp, arith::MulIOp>);
  addElementwise<DivOp>(patterns, emitDiv<DivKind::True>);
  addElementwise<TruncDivOp>(patterns, emitDiv<DivKind::Trunc>);
  addElementwise<FloorDivOp>(patterns, emitDiv<DivKind::Floor>);
  addElementwise<ModOp>(patterns, emitDiv<DivKind::Mod>);
  addElementwise<PowOp>(patterns, floatBinary<math::PowFOp>);
  addElementwise<MinOp>(patterns, emitMinMax<false>);
  addElementwise<MaxOp>(patterns, emitMinMax<true>);
  addElementwise<AndOp>(patterns, intBinary<arith::AndIOp>);
  addElementwise<OrOp>(patterns, intBinary<arith::OrIOp>);
  addElementwise<XorOp>(patterns, intBinary<arith::XOrIOp>);
  addElementwise<RemOp>(patterns, emitDiv<DivKind::Rem>);
  addElementwise<Atan2Op>(patterns, floatBinary<math::Atan2Op>);
  addElementwise<ShiftLeftOp>(patterns, emitShift<ShiftKind::Left>);
  addElementwise<ShiftRightLogicalOp>(patterns, emitShift<ShiftKind::RightLogical>);
  addElementwise<ShiftRightArithmeticOp>(patterns,
                                         emitShift<ShiftKind::RightArithmetic>);
  addElementwise<ClampOp>(patterns, emitClamp);
  addElementwise<CmpOp>(patterns, emitCmp);
  addElementwise<SelectOp>(patterns, emitSelect);
  addElementwise<CastOp>(patterns, emitCast);
  addElementwise<BitcastOp>(patterns, emitBitcast);
  // Structured ops.
  patterns.add<DynamicSliceLowering, DynamicUpdateSliceLowering, IotaLowering,
               GatherLowering, ScatterLowering, SortLowering, TopKLowering,
               ArgExtremumLowering<ArgMaxOp, true>, ArgExtremumLowering<ArgMinOp, false>>(
      patterns.getContext());
  patterns.add<DotLowering, DotGeneralLowering, TransposeLowering, ReverseLowering,
               ConcatenateLowering, SliceLowering, PadLowering,
               ReshapeLikeLowering<ReshapeOp>, ReshapeLikeLowering<PadShapeOp>,
               ReshapeLikeLowering<SqueezeShapeOp>, BroadcastToLowering,
               ConstantLowering, RandomLowering, ReduceLowering, ScanLowering,
               ReduceWindowLowering, SoftmaxLowering<SoftmaxOp, false>,
               SoftmaxLowering<LogSoftmaxOp, true>, ConvolveLowering>(
      patterns.getContext());
}
