// RUN: dlvm-opt %s --canonicalize --split-input-file | FileCheck %s

// The folders compute the semantics the op descriptions state (and compiled code and
// the interpreter compute: test/python/test_semantics.py). See "Semantics decided" in
// docs/dialect-rationale.md.

// i1 is a boolean with false < true: lhs = [t, t, f, f], rhs = [t, f, t, f].
// CHECK-LABEL: func.func @bool_order
// CHECK-DAG: %[[LT:.*]] = dlvm.constant dense<[false, false, true, false]> : tensor<4xi1>
// CHECK-DAG: %[[LE:.*]] = dlvm.constant dense<[true, false, true, true]> : tensor<4xi1>
// CHECK-DAG: %[[GT:.*]] = dlvm.constant dense<[false, true, false, false]> : tensor<4xi1>
// CHECK-DAG: %[[GE:.*]] = dlvm.constant dense<[true, true, false, true]> : tensor<4xi1>
// CHECK-DAG: %[[EQ:.*]] = dlvm.constant dense<[true, false, false, true]> : tensor<4xi1>
// CHECK-DAG: %[[NE:.*]] = dlvm.constant dense<[false, true, true, false]> : tensor<4xi1>
// CHECK-DAG: %[[MAX:.*]] = dlvm.constant dense<[true, true, true, false]> : tensor<4xi1>
// CHECK-DAG: %[[MIN:.*]] = dlvm.constant dense<[true, false, false, false]> : tensor<4xi1>
// CHECK: return %[[LT]], %[[LE]], %[[GT]], %[[GE]], %[[EQ]], %[[NE]], %[[MIN]], %[[MAX]], %[[GE]], %[[GE]], %[[GT]]
func.func @bool_order() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %a = dlvm.constant dense<[true, true, false, false]> : tensor<4xi1>
  %b = dlvm.constant dense<[true, false, true, false]> : tensor<4xi1>
  %0 = dlvm.cmp lt, %a, %b : tensor<4xi1>, tensor<4xi1>
  %1 = dlvm.cmp le, %a, %b : tensor<4xi1>, tensor<4xi1>
  %2 = dlvm.cmp gt, %a, %b : tensor<4xi1>, tensor<4xi1>
  %3 = dlvm.cmp ge, %a, %b : tensor<4xi1>, tensor<4xi1>
  %4 = dlvm.cmp eq, %a, %b : tensor<4xi1>, tensor<4xi1>
  %5 = dlvm.cmp ne, %a, %b : tensor<4xi1>, tensor<4xi1>
  %6 = dlvm.min %a, %b : tensor<4xi1>, tensor<4xi1>
  %7 = dlvm.max %a, %b : tensor<4xi1>, tensor<4xi1>
  // i1 division: x / true = x, x / false = true (x | !y); mod: x & !y
  %8 = dlvm.div %a, %b : tensor<4xi1>, tensor<4xi1>
  %9 = dlvm.floor_div %a, %b : tensor<4xi1>, tensor<4xi1>
  %10 = dlvm.mod %a, %b : tensor<4xi1>, tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Integer division by zero and MIN / -1 (XLA): x / 0 = -1, x mod 0 = x, MIN / -1 = MIN,
// MIN mod -1 = 0; x = [7, -7, 0, MIN, MIN, 5, -7], y = [0, 0, 0, -1, 0, -1, 2].
// CHECK-LABEL: func.func @int_division
// CHECK-DAG: %[[Q:.*]] = dlvm.constant dense<[-1, -1, -1, -2147483648, -1, -5, -3]> : tensor<7xi32>
// CHECK-DAG: %[[F:.*]] = dlvm.constant dense<[-1, -1, -1, -2147483648, -1, -5, -4]> : tensor<7xi32>
// CHECK-DAG: %[[M:.*]] = dlvm.constant dense<[7, -7, 0, 0, -2147483648, 0, 1]> : tensor<7xi32>
// CHECK: return %[[Q]], %[[Q]], %[[F]], %[[M]]
func.func @int_division() -> (tensor<7xi32>, tensor<7xi32>, tensor<7xi32>, tensor<7xi32>) {
  %x = dlvm.constant dense<[7, -7, 0, -2147483648, -2147483648, 5, -7]> : tensor<7xi32>
  %y = dlvm.constant dense<[0, 0, 0, -1, 0, -1, 2]> : tensor<7xi32>
  %0 = dlvm.div %x, %y : tensor<7xi32>, tensor<7xi32>
  %1 = dlvm.trunc_div %x, %y : tensor<7xi32>, tensor<7xi32>
  %2 = dlvm.floor_div %x, %y : tensor<7xi32>, tensor<7xi32>
  %3 = dlvm.mod %x, %y : tensor<7xi32>, tensor<7xi32>
  return %0, %1, %2, %3 : tensor<7xi32>, tensor<7xi32>, tensor<7xi32>, tensor<7xi32>
}

