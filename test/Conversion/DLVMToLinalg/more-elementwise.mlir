// The elementwise ops that came with issue 16 (XLA's set): their scalar bodies.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-LABEL: func.func @unary_math
// CHECK: math.asinh
// CHECK: math.acosh
// CHECK: math.atanh
// CHECK: math.exp2
// CHECK: math.log2
// CHECK: math.log10
// CHECK: math.cbrt
// CHECK: math.ctpop
func.func @unary_math(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = dlvm.asinh %x : tensor<4xf32>
  %1 = dlvm.acosh %0 : tensor<4xf32>
  %2 = dlvm.atanh %1 : tensor<4xf32>
  %3 = dlvm.exp2 %2 : tensor<4xf32>
  %4 = dlvm.log2 %3 : tensor<4xf32>
  %5 = dlvm.log10 %4 : tensor<4xf32>
  %6 = dlvm.cbrt %5 : tensor<4xf32>
  %7 = dlvm.popcount %i : tensor<4xi32>
  return %6, %7 : tensor<4xf32>, tensor<4xi32>
}

// is_finite: |x| < inf (false for NaN and +-inf), an i1 result.
// CHECK-LABEL: func.func @is_finite
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: i1):
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[R:.*]] = arith.cmpf olt, %[[A]], %[[INF]] : f32
// CHECK: linalg.yield %[[R]] : i1
func.func @is_finite(%x: tensor<4xf32>) -> tensor<4xi1> {
  %r = dlvm.is_finite %x : tensor<4xf32>
  return %r : tensor<4xi1>
}

// Integer rem never traps: the divisor is made safe, x rem 0 is x.
// CHECK-LABEL: func.func @rem_int
// CHECK: %[[R:.*]] = arith.remsi
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[R]] : i32
// CHECK-LABEL: func.func @rem_float
// CHECK: arith.remf
// CHECK-LABEL: func.func @atan2
// CHECK: math.atan2
func.func @rem_int(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %r = dlvm.rem %x, %y : tensor<4xi32>, tensor<4xi32>
  return %r : tensor<4xi32>
}
func.func @rem_float(%x: tensor<4xf32>, %y: tensor<f32>) -> tensor<4xf32> {
  %r = dlvm.rem %x, %y : tensor<4xf32>, tensor<f32>
  return %r : tensor<4xf32>
}
func.func @atan2(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = dlvm.atan2 %x, %y : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// Shifts by the bit width or more select 0 (or the sign fill) over the poison shift.
// CHECK-LABEL: func.func @shifts
// CHECK: %[[W:.*]] = arith.constant 32 : i32
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[Y:.*]], %[[W]] : i32
// CHECK: %[[S:.*]] = arith.shli %{{.*}}, %[[Y]] : i32
// CHECK: arith.select %[[IN]], %[[S]], %{{.*}} : i32
// CHECK: arith.shrui
// CHECK: %[[SIGN:.*]] = arith.constant 31 : i32
// CHECK: arith.shrsi %{{.*}}, %[[SIGN]] : i32
// CHECK: arith.xori
func.func @shifts(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = dlvm.shift_left %x, %y : tensor<4xi32>, tensor<4xi32>
  %1 = dlvm.shift_right_logical %x, %y : tensor<4xi32>, tensor<4xi32>
  %2 = dlvm.shift_right_arithmetic %x, %y : tensor<4xi32>, tensor<4xi32>
  %3 = dlvm.xor %x, %y : tensor<4xi32>, tensor<4xi32>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// clamp: the bounds broadcast; NaN-propagating maximum, then minimum.
// CHECK-LABEL: func.func @clamp
// CHECK: ^bb0(%[[LO:.*]]: f32, %[[X:.*]]: f32, %[[HI:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[M:.*]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK: %[[R:.*]] = arith.minimumf %[[M]], %[[HI]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @clamp(%lo: tensor<f32>, %x: tensor<4x8xf32>, %hi: tensor<f32>) -> tensor<4x8xf32> {
  %r = dlvm.clamp %lo, %x, %hi : tensor<f32>, tensor<4x8xf32>, tensor<f32>
  return %r : tensor<4x8xf32>
}
