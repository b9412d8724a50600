//===- DLVMOps.cpp - dlvm operations: inference, verifiers, folders -------===//
#include "dlvm/DLVMOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::dlvm;

#define GET_OP_CLASSES
#include "dlvm/DLVMOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

/// A dimension size for messages: `?` for a dynamic one.
static std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t d) { os << dimStr(d); });
  os << "]";
  return s;
}

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

// Type inference runs while an op is parsed or built, before its operand
// types and attributes are verified: it checks everything it relies on and
// reports a located error (never an assertion, an out-of-bounds read or a
// signed overflow) when an attribute or a shape is out of range.

/// Checks that every operand is a ranked tensor (the parser guarantees it for
/// the custom syntax; builders from C++ or Python do not).
static LogicalResult checkTensorOperands(std::optional<Location> loc,
                                         ValueRange operands) {
  for (auto [i, v] : llvm::enumerate(operands))
    if (!isa<RankedTensorType>(v.getType()))
      return emitOptionalError(loc, "operand #", i, " must be a ranked tensor, got ",
                               v.getType());
  return success();
}

/// The number of elements of `shape` (dynamic sizes count as 1), or nullopt
/// if it overflows int64.
static std::optional<int64_t> elementCount(ArrayRef<int64_t> shape) {
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d))
      continue;
    std::optional<int64_t> next = llvm::checkedMul(n, d);
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

/// Checks a shape given by an attribute: every size non-negative (`kDynamic`
/// is negative too) and the element count within int64.
static LogicalResult checkShape(std::optional<Location> loc, StringRef what,
                                ArrayRef<int64_t> shape) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return emitOptionalError(loc, what, " ", shapeStr(shape), " has a negative dimension");
  if (!elementCount(shape))
    return emitOptionalError(loc, what, " ", shapeStr(shape),
                             " has more elements than fit in a 64-bit integer");
  return success();
}

/// Pushes the inferred result type `tensor<shape x elt>` after checking that
/// it is a valid type: sizes non-negative or dynamic, the element count within
/// int64, `elt` a valid element type.
static LogicalResult pushTensor(std::optional<Location> loc, ArrayRef<int64_t> shape,
                                Type elt, SmallVectorImpl<Type> &results) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0 && !ShapedType::isDynamic(d); }))
    return emitOptionalError(loc, "inferred result shape ", shapeStr(shape),
                             " has a negative dimension");
  if (!elementCount(shape))
    return emitOptionalError(loc, "result shape ", shapeStr(shape),
                             " has more elements than fit in a 64-bit integer");
  if (!elt || !TensorType::isValidElementType(elt))
    return emitOptionalError(loc, "invalid result element type ", elt);
  results.push_back(RankedTensorType::get(shape, elt));
  return success();
}

/// A dlvm integer element type: signless, or unsigned of 8 to 64 bits.
static bool isDLVMInteger(Type t) {
  auto i = dyn_cast<IntegerType>(t);
  return i && (i.isSignless() || (i.isUnsigned() && llvm::is_contained({8u, 16u, 32u, 64u}, i.getWidth())));
}

/// True if the elements of `t` (a tensor or element type) are unsigned
/// integers, which order, divide and convert as unsigned.
static bool isUnsignedElement(Type t) {
  auto i = dyn_cast<IntegerType>(getElementTypeOrSelf(t));
  return i && i.isUnsigned();
}

/// Checks a `dtype` attribute: a dlvm element type (f16, bf16, f32, f64 or,
/// unless `floatOnly`, a signless integer).
static LogicalResult checkDtype(std::optional<Location> loc, Type dtype, bool floatOnly) {
  bool ok = dtype && (isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(dtype) ||
                      (!floatOnly && isDLVMInteger(dtype)));
  if (!ok)
    return emitOptionalError(loc, "attribute 'dtype' failed to satisfy constraint: expected ",
                             floatOnly ? "f16, bf16, f32 or f64" : "f16, bf16, f32, f64, a signless integer type or ui8/ui16/ui32/ui64",
                             ", got ", dtype);
  return success();
}

FailureOr<SmallVector<int64_t>> mlir::dlvm::broadcastShapes(ArrayRef<int64_t> a,
                                                            ArrayRef<int64_t> b) {
  if (a.empty())
    return SmallVector<int64_t>(b);
  if (b.empty())
    return SmallVector<int64_t>(a);
  if (a.size() != b.size())
    return failure();
  SmallVector<int64_t> out;
  for (auto [x, y] : llvm::zip_equal(a, b)) {
    if (x != y && x != 1 && y != 1)
      return failure();
    out.push_back(x == 1 ? y : x);
  }
  return out;
}

static LogicalResult inferBroadcast(std::optional<Location> loc,
                                    ArrayRef<Value> operands, Type elementType,
                                    SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, operands)))
    return failure();
  SmallVector<int64_t> shape(tensorOf(operands.front()).getShape());
  for (Value v : operands.drop_front()) {
    FailureOr<SmallVector<int64_t>> next =
        broadcastShapes(shape, tensorOf(v).getShape());
    if (failed(next))
      return emitOptionalError(
          loc, "operand shapes are not broadcast-compatible: ",
          shapeStr(shape), " and ", shapeStr(tensorOf(v).getShape()),
          " (expected a rank-0 operand, or equal ranks with each dimension "
          "pair equal or 1)");
    shape = *next;
  }
  return pushTensor(loc, shape, elementType, results);
}

LogicalResult mlir::dlvm::verifyElementCounts(Operation *op) {
  auto check = [&](Type type, StringRef what, unsigned i) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || elementCount(t.getShape()))
      return success();
    return op->emitOpError() << what << " #" << i << " has type " << t
                             << ", whose element count overflows a 64-bit integer";
  };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", i)))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", i)))
      return failure();
  return success();
}

/// Checks that every entry of `dims` is a valid, distinct dimension index.
static LogicalResult checkDims(std::optional<Location> loc, StringRef what,
                               ArrayRef<int64_t> dims, int64_t rank) {
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return emitOptionalError(loc, what, " ", d,
                               " is out of range for an operand of rank ",
                               rank);
    if (!seen.insert(d).second)
      return emitOptionalError(loc, what, " ", d, " is listed twice");
  }
  return success();
}

static bool isFloatTensor(Value v) {
  return isa<FloatType>(tensorOf(v).getElementType());
}

//===----------------------------------------------------------------------===//
// Constant folding helpers
//===----------------------------------------------------------------------===//

/// Folding materializes at most this many elements of a non-splat result.
static constexpr int64_t kMaxFoldElements = 1 << 16;

static double toDouble(APFloat v) {
  bool lost;
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToDouble();
}

static APFloat fromDouble(double d, const llvm::fltSemantics &sem) {
  APFloat v(d);
  bool lost;
  v.convert(sem, APFloat::rmNearestTiesToEven, &lost);
  return v;
}

/// Folds a unary float op on a constant operand with `fn`.
static Attribute foldUnaryFloat(Attribute operand,
                                llvm::function_ref<double(double)> fn) {
  auto attr = dyn_cast_or_null<DenseFPElementsAttr>(operand);
  if (!attr)
    return {};
  auto type = attr.getType();
  const auto &sem = cast<FloatType>(type.getElementType()).getFloatSemantics();
  if (attr.isSplat())
    return DenseElementsAttr::get(
        type, fromDouble(fn(toDouble(attr.getSplatValue<APFloat>())), sem));
  if (type.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<APFloat> values;
  for (APFloat v : attr.getValues<APFloat>())
    values.push_back(fromDouble(fn(toDouble(v)), sem));
  return DenseElementsAttr::get(type, values);
}

/// Applies `fn` to the broadcast elements of two constant operands.
/// `fn` returns std::nullopt when an element cannot be folded.
template <typename T, typename R>
static Attribute
foldBroadcastBinary(Attribute lhs, Attribute rhs, RankedTensorType resultType,
                    llvm::function_ref<std::optional<R>(const T &, const T &)> fn) {
  auto a = dyn_cast_or_null<DenseElementsAttr>(lhs);
  auto b = dyn_cast_or_null<DenseElementsAttr>(rhs);
  if (!a || !b || !resultType)
    return {};
  if (a.isSplat() && b.isSplat()) {
    std::optional<R> r = fn(a.getSplatValue<T>(), b.getSplatValue<T>());
    if (!r)
      return {};
    return DenseElementsAttr::get(resultType, *r);
  }
  int64_t n = resultType.getNumElements();
  if (n > kMaxFoldElements)
    return {};
  ArrayRef<int64_t> shape = resultType.getShape();
  auto valuesOf = [](DenseElementsAttr e) { return llvm::to_vector(e.getValues<T>()); };
  SmallVector<T> av = valuesOf(a), bv = valuesOf(b);
  // Maps a result linear index to an operand's linear index.
  auto index = [&](DenseElementsAttr e, int64_t linear) -> int64_t {
    if (e.isSplat())
      return 0;
    ArrayRef<int64_t> s = e.getType().getShape();
    int64_t idx = 0, stride = 1, rem = linear;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      int64_t coord = rem % shape[d];
      rem /= shape[d];
      if (!s.empty() && s[d] != 1)
        idx += coord * stride;
      if (!s.empty())
        stride *= s[d];
    }
    return idx;
  };
  SmallVector<R> out;
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    std::optional<R> r = fn(av[index(a, i)], bv[index(b, i)]);
    if (!r)
      return {};
    out.push_back(*r);
  }
  return DenseElementsAttr::get(resultType, out);
}

static Attribute foldBinaryFloat(Attribute lhs, Attribute rhs, Type resultType,
                                 llvm::function_ref<double(double, double)> fn) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!type || !isa<FloatType>(type.getElementType()))
    return {};
  const auto &sem = cast<FloatType>(type.getElementType()).getFloatSemantics();
  return foldBroadcastBinary<APFloat, APFloat>(
      lhs, rhs, type, [&](const APFloat &x, const APFloat &y) -> std::optional<APFloat> {
        return fromDouble(fn(toDouble(x), toDouble(y)), sem);
      });
}