// -----

// Splat operands and other widths.
// CHECK-LABEL: func.func @int_division_splat
// CHECK-DAG: %[[A:.*]] = dlvm.constant dense<-1> : tensor<3xi8>
// CHECK-DAG: %[[B:.*]] = dlvm.constant dense<-128> : tensor<3xi8>
// CHECK-DAG: %[[C:.*]] = dlvm.constant dense<0> : tensor<3xi8>
// CHECK-DAG: %[[D:.*]] = dlvm.constant dense<-9223372036854775808> : tensor<i64>
// CHECK-DAG: %[[E:.*]] = dlvm.constant dense<0> : tensor<i64>
// CHECK: return %[[A]], %[[B]], %[[B]], %[[C]], %[[D]], %[[E]]
func.func @int_division_splat() -> (tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<i64>, tensor<i64>) {
  %x = dlvm.constant dense<-128> : tensor<3xi8>
  %zero = dlvm.constant dense<0> : tensor<3xi8>
  %m1 = dlvm.constant dense<-1> : tensor<i8>
  %0 = dlvm.div %x, %zero : tensor<3xi8>, tensor<3xi8>
  %1 = dlvm.mod %x, %zero : tensor<3xi8>, tensor<3xi8>
  %2 = dlvm.floor_div %x, %m1 : tensor<3xi8>, tensor<i8>
  %3 = dlvm.mod %x, %m1 : tensor<3xi8>, tensor<i8>
  %min = dlvm.constant dense<-9223372036854775808> : tensor<i64>
  %n1 = dlvm.constant dense<-1> : tensor<i64>
  %4 = dlvm.trunc_div %min, %n1 : tensor<i64>, tensor<i64>
  %5 = dlvm.mod %min, %n1 : tensor<i64>, tensor<i64>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<i64>, tensor<i64>
}

// -----

// Float to integer casts truncate and saturate; NaN gives 0. Elements: NaN, +inf, -inf,
// 1e20, -1e20, 300, -300, -0.7, 2.9, 2^31, -2^31.
// CHECK-LABEL: func.func @float_to_int
// CHECK-DAG: %[[I8:.*]] = dlvm.constant dense<[0, 127, -128, 127, -128, 127, -128, 0, 2, 127, -128]> : tensor<11xi8>
// CHECK-DAG: %[[I32:.*]] = dlvm.constant dense<[0, 2147483647, -2147483648, 2147483647, -2147483648, 300, -300, 0, 2, 2147483647, -2147483648]> : tensor<11xi32>
// CHECK-DAG: %[[I64:.*]] = dlvm.constant dense<[0, 9223372036854775807, -9223372036854775808, 9223372036854775807, -9223372036854775808, 300, -300, 0, 2, 2147483648, -2147483648]> : tensor<11xi64>
// CHECK-DAG: %[[B:.*]] = dlvm.constant dense<true> : tensor<11xi1>
// CHECK-DAG: %[[S:.*]] = dlvm.constant dense<0> : tensor<2xi16>
// CHECK-DAG: %[[Z:.*]] = dlvm.constant dense<false> : tensor<2xi1>
// CHECK: return %[[I8]], %[[I32]], %[[I64]], %[[B]], %[[S]], %[[Z]]
func.func @float_to_int() -> (tensor<11xi8>, tensor<11xi32>, tensor<11xi64>, tensor<11xi1>, tensor<2xi16>, tensor<2xi1>) {
  %f = dlvm.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000, 1.0e20, -1.0e20, 300.0, -300.0, -0.7, 2.9, 2147483648.0, -2147483648.0]> : tensor<11xf32>
  %0 = dlvm.cast %f to i8 : tensor<11xf32>
  %1 = dlvm.cast %f to i32 : tensor<11xf32>
  %2 = dlvm.cast %f to i64 : tensor<11xf32>
  %3 = dlvm.cast %f to i1 : tensor<11xf32>
  %nan = dlvm.constant dense<0x7FF8000000000000> : tensor<2xf64>
  %4 = dlvm.cast %nan to i16 : tensor<2xf64>
  %zeros = dlvm.constant dense<[0.0, -0.0]> : tensor<2xf64>
  %5 = dlvm.cast %zeros to i1 : tensor<2xf64>
  return %0, %1, %2, %3, %4, %5 : tensor<11xi8>, tensor<11xi32>, tensor<11xi64>, tensor<11xi1>, tensor<2xi16>, tensor<2xi1>
}

