//===- SpecialFunctions.cpp - lgamma and digamma as float formulas --------===//
//
// The scalar bodies of dlvm.lgamma and dlvm.digamma: branch-free f64
// formulas (series, Lanczos, reflection) rounded once to the element type.
// Used by the pointwise patterns (Pointwise.cpp).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlvm;

namespace mlir::dlvm::to_linalg {
namespace {

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

} // namespace

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

namespace {

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

} // namespace

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

} // namespace mlir::dlvm::to_linalg