static Attribute
foldBinaryInt(Attribute lhs, Attribute rhs, Type resultType,
              llvm::function_ref<std::optional<APInt>(const APInt &, const APInt &)> fn) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!type || !isa<IntegerType>(type.getElementType()))
    return {};
  return foldBroadcastBinary<APInt, APInt>(lhs, rhs, type, fn);
}

using IntFn = llvm::function_ref<std::optional<APInt>(const APInt &, const APInt &)>;
using IntFnStorage = std::function<std::optional<APInt>(const APInt &, const APInt &)>;

/// Folds a binary op on constant operands: `floatFn` for float elements,
/// `intFn` (may be null) for integer elements.
static OpFoldResult foldBinary(Attribute lhs, Attribute rhs, Type resultType,
                               llvm::function_ref<double(double, double)> floatFn,
                               IntFn intFn) {
  if (Attribute r = foldBinaryFloat(lhs, rhs, resultType, floatFn))
    return r;
  if (!intFn)
    return {};
  return foldBinaryInt(lhs, rhs, resultType, intFn);
}

/// Integer division as XLA defines it (and the lowering computes it): signed,
/// never undefined. x / 0 is -1 (all bits set); MIN / -1 wraps to MIN. `floor`
/// rounds the quotient toward -inf, otherwise toward zero. On i1 (one bit:
/// MIN == -1 == true) this gives x / true == x and x / false == true.
static APInt xlaDiv(const APInt &x, const APInt &y, bool floor, bool isUnsigned) {
  if (y.isZero())
    return APInt::getAllOnes(x.getBitWidth());
  if (isUnsigned) // floor and truncation agree
    return x.udiv(y);
  if (x.isMinSignedValue() && y.isAllOnes())
    return x;
  return floor ? llvm::APIntOps::RoundingSDiv(x, y, APInt::Rounding::DOWN) : x.sdiv(y);
}

/// Floored remainder (the sign of y) as XLA's rem extended to flooring:
/// x mod 0 is x, MIN mod -1 is 0, so x == floor_div(x, y) * y + mod(x, y)
/// holds for every pair.
static APInt xlaMod(const APInt &x, const APInt &y, bool isUnsigned) {
  if (y.isZero())
    return x;
  if (isUnsigned)
    return x.urem(y);
  if (y.isAllOnes())
    return APInt::getZero(x.getBitWidth());
  APInt r = x.srem(y);
  if (!r.isZero() && (r.isNegative() != y.isNegative()))
    r += y;
  return r;
}

/// Truncating integer division on elements of `type` (unsigned or signed).
static IntFnStorage truncatingDiv(Type type) {
  bool u = isUnsignedElement(type);
  return [u](const APInt &x, const APInt &y) -> std::optional<APInt> {
    return xlaDiv(x, y, /*floor=*/false, u);
  };
}

/// True if `attr` is a splat constant equal to `value`.
static bool isSplatOf(Attribute attr, double value) {
  auto e = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!e || !e.isSplat())
    return false;
  if (isa<FloatType>(e.getElementType()))
    return toDouble(e.getSplatValue<APFloat>()) == value;
  if (isa<IntegerType>(e.getElementType()))
    return e.getSplatValue<APInt>().getSExtValue() == static_cast<int64_t>(value);
  return false;
}

/// True if `attr` is a splat integer 0 or a splat float zero of the given
/// sign: x + (-0.0) == x and x - (+0.0) == x hold exactly, the other signs not.
static bool isSplatZero(Attribute attr, bool negativeFloat) {
  auto e = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!e || !e.isSplat())
    return false;
  if (isa<FloatType>(e.getElementType())) {
    APFloat v = e.getSplatValue<APFloat>();
    return v.isZero() && v.isNegative() == negativeFloat;
  }
  return isa<IntegerType>(e.getElementType()) && e.getSplatValue<APInt>().isZero();
}

/// The order of integer elements: signed, except i1, a boolean with
/// false < true (as numpy and JAX order booleans), and the unsigned types.
static bool lessThan(const APInt &x, const APInt &y, bool isUnsigned) {
  return isUnsigned || x.getBitWidth() == 1 ? x.ult(y) : x.slt(y);
}

static double floorMod(double x, double y) {
  double r = std::fmod(x, y);
  return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
static double digamma(double x) {
  // Reflection for x < 0.5, recurrence up to 6, then the asymptotic series.
  if (x <= 0 && x == std::floor(x))
    return std::nan("");
  if (x < 0.5)
    return digamma(1 - x) - M_PI / std::tan(M_PI * x);
  double r = 0;
  while (x < 10) {
    r -= 1 / x;
    x += 1;
  }
  double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

/// neg(neg(x)) -> x, and similar involutions.
template <typename OpT>
static Value foldInvolution(Value operand) {
  if (auto inner = operand.getDefiningOp<OpT>())
    return inner.getOperand();
  return {};
}

/// f(f(x)) -> f(x) for idempotent f.
template <typename OpT>
static Value foldIdempotent(Value operand) {
  if (auto inner = operand.getDefiningOp<OpT>())
    return inner.getResult();
  return {};
}

/// Folds a unary integer op on a constant operand with `fn`.
static Attribute foldUnaryInt(Attribute operand,
                              llvm::function_ref<APInt(const APInt &)> fn) {
  auto attr = dyn_cast_or_null<DenseIntElementsAttr>(operand);
  if (!attr)
    return {};
  if (attr.isSplat())
    return DenseElementsAttr::get(attr.getType(), fn(attr.getSplatValue<APInt>()));
  if (attr.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<APInt> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(fn(v));
  return DenseElementsAttr::get(attr.getType(), values);
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldInvolution<NegOp>(getOperand()))
    return v;
  if (Attribute r = foldUnaryInt(adaptor.getOperand(), [](const APInt &x) { return -x; }))
    return r;
  return foldUnaryFloat(adaptor.getOperand(), [](double x) { return -x; });
}
/// True if `v` is a tensor of i1 (on which relu, abs and sign are the identity).
static bool isBoolTensor(Value v) { return tensorOf(v).getElementType().isInteger(1); }

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldInvolution<NotOp>(getOperand()))
    return v;
  return foldUnaryInt(adaptor.getOperand(), [](const APInt &x) { return ~x; });
}
OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdempotent<AbsOp>(getOperand()))
    return v;
  if (isBoolTensor(getOperand()) || isUnsignedElement(getType()))
    return getOperand();
  if (Attribute r = foldUnaryInt(adaptor.getOperand(), [](const APInt &x) { return x.abs(); }))
    return r;
  return foldUnaryFloat(adaptor.getOperand(), [](double x) { return std::fabs(x); });
}
OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdempotent<ReluOp>(getOperand()))
    return v;
  if (isBoolTensor(getOperand()) || isUnsignedElement(getType())) // max(x, 0) with 0 the least
    return getOperand();
  if (Attribute r = foldUnaryInt(adaptor.getOperand(), [](const APInt &x) {
        return x.isNegative() ? APInt::getZero(x.getBitWidth()) : x;
      }))
    return r;
  // max(x, +0.0): NaN propagates, -0.0 gives +0.0.
  return foldUnaryFloat(adaptor.getOperand(),
                        [](double x) { return std::isnan(x) || x > 0 ? x : 0.0; });
}
OpFoldResult SignOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdempotent<SignOp>(getOperand()))
    return v;
  if (isBoolTensor(getOperand()))
    return getOperand();
  bool u = isUnsignedElement(getType());
  if (Attribute r = foldUnaryInt(adaptor.getOperand(), [u](const APInt &x) {
        unsigned w = x.getBitWidth();
        return !u && x.isNegative() ? APInt::getAllOnes(w) : APInt(w, x.isZero() ? 0 : 1);
      }))
    return r;
  return foldUnaryFloat(adaptor.getOperand(), [](double x) {
    return x > 0 ? 1.0 : (x < 0 ? -1.0 : x);
  });
}
OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdempotent<FloorOp>(getOperand()))
    return v;
  return foldUnaryFloat(adaptor.getOperand(), [](double x) { return std::floor(x); });
}
OpFoldResult CeilOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdempotent<CeilOp>(getOperand()))
    return v;
  return foldUnaryFloat(adaptor.getOperand(), [](double x) { return std::ceil(x); });
}
OpFoldResult RoundOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdempotent<RoundOp>(getOperand()))
    return v;
  return foldUnaryFloat(adaptor.getOperand(), [](double x) { return std::round(x); });
}
OpFoldResult RintOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdempotent<RintOp>(getOperand()))
    return v;
  return foldUnaryFloat(adaptor.getOperand(), [](double x) { return std::nearbyint(x); });
}

#define DLVM_FOLD_UNARY_FLOAT(OP, EXPR)                                        \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldUnaryFloat(adaptor.getOperand(), [](double x) { return EXPR; }); \
  }
DLVM_FOLD_UNARY_FLOAT(ExpOp, std::exp(x))
DLVM_FOLD_UNARY_FLOAT(LogOp, std::log(x))
DLVM_FOLD_UNARY_FLOAT(TanhOp, std::tanh(x))
DLVM_FOLD_UNARY_FLOAT(SigmoidOp, sigmoid(x))
DLVM_FOLD_UNARY_FLOAT(SqrtOp, std::sqrt(x))
DLVM_FOLD_UNARY_FLOAT(RsqrtOp, 1.0 / std::sqrt(x))
DLVM_FOLD_UNARY_FLOAT(SquareOp, x * x)
DLVM_FOLD_UNARY_FLOAT(SinOp, std::sin(x))
DLVM_FOLD_UNARY_FLOAT(CosOp, std::cos(x))
DLVM_FOLD_UNARY_FLOAT(TanOp, std::tan(x))
DLVM_FOLD_UNARY_FLOAT(AsinOp, std::asin(x))
DLVM_FOLD_UNARY_FLOAT(AcosOp, std::acos(x))
DLVM_FOLD_UNARY_FLOAT(AtanOp, std::atan(x))
DLVM_FOLD_UNARY_FLOAT(SinhOp, std::sinh(x))
DLVM_FOLD_UNARY_FLOAT(CoshOp, std::cosh(x))
DLVM_FOLD_UNARY_FLOAT(ErfOp, std::erf(x))
DLVM_FOLD_UNARY_FLOAT(ErfcOp, std::erfc(x))
DLVM_FOLD_UNARY_FLOAT(LgammaOp, std::lgamma(x))
DLVM_FOLD_UNARY_FLOAT(DigammaOp, digamma(x))
DLVM_FOLD_UNARY_FLOAT(Log1pOp, std::log1p(x))
DLVM_FOLD_UNARY_FLOAT(Expm1Op, std::expm1(x))
DLVM_FOLD_UNARY_FLOAT(AsinhOp, std::asinh(x))
DLVM_FOLD_UNARY_FLOAT(AcoshOp, std::acosh(x))
DLVM_FOLD_UNARY_FLOAT(AtanhOp, std::atanh(x))
DLVM_FOLD_UNARY_FLOAT(Exp2Op, std::exp2(x))
DLVM_FOLD_UNARY_FLOAT(Log2Op, std::log2(x))
DLVM_FOLD_UNARY_FLOAT(Log10Op, std::log10(x))
DLVM_FOLD_UNARY_FLOAT(CbrtOp, std::cbrt(x))
#undef DLVM_FOLD_UNARY_FLOAT

