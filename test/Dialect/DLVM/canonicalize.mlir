// Every dlvm folder: constant operands and unconditional identities.
// RUN: dlvm-opt %s --canonicalize --split-input-file | FileCheck %s
// RUN: %mlir_opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @unary_constants
// CHECK-DAG: dlvm.constant dense<-2.000000e+00> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<7.3890562> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<0.693147182> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<0.964027583> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<0.880797088> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<1.41421354> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<0.707106769> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<4.000000e+00> : tensor<4xf32>
// CHECK-NOT: dlvm.exp
// CHECK-NOT: dlvm.log
func.func @unary_constants() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c = dlvm.constant dense<2.0> : tensor<4xf32>
  %0 = dlvm.neg %c : tensor<4xf32>
  %1 = dlvm.exp %c : tensor<4xf32>
  %2 = dlvm.log %c : tensor<4xf32>
  %3 = dlvm.tanh %c : tensor<4xf32>
  %4 = dlvm.sigmoid %c : tensor<4xf32>
  %5 = dlvm.sqrt %c : tensor<4xf32>
  %6 = dlvm.rsqrt %c : tensor<4xf32>
  %7 = dlvm.square %c : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Trigonometric, hyperbolic, special functions and rounding on a non-splat constant.
// CHECK-LABEL: func.func @unary_dense
// CHECK-DAG: dlvm.constant dense<[0.000000e+00, 0.841470957]> : tensor<2xf32>
// CHECK-DAG: dlvm.constant dense<[1.000000e+00, 0.54030230586813977]> : tensor<2xf64>
// CHECK-DAG: dlvm.constant dense<[0.000000e+00, 1.5574077246549023]> : tensor<2xf64>
// CHECK-DAG: dlvm.constant dense<[0.000000e+00, 0.84270079294971489]> : tensor<2xf64>
// CHECK-DAG: dlvm.constant dense<[1.000000e+00, 0.15729920705028513]> : tensor<2xf64>
// CHECK-DAG: dlvm.constant dense<[0x7FF0000000000000, 0.000000e+00]> : tensor<2xf64>
// CHECK-DAG: dlvm.constant dense<[0x7FF8000000000000, -0.577215664901{{[0-9]+}}]> : tensor<2xf64>
func.func @unary_dense() -> (tensor<2xf32>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) {
  %c = dlvm.constant dense<[0.0, 1.0]> : tensor<2xf64>
  %cf = dlvm.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = dlvm.sin %cf : tensor<2xf32>
  %1 = dlvm.cos %c : tensor<2xf64>
  %2 = dlvm.tan %c : tensor<2xf64>
  %3 = dlvm.erf %c : tensor<2xf64>
  %4 = dlvm.erfc %c : tensor<2xf64>
  %5 = dlvm.lgamma %c : tensor<2xf64>
  %6 = dlvm.digamma %c : tensor<2xf64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2xf32>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
}

// -----

// CHECK-LABEL: func.func @more_unary
// CHECK-DAG: dlvm.constant dense<[-2.000000e+00, 2.000000e+00, 2.000000e+00, -3.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<[-1.000000e+00, 3.000000e+00, 3.000000e+00, -2.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<[-2.000000e+00, 3.000000e+00, 3.000000e+00, -3.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<[-2.000000e+00, 2.000000e+00, 2.000000e+00, -2.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<[1.500000e+00, 2.500000e+00, 2.500000e+00, 2.500000e+00]> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<[0.000000e+00, 2.500000e+00, 2.500000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<[-1.000000e+00, 1.000000e+00, 1.000000e+00, -1.000000e+00]> : tensor<4xf32>
func.func @more_unary() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c = dlvm.constant dense<[-1.5, 2.5, 2.5, -2.5]> : tensor<4xf32>
  %0 = dlvm.floor %c : tensor<4xf32>
  %1 = dlvm.ceil %c : tensor<4xf32>
  // round: halfway away from zero; rint: halfway to even.
  %2 = dlvm.round %c : tensor<4xf32>
  %3 = dlvm.rint %c : tensor<4xf32>
  %4 = dlvm.abs %c : tensor<4xf32>
  %5 = dlvm.relu %c : tensor<4xf32>
  %6 = dlvm.sign %c : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @other_unary_constants
