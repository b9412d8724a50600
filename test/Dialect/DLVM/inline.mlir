// dlvm ops can be inlined: calls into functions made of dlvm ops disappear.
// RUN: dlvm-opt %s --inline | FileCheck %s
// RUN: %mlir_opt %s --inline | FileCheck %s

func.func private @layer(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = dlvm.dot %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
  %1 = dlvm.tanh %0 : tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @net
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x4xf32>)
// CHECK-NOT: call
// CHECK: %[[D:.*]] = dlvm.dot %[[X]], %[[W]]
// CHECK: %[[T:.*]] = dlvm.tanh %[[D]]
// CHECK: return %[[T]]
func.func @net(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = func.call @layer(%x, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