OpFoldResult PopcountOp::fold(FoldAdaptor adaptor) {
  return foldUnaryInt(adaptor.getOperand(), [](const APInt &x) {
    return APInt(x.getBitWidth(), x.popcount());
  });
}

LogicalResult IsFiniteOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  results.push_back(tensorOf(adaptor.getOperand()).clone(IntegerType::get(ctx, 1)));
  return success();
}

OpFoldResult IsFiniteOp::fold(FoldAdaptor adaptor) {
  auto attr = dyn_cast_or_null<DenseFPElementsAttr>(adaptor.getOperand());
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!attr || !type)
    return {};
  if (attr.isSplat())
    return DenseElementsAttr::get(type, attr.getSplatValue<APFloat>().isFinite());
  if (type.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<bool> values;
  for (APFloat v : attr.getValues<APFloat>())
    values.push_back(v.isFinite());
  return DenseElementsAttr::get(type, values);
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

#define DLVM_BINARY_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, \
                                     Adaptor adaptor,                           \
                                     SmallVectorImpl<Type> &results) {          \
    if (failed(checkTensorOperands(loc, adaptor.getOperands())))               \
      return failure();                                                        \
    return inferBroadcast(loc, {adaptor.getLhs(), adaptor.getRhs()},           \
                          tensorOf(adaptor.getLhs()).getElementType(), results); \
  }
DLVM_BINARY_INFER(AddOp)
DLVM_BINARY_INFER(SubOp)
DLVM_BINARY_INFER(MulOp)
DLVM_BINARY_INFER(DivOp)
DLVM_BINARY_INFER(PowOp)
DLVM_BINARY_INFER(MinOp)
DLVM_BINARY_INFER(MaxOp)
DLVM_BINARY_INFER(ModOp)
DLVM_BINARY_INFER(FloorDivOp)
DLVM_BINARY_INFER(TruncDivOp)
DLVM_BINARY_INFER(AndOp)
DLVM_BINARY_INFER(OrOp)
DLVM_BINARY_INFER(RemOp)
DLVM_BINARY_INFER(Atan2Op)
DLVM_BINARY_INFER(XorOp)
DLVM_BINARY_INFER(ShiftLeftOp)
DLVM_BINARY_INFER(ShiftRightArithmeticOp)
DLVM_BINARY_INFER(ShiftRightLogicalOp)
#undef DLVM_BINARY_INFER

/// Returns `v` if it already has the result's type (so no broadcast is lost).
static OpFoldResult sameTypeOr(Value v, Type resultType) {
  return v.getType() == resultType ? OpFoldResult(v) : OpFoldResult();
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isSplatZero(adaptor.getRhs(), /*negativeFloat=*/true))
    if (OpFoldResult r = sameTypeOr(getLhs(), getType()))
      return r;
  if (isSplatZero(adaptor.getLhs(), /*negativeFloat=*/true))
    if (OpFoldResult r = sameTypeOr(getRhs(), getType()))
      return r;
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                    [](double x, double y) { return x + y; },
                    [](const APInt &x, const APInt &y) -> std::optional<APInt> { return x + y; });
}
OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatZero(adaptor.getRhs(), /*negativeFloat=*/false))
    if (OpFoldResult r = sameTypeOr(getLhs(), getType()))
      return r;
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                    [](double x, double y) { return x - y; },
                    [](const APInt &x, const APInt &y) -> std::optional<APInt> { return x - y; });
}
OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0))
    if (OpFoldResult r = sameTypeOr(getLhs(), getType()))
      return r;
  if (isSplatOf(adaptor.getLhs(), 1.0))
    if (OpFoldResult r = sameTypeOr(getRhs(), getType()))
      return r;
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                    [](double x, double y) { return x * y; },
                    [](const APInt &x, const APInt &y) -> std::optional<APInt> { return x * y; });
}
OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0))
    if (OpFoldResult r = sameTypeOr(getLhs(), getType()))
      return r;
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                    [](double x, double y) { return x / y; },
                    truncatingDiv(getType()));
}
OpFoldResult TruncDivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0) && !isFloatTensor(getLhs()))
    if (OpFoldResult r = sameTypeOr(getLhs(), getType()))
      return r;
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                    [](double x, double y) { return std::trunc(x / y); },
                    truncatingDiv(getType()));
}
OpFoldResult FloorDivOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                    [](double x, double y) { return std::floor(x / y); },
                    [u = isUnsignedElement(getType())](const APInt &x, const APInt &y) -> std::optional<APInt> {
                      return xlaDiv(x, y, /*floor=*/true, u);
                    });
}
OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  if (Attribute r = foldBinaryFloat(adaptor.getLhs(), adaptor.getRhs(), getType(), floorMod))
    return r;
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [u = isUnsignedElement(getType())](const APInt &x, const APInt &y) -> std::optional<APInt> {
                         return xlaMod(x, y, u);
                       });
}
/// Truncated remainder (the sign of x) as XLA's rem: x rem 0 is x, MIN rem
/// -1 is 0, so x == trunc_div(x, y) * y + rem(x, y) wherever y != 0.
static APInt xlaRem(const APInt &x, const APInt &y, bool isUnsigned) {
  if (y.isZero())
    return x;
  if (isUnsigned)
    return x.urem(y);
  if (y.isAllOnes())
    return APInt::getZero(x.getBitWidth());
  return x.srem(y);
}
OpFoldResult RemOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(),
                    [](double x, double y) { return std::fmod(x, y); },
                    [u = isUnsignedElement(getType())](const APInt &x, const APInt &y) -> std::optional<APInt> {
                      return xlaRem(x, y, u);
                    });
}
OpFoldResult Atan2Op::fold(FoldAdaptor adaptor) {
  return foldBinaryFloat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double x, double y) { return std::atan2(x, y); });
}
OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [](const APInt &x, const APInt &y) -> std::optional<APInt> { return x ^ y; });
}
/// Shifts by an unsigned amount; `width` or more shifts every bit out (XLA).
OpFoldResult ShiftLeftOp::fold(FoldAdaptor adaptor) {
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [](const APInt &x, const APInt &y) -> std::optional<APInt> {
                         unsigned w = x.getBitWidth();
                         return y.uge(w) ? APInt::getZero(w) : x.shl(y);
                       });
}
OpFoldResult ShiftRightLogicalOp::fold(FoldAdaptor adaptor) {
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [](const APInt &x, const APInt &y) -> std::optional<APInt> {
                         unsigned w = x.getBitWidth();
                         return y.uge(w) ? APInt::getZero(w) : x.lshr(y);
                       });
}
OpFoldResult ShiftRightArithmeticOp::fold(FoldAdaptor adaptor) {
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [](const APInt &x, const APInt &y) -> std::optional<APInt> {
                         unsigned w = x.getBitWidth();
                         return y.uge(w) ? x.ashr(w - 1) : x.ashr(y);
                       });
}
OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0))
    if (OpFoldResult r = sameTypeOr(getLhs(), getType()))
      return r;
  return foldBinaryFloat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double x, double y) { return std::pow(x, y); });
}
OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  // Floats: IEEE 754-2019 minimum (NaN propagates, -0.0 < +0.0).
  if (auto type = dyn_cast<RankedTensorType>(getType()); type && isa<FloatType>(type.getElementType()))
    return foldBroadcastBinary<APFloat, APFloat>(
        adaptor.getLhs(), adaptor.getRhs(), type,
        [](const APFloat &x, const APFloat &y) -> std::optional<APFloat> {
          return llvm::minimum(x, y);
        });
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [u = isUnsignedElement(getType())](const APInt &x, const APInt &y) -> std::optional<APInt> {
                         return lessThan(x, y, u) ? x : y;
                       });
}
OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  // Floats: IEEE 754-2019 maximum (NaN propagates, -0.0 < +0.0).
  if (auto type = dyn_cast<RankedTensorType>(getType()); type && isa<FloatType>(type.getElementType()))
    return foldBroadcastBinary<APFloat, APFloat>(
        adaptor.getLhs(), adaptor.getRhs(), type,
        [](const APFloat &x, const APFloat &y) -> std::optional<APFloat> {
          return llvm::maximum(x, y);
        });
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [u = isUnsignedElement(getType())](const APInt &x, const APInt &y) -> std::optional<APInt> {
                         return lessThan(y, x, u) ? x : y;
                       });
}
OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [](const APInt &x, const APInt &y) -> std::optional<APInt> { return x & y; });
}
OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinaryInt(adaptor.getLhs(), adaptor.getRhs(), getType(),
                       [](const APInt &x, const APInt &y) -> std::optional<APInt> { return x | y; });
}

//===----------------------------------------------------------------------===//
// cmp, select
//===----------------------------------------------------------------------===//

LogicalResult CmpOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                      Adaptor adaptor, SmallVectorImpl<Type> &results) {
  return inferBroadcast(loc, {adaptor.getLhs(), adaptor.getRhs()},
                        IntegerType::get(ctx, 1), results);
}