// CHECK-DAG: dlvm.constant dense<0.52359879> : tensor<f32>
// CHECK-DAG: dlvm.constant dense<1.04719758> : tensor<f32>
// CHECK-DAG: dlvm.constant dense<0.463647604> : tensor<f32>
// CHECK-DAG: dlvm.constant dense<0.521095276> : tensor<f32>
// CHECK-DAG: dlvm.constant dense<1.12762594> : tensor<f32>
// CHECK-DAG: dlvm.constant dense<0.405465096> : tensor<f32>
// CHECK-DAG: dlvm.constant dense<0.648721277> : tensor<f32>
// CHECK-DAG: dlvm.constant dense<-4> : tensor<i32>
// CHECK-DAG: dlvm.constant dense<-1> : tensor<i32>
func.func @other_unary_constants() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>) {
  %c = dlvm.constant dense<0.5> : tensor<f32>
  %i = dlvm.constant dense<4> : tensor<i32>
  %z = dlvm.constant dense<0> : tensor<i32>
  %0 = dlvm.asin %c : tensor<f32>
  %1 = dlvm.acos %c : tensor<f32>
  %2 = dlvm.atan %c : tensor<f32>
  %3 = dlvm.sinh %c : tensor<f32>
  %4 = dlvm.cosh %c : tensor<f32>
  %5 = dlvm.log1p %c : tensor<f32>
  %6 = dlvm.expm1 %c : tensor<f32>
  %7 = dlvm.neg %i : tensor<i32>
  %8 = dlvm.not %z : tensor<i32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>
}

// -----