// -----

// Integer casts: to a narrower type wraps, to float rounds once (2^24 + 1 -> 2^24 in f32),
// from i1 true is 1.
// CHECK-LABEL: func.func @int_casts
// CHECK-DAG: %[[N:.*]] = dlvm.constant dense<[44, 127, -1]> : tensor<3xi8>
// CHECK-DAG: %[[F:.*]] = dlvm.constant dense<[0x4B800000, -1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[T:.*]] = dlvm.constant dense<[1, 0]> : tensor<2xi32>
// CHECK-DAG: %[[TF:.*]] = dlvm.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf64>
// To bf16 through f32, as compiled code, the interpreter and XLA: 2^24 + 2^16 + 1 rounds
// to 2^24 + 2^16 (a tie in bf16), then to 2^24 (one rounding would give 2^24 + 2^17).
// CHECK-DAG: %[[BF:.*]] = dlvm.constant dense<[1.677720e+07, -1.677720e+07]> : tensor<2xbf16>
// CHECK: return %[[N]], %[[F]], %[[T]], %[[TF]], %[[BF]]
func.func @int_casts() -> (tensor<3xi8>, tensor<2xf32>, tensor<2xi32>, tensor<2xf64>, tensor<2xbf16>) {
  %i = dlvm.constant dense<[300, -129, 65535]> : tensor<3xi32>
  %0 = dlvm.cast %i to i8 : tensor<3xi32>
  %l = dlvm.constant dense<[16777217, -1]> : tensor<2xi64>
  %1 = dlvm.cast %l to f32 : tensor<2xi64>
  %b = dlvm.constant dense<[true, false]> : tensor<2xi1>
  %2 = dlvm.cast %b to i32 : tensor<2xi1>
  %3 = dlvm.cast %b to f64 : tensor<2xi1>
  %t = dlvm.constant dense<[16842753, -16842753]> : tensor<2xi32>
  %4 = dlvm.cast %t to bf16 : tensor<2xi32>
  return %0, %1, %2, %3, %4 : tensor<3xi8>, tensor<2xf32>, tensor<2xi32>, tensor<2xf64>, tensor<2xbf16>
}

// -----

// Float min/max: IEEE 754-2019 minimum/maximum (NaN propagates, -0.0 < +0.0);
// relu(NaN) is NaN and relu(-0.0) is +0.0.
// CHECK-LABEL: func.func @float_min_max
// CHECK-DAG: %[[MIN:.*]] = dlvm.constant dense<[-0.000000e+00, -0.000000e+00, 0x7FF8000000000000, 0x7FF8000000000000]> : tensor<4xf64>
// CHECK-DAG: %[[MAX:.*]] = dlvm.constant dense<[0.000000e+00, 0.000000e+00, 0x7FF8000000000000, 0x7FF8000000000000]> : tensor<4xf64>
// CHECK: return %[[MIN]], %[[MAX]], %[[MAX]]
func.func @float_min_max() -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %a = dlvm.constant dense<[0.0, -0.0, 0x7FF8000000000000, 1.0]> : tensor<4xf64>
  %b = dlvm.constant dense<[-0.0, 0.0, 1.0, 0x7FF8000000000000]> : tensor<4xf64>
  %0 = dlvm.min %a, %b : tensor<4xf64>, tensor<4xf64>
  %1 = dlvm.max %a, %b : tensor<4xf64>, tensor<4xf64>
  %c = dlvm.constant dense<[-0.0, 0.0, 0x7FF8000000000000, 0x7FF8000000000000]> : tensor<4xf64>
  %2 = dlvm.relu %c : tensor<4xf64>
  return %0, %1, %2 : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}

// -----