static bool compare(CmpPredicate p, int c) {
  switch (p) {
  case CmpPredicate::lt: return c < 0;
  case CmpPredicate::le: return c <= 0;
  case CmpPredicate::gt: return c > 0;
  case CmpPredicate::ge: return c >= 0;
  case CmpPredicate::eq: return c == 0;
  case CmpPredicate::ne: return c != 0;
  }
  llvm_unreachable("unknown predicate");
}

OpFoldResult CmpOp::fold(FoldAdaptor adaptor) {
  auto type = cast<RankedTensorType>(getType());
  CmpPredicate p = getPredicate();
  if (isFloatTensor(getLhs()))
    return foldBroadcastBinary<APFloat, APInt>(
        adaptor.getLhs(), adaptor.getRhs(), type,
        [&](const APFloat &x, const APFloat &y) -> std::optional<APInt> {
          APFloat::cmpResult c = x.compare(y);
          bool r = c == APFloat::cmpUnordered
                       ? p == CmpPredicate::ne
                       : compare(p, c == APFloat::cmpLessThan ? -1
                                     : c == APFloat::cmpEqual ? 0 : 1);
          return APInt(1, r);
        });
  bool u = isUnsignedElement(getLhs().getType());
  return foldBroadcastBinary<APInt, APInt>(
      adaptor.getLhs(), adaptor.getRhs(), type,
      [&](const APInt &x, const APInt &y) -> std::optional<APInt> {
        return APInt(1, compare(p, lessThan(x, y, u) ? -1 : (x == y ? 0 : 1)));
      });
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  return inferBroadcast(loc, {adaptor.getMask(), adaptor.getOnTrue(), adaptor.getOnFalse()},
                        tensorOf(adaptor.getOnTrue()).getElementType(), results);
}

LogicalResult ClampOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  return inferBroadcast(loc, {adaptor.getMin(), adaptor.getOperand(), adaptor.getMax()},
                        tensorOf(adaptor.getOperand()).getElementType(), results);
}

/// Splat bounds and a splat operand fold to min(max(x, lo), hi) (NaN
/// propagating for floats, signed or boolean order for integers).
OpFoldResult ClampOp::fold(FoldAdaptor adaptor) {
  auto lo = dyn_cast_or_null<DenseElementsAttr>(adaptor.getMin());
  auto x = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand());
  auto hi = dyn_cast_or_null<DenseElementsAttr>(adaptor.getMax());
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!lo || !x || !hi || !type || !lo.isSplat() || !x.isSplat() || !hi.isSplat())
    return {};
  if (isa<FloatType>(type.getElementType()))
    return DenseElementsAttr::get(
        type, llvm::minimum(llvm::maximum(x.getSplatValue<APFloat>(), lo.getSplatValue<APFloat>()),
                            hi.getSplatValue<APFloat>()));
  APInt v = x.getSplatValue<APInt>(), l = lo.getSplatValue<APInt>(), h = hi.getSplatValue<APInt>();
  bool u = isUnsignedElement(type);
  v = lessThan(v, l, u) ? l : v;
  return DenseElementsAttr::get(type, lessThan(h, v, u) ? h : v);
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return sameTypeOr(getOnTrue(), getType());
  auto mask = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getMask());
  if (!mask || !mask.isSplat())
    return {};
  return sameTypeOr(mask.getSplatValue<bool>() ? getOnTrue() : getOnFalse(), getType());
}

//===----------------------------------------------------------------------===//
// dot
//===----------------------------------------------------------------------===//

/// Dimension numbers: each in [0, bound), no repeats, and ascending if `sorted`.
static LogicalResult checkDimList(std::optional<Location> loc, StringRef name,
                                  ArrayRef<int64_t> dims, int64_t bound, bool sorted) {
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= bound)
      return emitOptionalError(loc, name, " has ", d, ", not in [0, ", bound, ")");
    if (i > 0 && (sorted ? dims[i - 1] >= d : llvm::is_contained(dims.take_front(i), d)))
      return emitOptionalError(loc, name, " must be ", sorted ? "ascending and " : "",
                               "without repeats");
  }
  return success();
}

LogicalResult DotOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType lt = tensorOf(adaptor.getLhs()), rt = tensorOf(adaptor.getRhs());
  ArrayRef<int64_t> l = lt.getShape(), r = rt.getShape();
  Type elt = lt.getElementType();
  auto mismatch = [&](StringRef what) {
    return emitOptionalError(loc, "contraction dimensions do not match for ", what,
                             ": ", lt, " and ", rt);
  };
  SmallVector<int64_t> shape;
  if (l.size() == 1 && r.size() == 1) {
    if (l[0] != r[0])
      return mismatch("vector . vector");
  } else if (l.size() == 2 && r.size() == 1) {
    if (l[1] != r[0])
      return mismatch("matrix x vector");
    shape = {l[0]};
  } else if (l.size() == 1 && r.size() == 2) {
    if (l[0] != r[0])
      return mismatch("vector x matrix");
    shape = {r[1]};
  } else if (l.size() >= 2 && l.size() == r.size()) {
    size_t n = l.size();
    if (l.drop_back(2) != r.drop_back(2))
      return emitOptionalError(loc, "batch dimensions differ: ", lt, " and ", rt);
    if (l[n - 1] != r[n - 2])
      return mismatch("matrix x matrix");
    shape.append(l.begin(), l.end() - 1);
    shape.push_back(r[n - 1]);
  } else {
    return emitOptionalError(
        loc, "unsupported operand ranks ", l.size(), " and ", r.size(),
        " (expected matrix x matrix, batched matrices of equal rank, "
        "matrix x vector, vector x matrix or vector . vector)");
  }
  return pushTensor(loc, shape, elt, results);
}

LogicalResult SortOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  if (adaptor.getOperands().empty())
    return emitOptionalError(loc, "expected at least one operand (the keys)");
  RankedTensorType keys = tensorOf(adaptor.getOperands()[0]);
  int64_t dim = adaptor.getDim();
  if (dim < 0 || dim >= keys.getRank())
    return emitOptionalError(loc, "dim ", dim, " is out of range for ", keys);
  for (Value v : adaptor.getOperands()) {
    RankedTensorType t = tensorOf(v);
    if (t.getShape() != keys.getShape())
      return emitOptionalError(loc, "every operand must have the keys' shape: ", t, " and ", keys);
    results.push_back(t);
  }
  return success();
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType x = tensorOf(adaptor.getOperand());
  int64_t k = adaptor.getK();
  if (x.getRank() == 0)
    return emitOptionalError(loc, "expected an operand of rank 1 or more, got ", x);
  int64_t n = x.getShape().back();
  if (k < 0 || (!ShapedType::isDynamic(n) && k > n))
    return emitOptionalError(loc, "k = ", k, " is not in [0, ", n, "] (the last dimension of ", x, ")");
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = k;
  if (failed(pushTensor(loc, shape, x.getElementType(), results)) ||
      failed(pushTensor(loc, shape, IntegerType::get(ctx, 32), results)))
    return failure();
  return success();
}

LogicalResult DotGeneralOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType lt = tensorOf(adaptor.getLhs()), rt = tensorOf(adaptor.getRhs());
  ArrayRef<int64_t> lb = adaptor.getLhsBatchingDims(), rb = adaptor.getRhsBatchingDims();
  ArrayRef<int64_t> lc = adaptor.getLhsContractingDims(), rc = adaptor.getRhsContractingDims();
  if (lb.size() != rb.size())
    return emitOptionalError(loc, "lhs and rhs have different numbers of batch dimensions (",
                             lb.size(), " and ", rb.size(), ")");
  if (lc.size() != rc.size())
    return emitOptionalError(loc, "lhs and rhs have different numbers of contracting dimensions (",
                             lc.size(), " and ", rc.size(), ")");
  // each operand: its batch and contracting dimensions in range and distinct
  for (auto [side, type, batch, contract] :
       {std::tuple{"lhs", lt, lb, lc}, std::tuple{"rhs", rt, rb, rc}}) {
    SmallVector<int64_t> both(batch);
    both.append(contract.begin(), contract.end());
    if (failed(checkDimList(loc, (Twine(side) + " batch and contracting dimensions").str(), both,
                            type.getRank(), false)))
      return failure();
  }
  ArrayRef<int64_t> l = lt.getShape(), r = rt.getShape();
  for (auto [what, ld, rd] : {std::tuple{"batch", lb, rb}, std::tuple{"contracting", lc, rc}})
    for (auto [a, b] : llvm::zip(ld, rd))
      if (l[a] != r[b])
        return emitOptionalError(loc, what, " dimensions differ in size: lhs dimension ", a,
                                 " has ", l[a], ", rhs dimension ", b, " has ", r[b], " (",
                                 lt, " and ", rt, ")");
  SmallVector<int64_t> shape;
  for (int64_t d : lb)
    shape.push_back(l[d]);
  for (auto [type, batch, contract] : {std::tuple{lt, lb, lc}, std::tuple{rt, rb, rc}})
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!llvm::is_contained(batch, d) && !llvm::is_contained(contract, d))
        shape.push_back(type.getDimSize(d));
  return pushTensor(loc, shape, lt.getElementType(), results);
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> transposePermutation(std::optional<ArrayRef<int64_t>> perm,
                                                 int64_t rank) {
  if (perm)
    return llvm::to_vector(*perm);
  SmallVector<int64_t> p;
  for (int64_t i = rank - 1; i >= 0; --i)
    p.push_back(i);
  return p;
}