// Involutions and idempotent ops.
// CHECK-LABEL: func.func @unary_identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xi1>)
// CHECK-DAG: %[[ABS:.*]] = dlvm.abs %[[X]]
// CHECK-DAG: %[[RELU:.*]] = dlvm.relu %[[X]]
// CHECK-DAG: %[[FLOOR:.*]] = dlvm.floor %[[X]]
// CHECK-DAG: %[[CEIL:.*]] = dlvm.ceil %[[X]]
// CHECK-DAG: %[[ROUND:.*]] = dlvm.round %[[X]]
// CHECK-DAG: %[[RINT:.*]] = dlvm.rint %[[X]]
// CHECK-DAG: %[[SIGN:.*]] = dlvm.sign %[[X]]
// CHECK: return %[[X]], %[[B]], %[[ABS]], %[[RELU]], %[[FLOOR]], %[[CEIL]], %[[ROUND]], %[[RINT]], %[[SIGN]]
func.func @unary_identities(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = dlvm.neg %x : tensor<4xf32>
  %1 = dlvm.neg %0 : tensor<4xf32>
  %2 = dlvm.not %b : tensor<4xi1>
  %3 = dlvm.not %2 : tensor<4xi1>
  %4 = dlvm.abs %x : tensor<4xf32>
  %5 = dlvm.abs %4 : tensor<4xf32>
  %6 = dlvm.relu %x : tensor<4xf32>
  %7 = dlvm.relu %6 : tensor<4xf32>
  %8 = dlvm.floor %x : tensor<4xf32>
  %9 = dlvm.floor %8 : tensor<4xf32>
  %10 = dlvm.ceil %x : tensor<4xf32>
  %11 = dlvm.ceil %10 : tensor<4xf32>
  %12 = dlvm.round %x : tensor<4xf32>
  %13 = dlvm.round %12 : tensor<4xf32>
  %14 = dlvm.rint %x : tensor<4xf32>
  %15 = dlvm.rint %14 : tensor<4xf32>
  %16 = dlvm.sign %x : tensor<4xf32>
  %17 = dlvm.sign %16 : tensor<4xf32>
  return %1, %3, %5, %7, %9, %11, %13, %15, %17 : tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Binary constant folding with broadcasting.
// CHECK-LABEL: func.func @binary_constants
// CHECK-DAG: dlvm.constant dense<{{\[}}[1.100000e+01, 2.200000e+01], [1.300000e+01, 2.400000e+01]]> : tensor<2x2xf32>
// CHECK-DAG: dlvm.constant dense<{{\[}}[-9.000000e+00, -1.800000e+01], [-7.000000e+00, -1.600000e+01]]> : tensor<2x2xf32>
// CHECK-DAG: dlvm.constant dense<{{\[}}[1.000000e+01, 4.000000e+01], [3.000000e+01, 8.000000e+01]]> : tensor<2x2xf32>
// CHECK-DAG: dlvm.constant dense<{{\[}}[1.000000e-01, 1.000000e-01], [3.000000e-01, 2.000000e-01]]> : tensor<2x2xf32>
// CHECK-DAG: dlvm.constant dense<{{\[}}[1.000000e+00, 0x49800000], [5.904900e+04, 1.09951163E+12]]> : tensor<2x2xf32>
// CHECK-DAG: dlvm.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: dlvm.constant dense<{{\[}}[1.000000e+01, 2.000000e+01], [1.000000e+01, 2.000000e+01]]> : tensor<2x2xf32>
// CHECK-NOT: dlvm.add
func.func @binary_constants() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %a = dlvm.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %r = dlvm.constant dense<[[10.0, 20.0]]> : tensor<1x2xf32>
  %0 = dlvm.add %a, %r : tensor<2x2xf32>, tensor<1x2xf32>
  %1 = dlvm.sub %a, %r : tensor<2x2xf32>, tensor<1x2xf32>
  %2 = dlvm.mul %a, %r : tensor<2x2xf32>, tensor<1x2xf32>
  %3 = dlvm.div %a, %r : tensor<2x2xf32>, tensor<1x2xf32>
  %4 = dlvm.pow %a, %r : tensor<2x2xf32>, tensor<1x2xf32>
  %5 = dlvm.min %a, %r : tensor<2x2xf32>, tensor<1x2xf32>
  %6 = dlvm.max %a, %r : tensor<2x2xf32>, tensor<1x2xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Floored modulo and divisions, float and integer.
// CHECK-LABEL: func.func @div_mod_constants
// CHECK-DAG: dlvm.constant dense<[1, -2, 2, -1]> : tensor<4xi32>
// CHECK-DAG: dlvm.constant dense<[2, -3, -3, 2]> : tensor<4xi32>
// CHECK-DAG: dlvm.constant dense<[2, -2, -2, 2]> : tensor<4xi32>
// CHECK-DAG: dlvm.constant dense<[1.000000e+00, -2.000000e+00, 2.000000e+00, -1.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<[2.000000e+00, -3.000000e+00, -3.000000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dlvm.constant dense<[2.000000e+00, -2.000000e+00, -2.000000e+00, 2.000000e+00]> : tensor<4xf32>
func.func @div_mod_constants() -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = dlvm.constant dense<[7, 7, -7, -7]> : tensor<4xi32>
  %b = dlvm.constant dense<[3, -3, 3, -3]> : tensor<4xi32>
  %0 = dlvm.mod %a, %b : tensor<4xi32>, tensor<4xi32>
  %1 = dlvm.floor_div %a, %b : tensor<4xi32>, tensor<4xi32>
  %2 = dlvm.trunc_div %a, %b : tensor<4xi32>, tensor<4xi32>
  %fa = dlvm.constant dense<[7.0, 7.0, -7.0, -7.0]> : tensor<4xf32>
  %fb = dlvm.constant dense<[3.0, -3.0, 3.0, -3.0]> : tensor<4xf32>
  %3 = dlvm.mod %fa, %fb : tensor<4xf32>, tensor<4xf32>
  %4 = dlvm.floor_div %fa, %fb : tensor<4xf32>, tensor<4xf32>
  %5 = dlvm.trunc_div %fa, %fb : tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Integer arithmetic, bitwise ops and comparisons.
// CHECK-LABEL: func.func @int_constants
// CHECK-DAG: dlvm.constant dense<[7, 1]> : tensor<2xi32>
// CHECK-DAG: dlvm.constant dense<[-1, 3]> : tensor<2xi32>
// CHECK-DAG: dlvm.constant dense<[12, -2]> : tensor<2xi32>
// CHECK-DAG: dlvm.constant dense<[0, -2]> : tensor<2xi32>
// CHECK-DAG: dlvm.constant dense<[0, 2]> : tensor<2xi32>
// CHECK-DAG: dlvm.constant dense<[7, -1]> : tensor<2xi32>
// CHECK-DAG: dlvm.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: dlvm.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: dlvm.constant dense<[3, -1]> : tensor<2xi32>
// CHECK-DAG: dlvm.constant dense<[4, 2]> : tensor<2xi32>
func.func @int_constants() -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi1>, tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) {
  %a = dlvm.constant dense<[3, 2]> : tensor<2xi32>
  %b = dlvm.constant dense<[4, -1]> : tensor<2xi32>
  %0 = dlvm.add %a, %b : tensor<2xi32>, tensor<2xi32>
  %1 = dlvm.sub %a, %b : tensor<2xi32>, tensor<2xi32>
  %2 = dlvm.mul %a, %b : tensor<2xi32>, tensor<2xi32>
  %3 = dlvm.div %a, %b : tensor<2xi32>, tensor<2xi32>
  %4 = dlvm.and %a, %b : tensor<2xi32>, tensor<2xi32>
  %5 = dlvm.or %a, %b : tensor<2xi32>, tensor<2xi32>
  %6 = dlvm.cmp lt, %a, %b : tensor<2xi32>, tensor<2xi32>
  %7 = dlvm.cmp ge, %a, %b : tensor<2xi32>, tensor<2xi32>
  %8 = dlvm.min %a, %b : tensor<2xi32>, tensor<2xi32>
  %9 = dlvm.max %a, %b : tensor<2xi32>, tensor<2xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi1>, tensor<2xi1>, tensor<2xi32>, tensor<2xi32>
}

