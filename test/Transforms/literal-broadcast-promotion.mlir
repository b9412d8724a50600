// Splat literals used by broadcasting ops become rank-0 literals.
// RUN: dlvm-opt %s --dlvm-literal-broadcast-promotion | FileCheck %s
// RUN: dlvm-opt %s --dlvm-literal-broadcast-promotion | FileCheck %s --check-prefix=GONE
// The promoted tensor literals die.
// GONE-NOT: dense<2.000000e+00> : tensor<32x10xf32>
// GONE-NOT: dense<5.000000e-01> : tensor<1x10xf32>
// GONE-NOT: dense<true> : tensor<32x10xi1>

// CHECK-LABEL: func.func @promoted
// CHECK-SAME: (%[[X:.*]]: tensor<32x10xf32>, %[[M:.*]]: tensor<32x10xi1>, %[[I:.*]]: tensor<8xi32>)
// CHECK-DAG: %[[TWO:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG: %[[HALF:.*]] = dlvm.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG: %[[SEVEN:.*]] = dlvm.constant dense<7> : tensor<i32>
// CHECK-DAG: %[[TRUE:.*]] = dlvm.constant dense<true> : tensor<i1>
// CHECK-DAG: %[[R0:.*]] = dlvm.mul %[[X]], %[[TWO]] : tensor<32x10xf32>, tensor<f32>
// CHECK-DAG: %[[R1:.*]] = dlvm.cmp gt, %[[HALF]], %[[X]] : tensor<f32>, tensor<32x10xf32>
// CHECK-DAG: %[[R2:.*]] = dlvm.select %[[M]], %[[X]], %[[TWO]] : tensor<32x10xi1>, tensor<32x10xf32>, tensor<f32>
// CHECK-DAG: %[[R3:.*]] = dlvm.mod %[[I]], %[[SEVEN]] : tensor<8xi32>, tensor<i32>
// CHECK-DAG: %[[R4:.*]] = dlvm.and %[[M]], %[[TRUE]] : tensor<32x10xi1>, tensor<i1>
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]]
func.func @promoted(%x: tensor<32x10xf32>, %m: tensor<32x10xi1>, %i: tensor<8xi32>)
    -> (tensor<32x10xf32>, tensor<32x10xi1>, tensor<32x10xf32>, tensor<8xi32>, tensor<32x10xi1>) {
  %two = dlvm.constant dense<2.0> : tensor<32x10xf32>
  %0 = dlvm.mul %x, %two : tensor<32x10xf32>, tensor<32x10xf32>
  %half = dlvm.constant dense<0.5> : tensor<1x10xf32>
  %1 = dlvm.cmp gt, %half, %x : tensor<1x10xf32>, tensor<32x10xf32>
  %2 = dlvm.select %m, %x, %two : tensor<32x10xi1>, tensor<32x10xf32>, tensor<32x10xf32>
  %seven = dlvm.constant dense<7> : tensor<8xi32>
  %3 = dlvm.mod %i, %seven : tensor<8xi32>, tensor<8xi32>
  %true = dlvm.constant dense<true> : tensor<32x10xi1>
  %4 = dlvm.and %m, %true : tensor<32x10xi1>, tensor<32x10xi1>
  return %0, %1, %2, %3, %4 : tensor<32x10xf32>, tensor<32x10xi1>, tensor<32x10xf32>, tensor<8xi32>, tensor<32x10xi1>
}

// A literal that gives the result its shape, a non-splat literal and a returned literal stay.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: (%[[V:.*]]: tensor<1x10xf32>, %[[X:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[BIG:.*]] = dlvm.constant dense<3.000000e+00> : tensor<32x10xf32>
// CHECK-DAG: %[[DENSE:.*]] = dlvm.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[SCALAR:.*]] = dlvm.constant dense<3.000000e+00> : tensor<f32>
// CHECK-DAG: %[[R0:.*]] = dlvm.add %[[V]], %[[BIG]] : tensor<1x10xf32>, tensor<32x10xf32>
// CHECK-DAG: %[[R1:.*]] = dlvm.add %[[X]], %[[DENSE]] : tensor<4xf32>, tensor<4xf32>
// CHECK-DAG: %[[R2:.*]] = dlvm.add %[[X]], %[[SCALAR]] : tensor<4xf32>, tensor<f32>
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[BIG]]
func.func @kept(%v: tensor<1x10xf32>, %x: tensor<4xf32>) -> (tensor<32x10xf32>, tensor<4xf32>, tensor<4xf32>, tensor<32x10xf32>) {
  %big = dlvm.constant dense<3.0> : tensor<32x10xf32>
  %0 = dlvm.add %v, %big : tensor<1x10xf32>, tensor<32x10xf32>
  %dense = dlvm.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %1 = dlvm.add %x, %dense : tensor<4xf32>, tensor<4xf32>
  %three = dlvm.constant dense<3.0> : tensor<4xf32>
  %2 = dlvm.add %x, %three : tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2, %big : tensor<32x10xf32>, tensor<4xf32>, tensor<4xf32>, tensor<32x10xf32>
}