SmallVector<int64_t> TransposeOp::getPermutation() {
  return transposePermutation(getPerm(), getType().getRank());
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  SmallVector<int64_t> perm = transposePermutation(adaptor.getPerm(), t.getRank());
  if ((int64_t)perm.size() != t.getRank())
    return emitOptionalError(loc, "permutation ", shapeStr(perm), " has ", perm.size(),
                             " entries but the operand has rank ", t.getRank());
  if (failed(checkDims(loc, "permutation entry", perm, t.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  return pushTensor(loc, shape, t.getElementType(), results);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  SmallVector<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getOperand();
  // transpose(transpose(x, p), q) == x when p[q[i]] == i for all i.
  if (auto inner = getOperand().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> p = inner.getPermutation();
    bool identity = true;
    for (auto [i, q] : llvm::enumerate(perm))
      identity &= p[q] == (int64_t)i;
    if (identity)
      return inner.getOperand();
  }
  return {};
}

LogicalResult ReverseOp::verify() {
  return checkDims(getLoc(), "reversed dimension", getDims(), getType().getRank());
}

OpFoldResult ReverseOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> shape = getType().getShape();
  if (llvm::all_of(getDims(), [&](int64_t d) { return shape[d] == 1; }))
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<ReverseOp>()) {
    SmallVector<int64_t> a(getDims()), b(inner.getDims());
    llvm::sort(a);
    llvm::sort(b);
    if (a == b)
      return inner.getOperand();
  }
  if (auto attr = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    if (attr.isSplat())
      return attr;
  return {};
}

LogicalResult ConcatenateOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ValueRange operands = adaptor.getOperands();
  if (operands.empty())
    return emitOptionalError(loc, "expected at least one operand");
  if (failed(checkTensorOperands(loc, operands)))
    return failure();
  RankedTensorType first = tensorOf(operands.front());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range for operands of rank ",
                             first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, v] : llvm::enumerate(operands.drop_front())) {
    RankedTensorType t = tensorOf(v);
    if (t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "operand ", i + 1, " has element type ",
                               t.getElementType(), " but operand 0 has ",
                               first.getElementType());
    if (t.getRank() != first.getRank())
      return emitOptionalError(loc, "operand ", i + 1, " has rank ", t.getRank(),
                               " but operand 0 has rank ", first.getRank());
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (d == axis)
        continue;
      if (t.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(loc, "operand ", i + 1, " has shape ",
                                 shapeStr(t.getShape()), " but operand 0 has ",
                                 shapeStr(first.getShape()),
                                 " (sizes must agree except along axis ", axis, ")");
    }
    // A dynamic size along the axis makes the result's dynamic.
    int64_t size = t.getDimSize(axis);
    if (ShapedType::isDynamic(shape[axis]) || ShapedType::isDynamic(size)) {
      shape[axis] = ShapedType::kDynamic;
      continue;
    }
    std::optional<int64_t> sum = llvm::checkedAdd(shape[axis], size);
    if (!sum)
      return emitOptionalError(loc, "the concatenated size along axis ", axis,
                               " overflows a 64-bit integer");
    shape[axis] = *sum;
  }
  return pushTensor(loc, shape, first.getElementType(), results);
}

OpFoldResult ConcatenateOp::fold(FoldAdaptor) {
  if (getOperands().size() == 1)
    return getOperands().front();
  return {};
}

static SmallVector<int64_t> stridesOrOnes(std::optional<ArrayRef<int64_t>> strides,
                                          size_t rank) {
  if (strides)
    return llvm::to_vector(*strides);
  return SmallVector<int64_t>(rank, 1);
}

SmallVector<int64_t> SliceOp::getStrideValues() {
  return stridesOrOnes(getStrides(), getOffsets().size());
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes();
  SmallVector<int64_t> strides = stridesOrOnes(adaptor.getStrides(), t.getRank());
  int64_t rank = t.getRank();
  if ((int64_t)offsets.size() != rank || (int64_t)sizes.size() != rank ||
      (int64_t)strides.size() != rank)
    return emitOptionalError(loc, "expected ", rank,
                             " offsets, sizes and strides (one per dimension), got ",
                             offsets.size(), ", ", sizes.size(), " and ", strides.size());
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] <= 0 || sizes[d] < 0 || offsets[d] < 0)
      return emitOptionalError(loc, "dimension ", d,
                               ": offsets and sizes must be non-negative and strides positive");
    int64_t n = t.getDimSize(d);
    if (ShapedType::isDynamic(n))
      return emitOptionalError(loc, "dimension ", d,
                               " of the operand is dynamic: the slice cannot be checked "
                               "to be in bounds");
    if (sizes[d] == 0) {
      if (offsets[d] > n)
        return emitOptionalError(loc, "dimension ", d, ": offset ", offsets[d],
                                 " is past the end of the operand's size ", n);
      continue;
    }
    // The last index read, offset + (size - 1) * stride, must be < n.
    std::optional<int64_t> last =
        llvm::checkedMulAdd(sizes[d] - 1, strides[d], offsets[d]);
    if (!last || *last >= n)
      return emitOptionalError(loc, "dimension ", d, ": the slice reads index ",
                               last ? std::to_string(*last) : std::string("> 2^63 - 1"),
                               " but the operand's size is ", n);
  }
  return pushTensor(loc, sizes, t.getElementType(), results);
}

//===----------------------------------------------------------------------===//
// pad
//===----------------------------------------------------------------------===//

/// The result size of padding `n` elements, or nullopt on int64 overflow.
static std::optional<int64_t> paddedSize(int64_t n, int64_t low, int64_t high, int64_t interior) {
  std::optional<int64_t> gaps = n > 0 ? llvm::checkedMul(n - 1, interior) : 0;
  if (!gaps)
    return std::nullopt;
  std::optional<int64_t> size = llvm::checkedAdd(*gaps, n);
  if (size)
    size = llvm::checkedAdd(*size, low);
  if (size)
    size = llvm::checkedAdd(*size, high);
  return size;
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  if (tensorOf(adaptor.getValue()).getRank() != 0)
    return emitOptionalError(loc, "the padding value must be a rank-0 tensor, got ",
                             adaptor.getValue().getType());
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh(),
                    interior = adaptor.getInterior();
  int64_t rank = t.getRank();
  if ((int64_t)low.size() != rank || (int64_t)high.size() != rank ||
      (int64_t)interior.size() != rank)
    return emitOptionalError(loc, "expected ", rank,
                             " low, high and interior paddings (one per dimension), got ",
                             low.size(), ", ", high.size(), " and ", interior.size());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = t.getDimSize(d);
    if (ShapedType::isDynamic(n))
      return emitOptionalError(loc, "dimension ", d, " of the operand is dynamic");
    if (interior[d] < 0)
      return emitOptionalError(loc, "dimension ", d, ": interior padding ", interior[d],
                               " is negative");
    std::optional<int64_t> size = paddedSize(n, low[d], high[d], interior[d]);
    if (!size || *size >= (int64_t{1} << 62))
      return emitOptionalError(loc, "dimension ", d, ": the padded size does not fit in 62 bits");
    if (*size < 0)
      return emitOptionalError(loc, "dimension ", d, ": the padded size ", *size,
                               " is negative (more is cropped than there is)");
    shape.push_back(*size);
  }
  return pushTensor(loc, shape, t.getElementType(), results);
}

PadOp::Kept PadOp::kept(int64_t d) {
  int64_t n = getOperand().getType().getDimSize(d), out = getType().getDimSize(d);
  int64_t low = getLow()[d], step = getInterior()[d] + 1;
  // element i lands at low + i * step; keep those in [0, out)
  int64_t first = low >= 0 ? 0 : (-low + step - 1) / step;
  int64_t last = out - 1 - low < 0 ? -1 : std::min(n - 1, (out - 1 - low) / step);
  int64_t count = std::max<int64_t>(last - first + 1, 0);
  return {first, count, low + first * step};
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  auto zero = [](int64_t v) { return v == 0; };
  if (llvm::all_of(getLow(), zero) && llvm::all_of(getHigh(), zero) &&
      llvm::all_of(getInterior(), zero))
    return getOperand();
  return {};
}

//===----------------------------------------------------------------------===//
// dynamic_slice, dynamic_update_slice, iota, argmax, argmin
//===----------------------------------------------------------------------===//

/// One rank-0 integer tensor per dimension of `t`.
static LogicalResult checkStartIndices(std::optional<Location> loc, RankedTensorType t,
                                       ValueRange indices) {
  if ((int64_t)indices.size() != t.getRank())
    return emitOptionalError(loc, "expected ", t.getRank(),
                             " start indices (one per dimension), got ", indices.size());
  for (auto [i, v] : llvm::enumerate(indices)) {
    auto index = dyn_cast<RankedTensorType>(v.getType());
    if (!index || index.getRank() != 0 || !isa<IntegerType>(index.getElementType()))
      return emitOptionalError(loc, "start index #", i,
                               " must be a rank-0 integer tensor, got ", v.getType());
  }
  return success();
}

LogicalResult DynamicSliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  if (failed(checkStartIndices(loc, t, adaptor.getStartIndices())))
    return failure();
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if ((int64_t)sizes.size() != t.getRank())
    return emitOptionalError(loc, "expected ", t.getRank(), " sizes (one per dimension), got ",
                             sizes.size());
  for (auto [d, size] : llvm::enumerate(sizes)) {
    int64_t n = t.getDimSize(d);
    if (size < 0 || (!ShapedType::isDynamic(n) && size > n))
      return emitOptionalError(loc, "dimension ", d, ": size ", size,
                               " must be between 0 and the operand's size ", n);
    if (ShapedType::isDynamic(n))
      return emitOptionalError(loc, "dimension ", d,
                               " of the operand is dynamic: the window cannot be clamped");
  }
  return pushTensor(loc, sizes, t.getElementType(), results);
}

OpFoldResult DynamicSliceOp::fold(FoldAdaptor) {
  // the whole operand: every start clamps to 0
  return getType() == getOperand().getType() ? OpFoldResult(getOperand()) : OpFoldResult();
}

LogicalResult DynamicUpdateSliceOp::verify() {
  RankedTensorType t = getOperand().getType(), u = getUpdate().getType();
  if (failed(checkStartIndices(getLoc(), t, getStartIndices())))
    return failure();
  if (u.getRank() != t.getRank())
    return emitOpError("the update has rank ") << u.getRank() << ", the operand "
                                               << t.getRank();
  for (int64_t d = 0; d < t.getRank(); ++d) {
    if (t.isDynamicDim(d) || u.isDynamicDim(d))
      return emitOpError("dimension ") << d << " is dynamic: the window cannot be clamped";
    if (u.getDimSize(d) > t.getDimSize(d))
      return emitOpError("dimension ") << d << ": the update's size " << u.getDimSize(d)
                                       << " exceeds the operand's " << t.getDimSize(d);
  }
  return success();
}