// -----

// Integer division by zero is defined (as XLA): x / 0 = -1, x mod 0 = x
// (more cases in fold-semantics.mlir).
// CHECK-LABEL: func.func @int_div_zero
// CHECK-DAG: %[[Q:.*]] = dlvm.constant dense<-1> : tensor<2xi32>
// CHECK-DAG: %[[R:.*]] = dlvm.constant dense<[3, 2]> : tensor<2xi32>
// CHECK: return %[[Q]], %[[R]]
func.func @int_div_zero() -> (tensor<2xi32>, tensor<2xi32>) {
  %a = dlvm.constant dense<[3, 2]> : tensor<2xi32>
  %z = dlvm.constant dense<0> : tensor<2xi32>
  %0 = dlvm.div %a, %z : tensor<2xi32>, tensor<2xi32>
  %1 = dlvm.mod %a, %z : tensor<2xi32>, tensor<2xi32>
  return %0, %1 : tensor<2xi32>, tensor<2xi32>
}

// -----

// Float comparisons: ordered, except ne.
// CHECK-LABEL: func.func @float_cmp
// CHECK-DAG: dlvm.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: dlvm.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: dlvm.constant dense<[false, true, false]> : tensor<3xi1>
func.func @float_cmp() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %a = dlvm.constant dense<[1.0, 2.0, 0x7FC00000]> : tensor<3xf32>
  %b = dlvm.constant dense<2.0> : tensor<f32>
  %0 = dlvm.cmp lt, %a, %b : tensor<3xf32>, tensor<f32>
  %1 = dlvm.cmp ne, %a, %a : tensor<3xf32>, tensor<3xf32>
  %2 = dlvm.cmp eq, %a, %b : tensor<3xf32>, tensor<f32>
  return %0, %1, %2 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// -----

// Exact identities: x + (-0.0), x - 0, x * 1, 1 * x, x / 1, x ^ 1, min/max/and/or(x, x).
// x + (+0.0) is not an identity for x = -0.0 and stays (dlvm-algebra-simplify handles it).
// CHECK-LABEL: func.func @binary_identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK: %[[ADD:.*]] = dlvm.add %[[X]], %{{.*}} : tensor<4xf32>, tensor<f32>
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[I]], %[[I]], %[[I]], %[[ADD]]
func.func @binary_identities(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>) {
  %nz = dlvm.constant dense<-0.0> : tensor<f32>
  %pz = dlvm.constant dense<0.0> : tensor<f32>
  %one = dlvm.constant dense<1.0> : tensor<f32>
  %izero = dlvm.constant dense<0> : tensor<4xi32>
  %0 = dlvm.add %x, %nz : tensor<4xf32>, tensor<f32>
  %1 = dlvm.sub %x, %pz : tensor<4xf32>, tensor<f32>
  %2 = dlvm.mul %x, %one : tensor<4xf32>, tensor<f32>
  %3 = dlvm.mul %one, %x : tensor<f32>, tensor<4xf32>
  %4 = dlvm.div %x, %one : tensor<4xf32>, tensor<f32>
  %5 = dlvm.pow %x, %one : tensor<4xf32>, tensor<f32>
  %6 = dlvm.min %x, %x : tensor<4xf32>, tensor<4xf32>
  %7 = dlvm.max %x, %x : tensor<4xf32>, tensor<4xf32>
  %8 = dlvm.add %izero, %i : tensor<4xi32>, tensor<4xi32>
  %9 = dlvm.and %i, %i : tensor<4xi32>, tensor<4xi32>
  %10 = dlvm.or %i, %i : tensor<4xi32>, tensor<4xi32>
  %11 = dlvm.add %x, %pz : tensor<4xf32>, tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>
}

