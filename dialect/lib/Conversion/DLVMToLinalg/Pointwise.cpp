//===- Pointwise.cpp - elementwise dlvm ops to linalg.generic -------------===//
//
// One parallel linalg.generic per elementwise op (unary, binary with DLVM
// broadcasting, cmp, select, clamp, casts), the scalar computation of each
// op given by a small function; and the element generators: constants
// (linalg.fill for splats), iota and random.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlvm;
using namespace mlir::dlvm::to_linalg;

namespace {

//===----------------------------------------------------------------------===//
// Division
//===----------------------------------------------------------------------===//


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
  if (isUnsigned(x)) {
    // Unsigned: floor and truncation agree; x / 0 is all bits set, x mod 0
    // and x rem 0 are x.
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y,
                                         zeroConst(b, loc, y.getType()));
    Value safe = arith::SelectOp::create(b, loc, isZero,
                                         intConst(b, loc, y.getType(), 1), y);
    if (kind == DivKind::Rem || kind == DivKind::Mod)
      return arith::SelectOp::create(b, loc, isZero, x,
                                     arith::RemUIOp::create(b, loc, x, safe));
    return arith::SelectOp::create(b, loc, isZero,
                                   intConst(b, loc, x.getType(), -1),
                                   arith::DivUIOp::create(b, loc, x, safe));
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

//===----------------------------------------------------------------------===//
// Elementwise ops: one linalg.generic, the scalar computation per op.
//===----------------------------------------------------------------------===//

/// Computes one result element of `op` from its (broadcast) operand elements.
using ScalarFn = Value (*)(OpBuilder &, Location, Operation *, ValueRange);

template <typename OpT>
struct ElementwiseLowering : StaticOpLowering<OpT> {
  ElementwiseLowering(MLIRContext *ctx, ScalarFn fn)
      : StaticOpLowering<OpT>(ctx), fn(fn) {}

  LogicalResult lower(OpT op, typename OpT::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
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
  if (hasUnsignedOrder(a[0]))
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
  if (hasUnsignedOrder(a[0]))
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
  } else if (isUnsigned(x)) {
    // 0 or 1: x != 0 extended.
    Value nonZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
    return arith::SelectOp::create(b, loc, nonZero, intConst(b, loc, t, 1), zero);
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

/// A unary op whose scalar computation is a function of the operand alone.
template <Value (*Fn)(OpBuilder &, Location, Value)>
Value scalarUnary(OpBuilder &b, Location loc, Operation *, ValueRange a) {
  return Fn(b, loc, a[0]);
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
  bool u = hasUnsignedOrder(a[0]);
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

/// linalg.index of the dimension, converted to the element type.
struct IotaLowering : StaticOpLowering<IotaOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(IotaOp op, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    int64_t dim = op.getDim();
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), type, ValueRange{},
                [&](OpBuilder &b, Location l, ValueRange) {
                  Value i = linalg::IndexOp::create(b, l, dim);
                  Value wide =
                      arith::IndexCastOp::create(b, l, b.getI64Type(), i);
                  return convertScalar(b, l, wide, type.getElementType());
                }));
    return success();
  }
};

} // namespace

void mlir::dlvm::to_linalg::populatePointwisePatterns(
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
  addElementwise<LgammaOp>(patterns, scalarUnary<emitLgamma>);
  addElementwise<DigammaOp>(patterns, scalarUnary<emitDigamma>);
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
  patterns.add<ConstantLowering, RandomLowering, IotaLowering>(
      patterns.getContext());
}