OpFoldResult DynamicUpdateSliceOp::fold(FoldAdaptor) {
  // an update of the whole operand replaces it
  return getUpdate().getType() == getType() ? OpFoldResult(getUpdate()) : OpFoldResult();
}

/// The batch shape of gather/scatter indices (their shape without
/// `index_vector_dim`) and the length of a start vector; checks the indices.
static FailureOr<std::pair<SmallVector<int64_t>, int64_t>>
indexBatches(std::optional<Location> loc, RankedTensorType indices, int64_t indexVectorDim) {
  int64_t rank = indices.getRank();
  if (indexVectorDim < 0 || indexVectorDim > rank)
    return emitOptionalError(loc, "index_vector_dim ", indexVectorDim, " is not in [0, ", rank, "]");
  if (!indices.hasStaticShape())
    return emitOptionalError(loc, "the indices must have a static shape, got ", indices);
  SmallVector<int64_t> batch(indices.getShape());
  int64_t length = 1;
  if (indexVectorDim < rank) {
    length = batch[indexVectorDim];
    batch.erase(batch.begin() + indexVectorDim);
  }
  return std::make_pair(batch, length);
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType operand = tensorOf(adaptor.getOperand());
  auto batches = indexBatches(loc, tensorOf(adaptor.getIndices()), adaptor.getIndexVectorDim());
  if (failed(batches))
    return failure();
  auto [batch, length] = *batches;
  int64_t rank = operand.getRank();
  ArrayRef<int64_t> offsetDims = adaptor.getOffsetDims(), collapsed = adaptor.getCollapsedSliceDims(),
                    startMap = adaptor.getStartIndexMap(), sizes = adaptor.getSliceSizes();
  if (!operand.hasStaticShape())
    return emitOptionalError(loc, "the operand must have a static shape, got ", operand);
  if ((int64_t)sizes.size() != rank)
    return emitOptionalError(loc, "expected ", rank, " slice_sizes (one per operand dimension), got ",
                             sizes.size());
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] < 0 || sizes[d] > operand.getDimSize(d))
      return emitOptionalError(loc, "slice_sizes[", d, "] = ", sizes[d],
                               " must be between 0 and the operand's size ", operand.getDimSize(d));
  if (failed(checkDimList(loc, "collapsed_slice_dims", collapsed, rank, true)) ||
      failed(checkDimList(loc, "start_index_map", startMap, rank, false)))
    return failure();
  for (int64_t d : collapsed)
    if (sizes[d] > 1)
      return emitOptionalError(loc, "collapsed dimension ", d, " has slice size ", sizes[d],
                               ", expected at most 1");
  if ((int64_t)startMap.size() != length)
    return emitOptionalError(loc, "start_index_map has ", startMap.size(),
                             " entries but the start vectors have ", length);
  int64_t windows = rank - (int64_t)collapsed.size();
  if ((int64_t)offsetDims.size() != windows)
    return emitOptionalError(loc, "expected ", windows, " offset_dims (the uncollapsed operand dimensions), got ",
                             offsetDims.size());
  int64_t outRank = (int64_t)batch.size() + windows;
  if (failed(checkDimList(loc, "offset_dims", offsetDims, outRank, true)))
    return failure();
  SmallVector<int64_t> shape;
  auto window = llvm::make_filter_range(llvm::seq<int64_t>(0, rank),
                                        [&](int64_t d) { return !llvm::is_contained(collapsed, d); });
  auto nextWindow = window.begin();
  auto nextBatch = batch.begin();
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(llvm::is_contained(offsetDims, i) ? sizes[*nextWindow++] : *nextBatch++);
  return pushTensor(loc, shape, operand.getElementType(), results);
}

LogicalResult ScatterOp::verify() {
  RankedTensorType operand = getOperand().getType(), updates = getUpdates().getType();
  std::optional<Location> loc = getLoc();
  auto batches = indexBatches(loc, getIndices().getType(), getIndexVectorDim());
  if (failed(batches))
    return failure();
  auto [batch, length] = *batches;
  int64_t rank = operand.getRank();
  ArrayRef<int64_t> windowDims = getUpdateWindowDims(), inserted = getInsertedWindowDims(),
                    toOperand = getScatterDimsToOperandDims();
  if (!operand.hasStaticShape() || !updates.hasStaticShape())
    return emitOpError("the operand and the updates must have static shapes");
  if (failed(checkDimList(loc, "update_window_dims", windowDims, updates.getRank(), true)) ||
      failed(checkDimList(loc, "inserted_window_dims", inserted, rank, true)) ||
      failed(checkDimList(loc, "scatter_dims_to_operand_dims", toOperand, rank, false)))
    return failure();
  if ((int64_t)(windowDims.size() + inserted.size()) != rank)
    return emitOpError("update_window_dims and inserted_window_dims must together have ")
           << rank << " entries (the operand's rank), got " << windowDims.size() << " and "
           << inserted.size();
  if ((int64_t)toOperand.size() != length)
    return emitOpError("scatter_dims_to_operand_dims has ")
           << toOperand.size() << " entries but the start vectors have " << length;
  // the window: the operand's dimensions but the inserted ones, in order
  auto window = llvm::make_filter_range(llvm::seq<int64_t>(0, rank),
                                        [&](int64_t d) { return !llvm::is_contained(inserted, d); });
  auto operandDim = window.begin();
  SmallVector<int64_t> scatterShape;
  for (int64_t i = 0; i < updates.getRank(); ++i) {
    int64_t size = updates.getDimSize(i);
    if (!llvm::is_contained(windowDims, i)) {
      scatterShape.push_back(size);
      continue;
    }
    int64_t d = *operandDim++;
    if (size > operand.getDimSize(d))
      return emitOpError("update window dimension ")
             << i << " has size " << size << ", more than operand dimension " << d << "'s "
             << operand.getDimSize(d);
  }
  if (ArrayRef<int64_t>(scatterShape) != ArrayRef<int64_t>(batch))
    return emitOpError("the update dimensions outside the window [")
           << llvm::make_range(scatterShape.begin(), scatterShape.end())
           << "] must be those of the indices without index_vector_dim ["
           << llvm::make_range(batch.begin(), batch.end()) << "]";
  return success();
}

LogicalResult IotaOp::verify() {
  auto t = cast<RankedTensorType>(getType());
  if (!t.hasStaticShape())
    return emitOpError("the result must have a static shape, got ") << t;
  if (getDim() < 0 || getDim() >= t.getRank())
    return emitOpError("dim ") << getDim() << " is not a dimension of " << t;
  return success();
}

/// The result of argmax/argmin: the operand's shape without `axis`.
template <typename OpT>
static LogicalResult verifyArgExtremum(OpT op) {
  auto t = cast<RankedTensorType>(op.getOperand().getType());
  auto r = cast<RankedTensorType>(op.getType());
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= t.getRank())
    return op.emitOpError("axis ") << axis << " is not a dimension of " << t;
  SmallVector<int64_t> shape(t.getShape());
  shape.erase(shape.begin() + axis);
  if (r.getShape() != ArrayRef<int64_t>(shape))
    return op.emitOpError("expected a result of shape [")
           << llvm::make_range(shape.begin(), shape.end()) << "], got " << r;
  if (r.getElementType().isInteger(1))
    return op.emitOpError("the result must be an integer type wider than i1");
  // As numpy and JAX, which raise: no position is the extremum of no elements.
  // (a dynamic result dimension may be 0: only a static shape's count is known)
  if (t.getDimSize(axis) == 0 && r.hasStaticShape() && r.getNumElements() > 0)
    return op.emitOpError("axis ") << axis << " is empty: there is no position of an extremum of "
                                   << t;
  return success();
}
LogicalResult ArgMaxOp::verify() { return verifyArgExtremum(*this); }
LogicalResult ArgMinOp::verify() { return verifyArgExtremum(*this); }

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getType() == getOperand().getType())
    return getOperand();
  if (auto attr = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    if (attr.isSplat())
      return attr.resizeSplat(getType());
  return {};
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  ArrayRef<int64_t> shape = adaptor.getShape();
  if (failed(checkShape(loc, "target shape", shape)))
    return failure();
  if (!t.hasStaticShape())
    return emitOptionalError(loc, "cannot reshape the dynamically shaped ", t,
                             ": its element count is unknown");
  std::optional<int64_t> have = elementCount(t.getShape());
  if (!have)
    return emitOptionalError(loc, "the operand ", t,
                             " has more elements than fit in a 64-bit integer");
  int64_t n = *elementCount(shape);
  if (n != *have)
    return emitOptionalError(loc, "cannot reshape ", t, " (", *have,
                             " elements) to ", shapeStr(shape), " (", n, " elements)");
  return pushTensor(loc, shape, t.getElementType(), results);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getType() == getOperand().getType())
    return getOperand();
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  if (auto attr = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    return attr.reshape(getType());
  return {};
}

LogicalResult PadShapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  int64_t dim = adaptor.getDim();
  if (dim < 0 || dim > t.getRank())
    return emitOptionalError(loc, "cannot insert a unit dimension at ", dim,
                             " into a tensor of rank ", t.getRank(),
                             " (expected 0 to ", t.getRank(), ")");
  SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + dim, 1);
  return pushTensor(loc, shape, t.getElementType(), results);
}

OpFoldResult PadShapeOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getOperand().getDefiningOp<SqueezeShapeOp>())
    if (inner.getDim() == getDim())
      return inner.getOperand();
  if (auto attr = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    return attr.reshape(getType());
  return {};
}

LogicalResult SqueezeShapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  int64_t dim = adaptor.getDim();
  if (dim < 0 || dim >= t.getRank())
    return emitOptionalError(loc, "dimension ", dim, " is out of range for a tensor of rank ",
                             t.getRank());
  if (t.getDimSize(dim) != 1)
    return emitOptionalError(loc, "dimension ", dim, " has size ", dimStr(t.getDimSize(dim)),
                             "; only a unit dimension can be squeezed");
  SmallVector<int64_t> shape(t.getShape());
  shape.erase(shape.begin() + dim);
  return pushTensor(loc, shape, t.getElementType(), results);
}

