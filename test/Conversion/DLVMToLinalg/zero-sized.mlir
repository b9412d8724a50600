// Zero-sized tensors: results without elements are just tensor.empty; empty
// operands are skipped or replaced by their padding.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-LABEL: func.func @empty_results
// CHECK-DAG: %[[A:.*]] = tensor.empty() : tensor<0x4xf32>
// CHECK-DAG: %[[B:.*]] = tensor.empty() : tensor<0x2x3x3xf32>
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.pad
// CHECK: return
func.func @empty_results(%x: tensor<0x4xf32>, %y: tensor<0x2x5x5xf32>) -> (tensor<0x4xf32>, tensor<0x2x3x3xf32>) {
  %0 = dlvm.softmax %x axis 1 : tensor<0x4xf32>
  %1 = dlvm.reduce_window max %y window [1, 1, 2, 2] strides [1, 1, 2, 2] padding half : tensor<0x2x5x5xf32>
  return %0, %1 : tensor<0x4xf32>, tensor<0x2x3x3xf32>
}

// A reduction over an empty dimension still yields the identity.
// CHECK-LABEL: func.func @sum_of_empty
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: linalg.reduce ins(%{{.*}} : tensor<0x4xf32>) outs(%[[F]] : tensor<4xf32>) dimensions = [0]
func.func @sum_of_empty(%x: tensor<0x4xf32>) -> tensor<4xf32> {
  %r = dlvm.reduce add %x dims [0] : tensor<0x4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @concat_empty
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[E:.*]]: tensor<3x0xf32>)
// CHECK: tensor.insert_slice %[[X]]
// CHECK-NOT: tensor.insert_slice %[[E]]
func.func @concat_empty(%x: tensor<3x4xf32>, %e: tensor<3x0xf32>) -> tensor<3x4xf32> {
  %r = dlvm.concatenate %x, %e axis 1 : tensor<3x4xf32>, tensor<3x0xf32>
  return %r : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @window_of_empty
// CHECK-NOT: tensor.pad
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x3xf32>)
func.func @window_of_empty(%x: tensor<0x3xf32>) -> tensor<2x3xf32> {
  %r = dlvm.reduce_window mean %x window [3, 1] strides [1, 1] padding full : tensor<0x3xf32>
  return %r : tensor<2x3xf32>
}