// -----

// An identity that would drop a broadcast is not applied.
// CHECK-LABEL: func.func @identity_keeps_broadcast
// CHECK: dlvm.mul
func.func @identity_keeps_broadcast(%x: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %one = dlvm.constant dense<1.0> : tensor<3x4xf32>
  %0 = dlvm.mul %x, %one : tensor<1x4xf32>, tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @select_folds
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<4xi1>)
// CHECK: return %[[A]], %[[B]], %[[A]]
func.func @select_folds(%a: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %t = dlvm.constant dense<true> : tensor<i1>
  %f = dlvm.constant dense<false> : tensor<4xi1>
  %0 = dlvm.select %t, %a, %b : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  %1 = dlvm.select %f, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
  %2 = dlvm.select %m, %a, %a : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Shape identities and inverse pairs.
// CHECK-LABEL: func.func @shape_identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<3xf32>, %[[T:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.*]] = dlvm.reshape %[[X]] to [6] : tensor<2x3xf32>
// CHECK: return %[[X]], %[[T]], %[[X]], %[[X]], %[[X]], %[[V]], %[[V]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[R]], %[[X]], %[[X]], %[[X]]
func.func @shape_identities(%x: tensor<2x3xf32>, %v: tensor<3xf32>, %t: tensor<2x3x4xf32>)
    -> (tensor<2x3xf32>, tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = dlvm.transpose %x : tensor<2x3xf32>
  %1 = dlvm.transpose %0 : tensor<3x2xf32>
  %2 = dlvm.transpose %t perm [1, 2, 0] : tensor<2x3x4xf32>
  %3 = dlvm.transpose %2 perm [2, 0, 1] : tensor<3x4x2xf32>
  %4 = dlvm.transpose %x perm [0, 1] : tensor<2x3xf32>
  %5 = dlvm.reverse %x dims [1] : tensor<2x3xf32>
  %6 = dlvm.reverse %5 dims [1] : tensor<2x3xf32>
  %7 = dlvm.reshape %x to [2, 3] : tensor<2x3xf32>
  %8 = dlvm.pad_shape %v at 0 : tensor<3xf32>
  %9 = dlvm.squeeze_shape %8 at 0 : tensor<1x3xf32>
  %10 = dlvm.squeeze_shape %8 at 0 : tensor<1x3xf32>
  %11 = dlvm.pad_shape %10 at 0 : tensor<3xf32>
  %12 = dlvm.broadcast_to %x to [2, 3] : tensor<2x3xf32>
  %13 = dlvm.slice %x offsets [0, 0] sizes [2, 3] : tensor<2x3xf32>
  %14 = dlvm.concatenate %x axis 0 : tensor<2x3xf32>
  %15 = dlvm.cast %x to f32 : tensor<2x3xf32>
  %16 = dlvm.bitcast %x to i32 : tensor<2x3xf32>
  %17 = dlvm.bitcast %16 to f32 : tensor<2x3xi32>
  %18 = dlvm.reduce add %x dims [] : tensor<2x3xf32>
  // reshape(reshape(x)) -> reshape(x)
  %19 = dlvm.reshape %x to [3, 2] : tensor<2x3xf32>
  %20 = dlvm.reshape %19 to [6] : tensor<3x2xf32>
  %21 = dlvm.reverse %x dims [] : tensor<2x3xf32>
  %22 = dlvm.reverse %6 dims [] : tensor<2x3xf32>
  %23 = dlvm.reverse %x dims [0, 1] : tensor<2x3xf32>
  %24 = dlvm.reverse %23 dims [1, 0] : tensor<2x3xf32>
  return %1, %3, %4, %6, %7, %9, %10, %12, %13, %14, %15, %17, %20, %18, %22, %24
      : tensor<2x3xf32>, tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Shape ops on constants.
// CHECK-LABEL: func.func @shape_constants
// CHECK-DAG: dlvm.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<1x4xf32>
// CHECK-DAG: dlvm.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: dlvm.constant dense<5.000000e+00> : tensor<3x4xf32>
// CHECK-DAG: dlvm.constant dense<5.000000e+00> : tensor<2x2xf32>
// CHECK-DAG: dlvm.constant dense<1.000000e+00> : tensor<8xf16>
// CHECK-DAG: dlvm.constant dense<-2> : tensor<2xi8>
// CHECK-DAG: dlvm.constant dense<true> : tensor<2xi1>
// CHECK-DAG: dlvm.constant dense<-3.000000e+00> : tensor<2xf64>
func.func @shape_constants() -> (tensor<1x4xf32>, tensor<2x2xf32>, tensor<3x4xf32>, tensor<2x2xf32>, tensor<8xf16>, tensor<2xi8>, tensor<2xi1>, tensor<2xf64>, tensor<3x4xf32>) {
  %c = dlvm.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = dlvm.pad_shape %c at 0 : tensor<4xf32>
  %1 = dlvm.reshape %c to [2, 2] : tensor<4xf32>
  %s = dlvm.constant dense<5.0> : tensor<f32>
  %2 = dlvm.broadcast_to %s to [3, 4] : tensor<f32>
  %3 = dlvm.slice %2 offsets [0, 0] sizes [2, 2] : tensor<3x4xf32>
  %one = dlvm.constant dense<1.0> : tensor<8xf32>
  %4 = dlvm.cast %one to f16 : tensor<8xf32>
  %i = dlvm.constant dense<-2> : tensor<2xi32>
  %5 = dlvm.cast %i to i8 : tensor<2xi32>
  %6 = dlvm.cast %i to i1 : tensor<2xi32>
  %j = dlvm.constant dense<-3> : tensor<2xi32>
  %7 = dlvm.cast %j to f64 : tensor<2xi32>
  %8 = dlvm.reverse %2 dims [0] : tensor<3x4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<1x4xf32>, tensor<2x2xf32>, tensor<3x4xf32>, tensor<2x2xf32>, tensor<8xf16>, tensor<2xi8>, tensor<2xi1>, tensor<2xf64>, tensor<3x4xf32>
}

// -----

// Pure ops without uses are erased; random is pure (deterministic in its seed).
// CHECK-LABEL: func.func @dead
// CHECK-NEXT: return
func.func @dead(%x: tensor<4xf32>) {
  %0 = dlvm.exp %x : tensor<4xf32>
  %1 = dlvm.random [4] from 0.0 upto 1.0 seed 1 : f32
  return
}

// -----

// x - (-0.0) is not an identity for x = -0.0 (the result is +0.0) and stays.
// CHECK-LABEL: func.func @sub_negative_zero
// CHECK: dlvm.sub
func.func @sub_negative_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %nz = dlvm.constant dense<-0.0> : tensor<f32>
  %0 = dlvm.sub %x, %nz : tensor<4xf32>, tensor<f32>
  return %0 : tensor<4xf32>
}

// -----

// A pad without padding is its operand.
// CHECK-LABEL: func.func @pad_nothing
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[P:.*]] = dlvm.pad %[[X]], %[[S]] low [0, 1] high [0, 0] interior [0, 0]
// CHECK: return %[[X]], %[[P]]
func.func @pad_nothing(%x: tensor<2x3xf32>, %s: tensor<f32>) -> (tensor<2x3xf32>, tensor<2x4xf32>) {
  %0 = dlvm.pad %x, %s low [0, 0] high [0, 0] interior [0, 0] : tensor<2x3xf32>, tensor<f32>
  %1 = dlvm.pad %x, %s low [0, 1] high [0, 0] interior [0, 0] : tensor<2x3xf32>, tensor<f32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x4xf32>
}