// On i1, relu, abs and sign are the identity (false < true), also on non-constants;
// on integer constants: relu is max(x, 0), |MIN| wraps to MIN, sign is -1/0/1; not folds
// non-splat constants.
// CHECK-LABEL: func.func @int_unary
// CHECK-SAME: (%[[B:.*]]: tensor<4xi1>)
// CHECK-DAG: %[[R:.*]] = dlvm.constant dense<[0, 0, 5, 127]> : tensor<4xi8>
// CHECK-DAG: %[[A:.*]] = dlvm.constant dense<[-128, 1, 5, 127]> : tensor<4xi8>
// CHECK-DAG: %[[S:.*]] = dlvm.constant dense<[-1, -1, 1, 1]> : tensor<4xi8>
// CHECK-DAG: %[[N:.*]] = dlvm.constant dense<[127, 0, -6, -128]> : tensor<4xi8>
// CHECK: return %[[B]], %[[B]], %[[B]], %[[R]], %[[A]], %[[S]], %[[N]]
func.func @int_unary(%b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>) {
  %0 = dlvm.relu %b : tensor<4xi1>
  %1 = dlvm.abs %b : tensor<4xi1>
  %2 = dlvm.sign %b : tensor<4xi1>
  %i = dlvm.constant dense<[-128, -1, 5, 127]> : tensor<4xi8>
  %3 = dlvm.relu %i : tensor<4xi8>
  %4 = dlvm.abs %i : tensor<4xi8>
  %5 = dlvm.sign %i : tensor<4xi8>
  %6 = dlvm.not %i : tensor<4xi8>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>
}

// -----

// rem is truncated (the sign of x) and never traps: x rem 0 is x, MIN rem -1 is 0;
// shifts read the amount as unsigned and shift everything out at the bit width;
// popcount counts bits; is_finite and clamp fold on constants.
// CHECK-LABEL: func.func @xla_ops
// CHECK-DAG: %[[REM:.*]] = dlvm.constant dense<[-1, 7, 0, 1]> : tensor<4xi8>
// CHECK-DAG: %[[SHL:.*]] = dlvm.constant dense<[-4, 0, 0, 2]> : tensor<4xi8>
// CHECK-DAG: %[[SHR:.*]] = dlvm.constant dense<[-1, 0, -1, 0]> : tensor<4xi8>
// CHECK-DAG: %[[POP:.*]] = dlvm.constant dense<[8, 3, 1, 1]> : tensor<4xi8>
// CHECK-DAG: %[[FIN:.*]] = dlvm.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: %[[FREM:.*]] = dlvm.constant dense<-1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[CL:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CHECK: return %[[REM]], %[[SHL]], %[[SHR]], %[[POP]], %[[FIN]], %[[FREM]], %[[CL]]
func.func @xla_ops() -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<3xi1>, tensor<f32>, tensor<f32>) {
  %x = dlvm.constant dense<[-7, 7, -128, 1]> : tensor<4xi8>
  %y = dlvm.constant dense<[3, 0, -1, 2]> : tensor<4xi8>
  %0 = dlvm.rem %x, %y : tensor<4xi8>, tensor<4xi8>
  %s = dlvm.constant dense<[2, 8, -1, 1]> : tensor<4xi8>
  %one = dlvm.constant dense<[-1, 7, -128, 1]> : tensor<4xi8>
  %1 = dlvm.shift_left %one, %s : tensor<4xi8>, tensor<4xi8>
  %2 = dlvm.shift_right_arithmetic %one, %s : tensor<4xi8>, tensor<4xi8>
  %3 = dlvm.popcount %one : tensor<4xi8>
  %f = dlvm.constant dense<[1.0, 0x7F800000, 0x7FC00000]> : tensor<3xf32>
  %4 = dlvm.is_finite %f : tensor<3xf32>
  %a = dlvm.constant dense<-7.0> : tensor<f32>
  %b = dlvm.constant dense<2.0> : tensor<f32>
  %5 = dlvm.rem %a, %b : tensor<f32>, tensor<f32>
  %lo = dlvm.constant dense<-1.0> : tensor<f32>
  %hi = dlvm.constant dense<2.0> : tensor<f32>
  %c = dlvm.constant dense<3.5> : tensor<f32>
  %6 = dlvm.clamp %lo, %c, %hi : tensor<f32>, tensor<f32>, tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>, tensor<3xi1>, tensor<f32>, tensor<f32>
}