OpFoldResult SqueezeShapeOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getOperand().getDefiningOp<PadShapeOp>())
    if (inner.getDim() == getDim())
      return inner.getOperand();
  if (auto attr = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    return attr.reshape(getType());
  return {};
}

LogicalResult BroadcastToOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  ArrayRef<int64_t> shape = adaptor.getShape();
  if (failed(checkShape(loc, "target shape", shape)))
    return failure();
  FailureOr<SmallVector<int64_t>> b = broadcastShapes(t.getShape(), shape);
  if (failed(b) || ArrayRef<int64_t>(*b) != shape)
    return emitOptionalError(loc, "cannot broadcast ", t, " to ", shapeStr(shape),
                             " (expected a rank-0 operand, or equal ranks with each "
                             "operand dimension 1 or equal to the target's)");
  return pushTensor(loc, shape, t.getElementType(), results);
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getType() == getOperand().getType())
    return getOperand();
  if (auto attr = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand()))
    if (attr.isSplat())
      return attr.resizeSplat(getType());
  return {};
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Checks that `kind` applies to `elementType`.
static LogicalResult checkKind(std::optional<Location> loc, ReductionKind kind,
                               Type elementType, bool allowMean) {
  bool isFloat = isa<FloatType>(elementType);
  if ((kind == ReductionKind::and_ || kind == ReductionKind::or_) && isFloat)
    return emitOptionalError(loc, "'", stringifyReductionKind(kind),
                             "' needs integer or i1 elements, got ", elementType);
  if (kind == ReductionKind::mean && !allowMean)
    return emitOptionalError(loc, "'mean' is not a valid combinator here");
  if (kind == ReductionKind::mean && !isFloat)
    return emitOptionalError(loc, "'mean' needs float elements, got ", elementType);
  return success();
}

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  if (failed(checkKind(loc, adaptor.getKind(), t.getElementType(), true)) ||
      failed(checkDims(loc, "reduced dimension", adaptor.getDims(), t.getRank())))
    return failure();
  if (Value init = adaptor.getInit()) {
    RankedTensorType it = tensorOf(init);
    if (it.getRank() != 0 || it.getElementType() != t.getElementType())
      return emitOptionalError(loc, "init must be a rank-0 tensor of ", t.getElementType(),
                               ", got ", it);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < t.getRank(); ++d)
    if (!llvm::is_contained(adaptor.getDims(), d))
      shape.push_back(t.getDimSize(d));
  return pushTensor(loc, shape, t.getElementType(), results);
}

OpFoldResult ReduceOp::fold(FoldAdaptor) {
  if (getDims().empty() && !getInit())
    return getOperand();
  return {};
}

LogicalResult ScanOp::verify() {
  if (failed(checkKind(getLoc(), getKind(), getType().getElementType(), false)))
    return failure();
  if ((int64_t)getDim() >= getType().getRank())
    return emitOpError() << "dimension " << getDim()
                         << " is out of range for an operand of rank " << getType().getRank();
  return success();
}

static SmallVector<int64_t> valuesOrOnes(std::optional<ArrayRef<int64_t>> values, int64_t rank) {
  return values ? SmallVector<int64_t>(*values) : SmallVector<int64_t>(rank, 1);
}

SmallVector<int64_t> ReduceWindowOp::getWindowDilationValues() {
  return valuesOrOnes(getWindowDilation(), getType().getRank());
}

SmallVector<int64_t> ReduceWindowOp::getBaseDilationValues() {
  return valuesOrOnes(getBaseDilation(), getType().getRank());
}

SmallVector<int64_t> ReduceWindowOp::getLowPadding() {
  if (std::optional<ArrayRef<int64_t>> low = getLow())
    return SmallVector<int64_t>(*low);
  ArrayRef<int64_t> in = getOperand().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  SmallVector<int64_t> wd = getWindowDilationValues(), bd = getBaseDilationValues();
  SmallVector<int64_t> low;
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t w = (getWindow()[d] - 1) * wd[d] + 1, s = getStrides()[d];
    int64_t n = in[d] > 0 ? (in[d] - 1) * bd[d] + 1 : 0;
    int64_t total = std::max<int64_t>((out[d] - 1) * s + w - n, 0);
    low.push_back(getPadding() == Padding::full ? w - 1 : total / 2);
  }
  return low;
}

LogicalResult ReduceWindowOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  if (failed(checkKind(loc, adaptor.getKind(), t.getElementType(), true)))
    return failure();
  int64_t rank = t.getRank();
  ArrayRef<int64_t> window = adaptor.getWindow(), strides = adaptor.getStrides();
  if ((int64_t)window.size() != rank || (int64_t)strides.size() != rank)
    return emitOptionalError(loc, "expected ", rank,
                             " window sizes and strides (one per dimension), got ",
                             window.size(), " and ", strides.size());
  Padding padding = adaptor.getPadding();
  std::optional<ArrayRef<int64_t>> low = adaptor.getLow(), high = adaptor.getHigh();
  if (low.has_value() != high.has_value())
    return emitOptionalError(loc, "explicit padding needs both low and high");
  if (low && padding != Padding::none)
    return emitOptionalError(loc, "explicit low/high padding goes with 'padding none'");
  for (auto [name, values] : {std::pair{"low", low}, std::pair{"high", high},
                              std::pair{"window_dilation", adaptor.getWindowDilation()},
                              std::pair{"base_dilation", adaptor.getBaseDilation()}}) {
    if (!values)
      continue;
    if ((int64_t)values->size() != rank)
      return emitOptionalError(loc, "expected ", rank, " ", name, " values (one per dimension), got ",
                               values->size());
    bool dilation = name[0] != 'l' && name[0] != 'h';
    for (int64_t v : *values)
      if (v < (dilation ? 1 : 0) || v > (int64_t{1} << 40))
        return emitOptionalError(loc, name, " values must be ", dilation ? "positive" : "non-negative",
                                 " and at most 2^40, got ", v);
  }
  SmallVector<int64_t> wd = valuesOrOnes(adaptor.getWindowDilation(), rank);
  SmallVector<int64_t> bd = valuesOrOnes(adaptor.getBaseDilation(), rank);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = t.getDimSize(d), s = strides[d];
    if (window[d] <= 0 || s <= 0)
      return emitOptionalError(loc, "window sizes and strides must be positive");
    std::optional<int64_t> dilatedWindow = llvm::checkedMulAdd<int64_t>(window[d] - 1, wd[d], 1);
    if (!dilatedWindow)
      return emitOptionalError(loc, "dimension ", d, ": the dilated window overflows a 64-bit size");
    int64_t w = *dilatedWindow;
    if (ShapedType::isDynamic(n)) {
      // half and full give an output for any input size: it stays dynamic;
      // none needs the window to fit, which cannot be checked.
      if (padding == Padding::none)
        return emitOptionalError(loc, "dimension ", d, " is dynamic: a window of ", window[d],
                                 " cannot be checked to fit with padding none");
      if (bd[d] != 1)
        return emitOptionalError(loc, "dimension ", d, " is dynamic: base dilation needs a static size");
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    // the dilated and padded extent must stay well within int64
    std::optional<int64_t> dilated = n > 0 ? llvm::checkedMulAdd<int64_t>(n - 1, bd[d], 1) : 0;
    std::optional<int64_t> padded =
        dilated ? llvm::checkedMulAdd<int64_t>(2, w - 1, *dilated) : std::nullopt;
    if (padded && low)
      padded = llvm::checkedAdd(*dilated, (*low)[d] + (*high)[d]);
    if (!padded || *padded >= (int64_t{1} << 62))
      return emitOptionalError(loc, "dimension ", d, ": the window size ", window[d],
                               " overflows a 64-bit size when padded");
    int64_t o;
    if (low) {
      if (w > *padded)
        return emitOptionalError(loc, "dimension ", d, ": the window (", w, " with dilation) exceeds the ",
                                 "padded size ", *padded);
      o = (*padded - w) / s + 1;
    } else {
      switch (padding) {
      case Padding::none:
        if (w > *dilated)
          return emitOptionalError(loc, "window size ", window[d], " exceeds dimension ", d,
                                   " of size ", n, " with padding none");
        o = (*dilated - w) / s + 1;
        break;
      case Padding::half: // ceil(n / s)
        o = *dilated / s + (*dilated % s != 0);
        break;
      case Padding::full: // floor((n + w - 2) / s) + 1: no window for n = 0, w = 1
        o = *dilated + w - 2 < 0 ? 0 : (*dilated + w - 2) / s + 1;
        break;
      }
    }
    shape.push_back(o);
  }
  return pushTensor(loc, shape, t.getElementType(), results);
}

template <typename OpT>
static LogicalResult verifyAxis(OpT op) {
  if ((int64_t)op.getAxis() >= op.getType().getRank())
    return op.emitOpError() << "axis " << op.getAxis()
                            << " is out of range for an operand of rank "
                            << op.getType().getRank();
  return success();
}
LogicalResult SoftmaxOp::verify() { return verifyAxis(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifyAxis(*this); }

//===----------------------------------------------------------------------===//
// convolve
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> valuesOr(std::optional<ArrayRef<int64_t>> v, size_t n,
                                     int64_t fill) {
  if (v)
    return llvm::to_vector(*v);
  return SmallVector<int64_t>(n, fill);
}

SmallVector<int64_t> ConvolveOp::getStrideValues() {
  return valuesOr(getStrides(), getNumSpatialDims(), 1);
}
SmallVector<int64_t> ConvolveOp::getPaddingValues() {
  return valuesOr(getPadding(), 2 * getNumSpatialDims(), 0);
}
SmallVector<int64_t> ConvolveOp::getLhsDilationValues() {
  return valuesOr(getLhsDilation(), getNumSpatialDims(), 1);
}
SmallVector<int64_t> ConvolveOp::getRhsDilationValues() {
  return valuesOr(getRhsDilation(), getNumSpatialDims(), 1);
}

/// The size of `size` elements with `dilation - 1` holes between neighbours
/// (0 for no elements, as XLA and the lowering), or nullopt on overflow.
static std::optional<int64_t> dilatedSize(int64_t size, int64_t dilation) {
  if (size == 0)
    return 0;
  return llvm::checkedMulAdd<int64_t>(size - 1, dilation, 1);
}

LogicalResult ConvolveOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType in = tensorOf(adaptor.getInput()), k = tensorOf(adaptor.getKernel());
  if (in.getRank() < 3 || in.getRank() != k.getRank())
    return emitOptionalError(loc, "expected input (N x C x spatial...) and kernel "
                                  "(O x C/groups x window...) of equal rank >= 3, got ",
                             in, " and ", k);
  size_t ns = in.getRank() - 2;
  SmallVector<int64_t> strides = valuesOr(adaptor.getStrides(), ns, 1);
  SmallVector<int64_t> padding = valuesOr(adaptor.getPadding(), 2 * ns, 0);
  SmallVector<int64_t> ld = valuesOr(adaptor.getLhsDilation(), ns, 1);
  SmallVector<int64_t> rd = valuesOr(adaptor.getRhsDilation(), ns, 1);
  if (strides.size() != ns || ld.size() != ns || rd.size() != ns)
    return emitOptionalError(loc, "expected ", ns,
                             " strides and dilations (one per spatial dimension)");
  if (padding.size() != 2 * ns)
    return emitOptionalError(loc, "expected ", 2 * ns,
                             " padding values (low and high per spatial dimension), got ",
                             padding.size());
  int64_t groups = adaptor.getGroups();
  if (groups <= 0)
    return emitOptionalError(loc, "groups must be positive, got ", groups);
  // Only the batch size may be dynamic (it passes through to the result).
  for (int64_t d = 1; d < in.getRank(); ++d)
    if (in.isDynamicDim(d) || k.isDynamicDim(d) || k.isDynamicDim(0))
      return emitOptionalError(loc, "only the batch dimension may be dynamic, got ", in,
                               " and ", k);
  int64_t c = in.getDimSize(1), o = k.getDimSize(0);
  std::optional<int64_t> kc = llvm::checkedMul(k.getDimSize(1), groups);
  if (c % groups != 0 || o % groups != 0 || !kc || *kc != c)
    return emitOptionalError(loc, "channel mismatch: input has ", c,
                             " channels, kernel expects ", k.getDimSize(1), " x ", groups,
                             " group(s) with ", o, " output channels (both divisible by groups)");
  SmallVector<int64_t> shape = {in.getDimSize(0), o};
  for (size_t i = 0; i < ns; ++i) {
    if (strides[i] <= 0 || ld[i] <= 0 || rd[i] <= 0)
      return emitOptionalError(loc, "strides and dilations must be positive");
    int64_t lo = padding[2 * i], hi = padding[2 * i + 1];
    // The dilated input grown by the positive padding (what the lowering
    // materializes), then cropped by the negative padding.
    std::optional<int64_t> grown = dilatedSize(in.getDimSize(i + 2), ld[i]);
    if (grown)
      grown = llvm::checkedAdd(*grown, std::max<int64_t>(lo, 0));
    if (grown)
      grown = llvm::checkedAdd(*grown, std::max<int64_t>(hi, 0));
    std::optional<int64_t> w = dilatedSize(k.getDimSize(i + 2), rd[i]);
    if (!grown || !w)
      return emitOptionalError(loc, "spatial dimension ", i,
                               ": the padded, dilated input or the dilated window "
                               "overflows a 64-bit size");
    std::optional<int64_t> n = llvm::checkedAdd(*grown, std::min<int64_t>(lo, 0));
    if (n)
      n = llvm::checkedAdd(*n, std::min<int64_t>(hi, 0));
    if (!n || *w > *n)
      return emitOptionalError(loc, "spatial dimension ", i, ": the dilated window (", *w,
                               ") is larger than the padded, dilated input (",
                               n ? std::to_string(*n) : std::string("< -2^63"), ")");
    shape.push_back((*n - *w) / strides[i] + 1);
  }
  return pushTensor(loc, shape, in.getElementType(), results);
}

//===----------------------------------------------------------------------===//
// constant, cast, bitcast, random
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ConstantOp::verify() {
  if (!isa<RankedTensorType>(getValue().getType()))
    return emitOpError() << "expected a ranked tensor literal, got " << getValue().getType();
  return success();
}

LogicalResult CastOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())) ||
      failed(checkDtype(loc, adaptor.getDtype(), /*floatOnly=*/false)))
    return failure();
  return pushTensor(loc, tensorOf(adaptor.getOperand()).getShape(), adaptor.getDtype(),
                    results);
}

/// dlvm.cast of one float element: to float rounds to nearest even; to i1 is
/// `x != 0` (NaN is true); to another integer type truncates toward zero,
/// saturated to the type's signed range, NaN to 0 (XLA's convert, LLVM's
/// fptosi.sat).
static Attribute castFloat(APFloat v, Type to) {
  if (auto toF = dyn_cast<FloatType>(to)) {
    bool lost;
    (void)v.convert(toF.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return FloatAttr::get(to, v);
  }
  unsigned width = cast<IntegerType>(to).getWidth();
  if (width == 1)
    return IntegerAttr::get(to, APInt(1, !v.isZero()));
  if (v.isNaN())
    return IntegerAttr::get(to, APInt::getZero(width));
  APSInt r(width, /*isUnsigned=*/cast<IntegerType>(to).isUnsigned());
  bool exact;
  // APFloat saturates out-of-range values (status opInvalidOp).
  (void)v.convertToInteger(r, APFloat::rmTowardZero, &exact);
  return IntegerAttr::get(to, r);
}

/// dlvm.cast of one integer element: i1 is 0 or 1 (unsigned), other integers
/// are signed; to float rounds to nearest even, once, except to bf16, which
/// goes through f32 (two roundings, as compiled code, the interpreter and
/// XLA compute it); to a narrower integer wraps (keeps the low bits); to i1
/// is `x != 0`.
static Attribute castInt(const APInt &v, Type to, bool fromUnsigned) {
  bool isBool = v.getBitWidth() == 1;
  bool zeroExtends = isBool || fromUnsigned;
  if (auto toF = dyn_cast<FloatType>(to)) {
    const llvm::fltSemantics &sem =
        isa<BFloat16Type>(to) ? APFloat::IEEEsingle() : toF.getFloatSemantics();
    APFloat f(sem);
    (void)f.convertFromAPInt(v, /*IsSigned=*/!zeroExtends, APFloat::rmNearestTiesToEven);
    bool lost;
    (void)f.convert(toF.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return FloatAttr::get(to, f);
  }
  unsigned width = cast<IntegerType>(to).getWidth();
  if (width == 1)
    return IntegerAttr::get(to, APInt(1, !v.isZero()));
  return IntegerAttr::get(to, zeroExtends ? v.zextOrTrunc(width) : v.sextOrTrunc(width));
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getType() == getOperand().getType())
    return getOperand();
  auto attr = dyn_cast_or_null<DenseElementsAttr>(adaptor.getOperand());
  if (!attr)
    return {};
  auto type = getType();
  if (!attr.isSplat() && type.getNumElements() > kMaxFoldElements)
    return {};
  Type to = getDtype();
  SmallVector<Attribute> elements;
  if (isa<FloatType>(attr.getElementType())) {
    if (attr.isSplat())
      elements.push_back(castFloat(attr.getSplatValue<APFloat>(), to));
    else
      for (APFloat v : attr.getValues<APFloat>())
        elements.push_back(castFloat(v, to));
  } else {
    bool u = isUnsignedElement(attr.getElementType());
    if (attr.isSplat())
      elements.push_back(castInt(attr.getSplatValue<APInt>(), to, u));
    else
      for (APInt v : attr.getValues<APInt>())
        elements.push_back(castInt(v, to, u));
  }
  if (attr.isSplat())
    return DenseElementsAttr::get(type, elements.front());
  return DenseElementsAttr::get(type, elements);
}

LogicalResult BitcastOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &results) {
  if (failed(checkTensorOperands(loc, adaptor.getOperands())) ||
      failed(checkDtype(loc, adaptor.getDtype(), /*floatOnly=*/false)))
    return failure();
  RankedTensorType t = tensorOf(adaptor.getOperand());
  Type to = adaptor.getDtype();
  if (!t.getElementType().isIntOrFloat())
    return emitOptionalError(loc, "cannot bitcast elements of type ", t.getElementType());
  if (t.getElementTypeBitWidth() != to.getIntOrFloatBitWidth())
    return emitOptionalError(loc, "cannot bitcast ", t.getElementType(), " (",
                             t.getElementTypeBitWidth(), " bits) to ", to, " (",
                             to.getIntOrFloatBitWidth(), " bits): widths must match");
  return pushTensor(loc, t.getShape(), to, results);
}

OpFoldResult BitcastOp::fold(FoldAdaptor adaptor) {
  if (getType() == getOperand().getType())
    return getOperand();
  // Constants: the same bits with the new element type (widths match, the
  // verifier checked); i1 has no other type of its width.
  if (auto attr = dyn_cast_or_null<DenseIntOrFPElementsAttr>(adaptor.getOperand()))
    if (attr.getElementType().getIntOrFloatBitWidth() > 1)
      return attr.bitcast(getType().getElementType());
  if (auto inner = getOperand().getDefiningOp<BitcastOp>()) {
    if (inner.getOperand().getType() == getType())
      return inner.getOperand();
  }
  return {};
}

LogicalResult RandomOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ArrayRef<int64_t> shape = adaptor.getShape();
  if (failed(checkShape(loc, "shape", shape)) ||
      failed(checkDtype(loc, adaptor.getDtype(), /*floatOnly=*/true)))
    return failure();
  if (!(adaptor.getLow().convertToDouble() < adaptor.getHigh().convertToDouble()))
    return emitOptionalError(loc, "expected low < high, got ",
                             adaptor.getLow().convertToDouble(), " and ",
                             adaptor.getHigh().convertToDouble());
  return pushTensor(loc, shape, adaptor.getDtype(), results);
}
