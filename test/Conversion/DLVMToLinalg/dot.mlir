// dlvm.dot becomes the matching named linalg contraction, accumulating into zeros.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x5xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<3x5xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[F]] : tensor<3x5xf32>)
// CHECK: return %[[M]]
func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %r = dlvm.dot %a, %b : tensor<3x4xf32>, tensor<4x5xf32>
  return %r : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @matvec
// CHECK: linalg.matvec ins(%{{.*}}, %{{.*}} : tensor<3x4xf64>, tensor<4xf64>) outs(%{{.*}} : tensor<3xf64>)
func.func @matvec(%a: tensor<3x4xf64>, %v: tensor<4xf64>) -> tensor<3xf64> {
  %r = dlvm.dot %a, %v : tensor<3x4xf64>, tensor<4xf64>
  return %r : tensor<3xf64>
}

// CHECK-LABEL: func.func @vecmat
// CHECK: linalg.vecmat ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4x5xf32>) outs(%{{.*}} : tensor<5xf32>)
func.func @vecmat(%v: tensor<4xf32>, %b: tensor<4x5xf32>) -> tensor<5xf32> {
  %r = dlvm.dot %v, %b : tensor<4xf32>, tensor<4x5xf32>
  return %r : tensor<5xf32>
}

// CHECK-LABEL: func.func @inner
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>) -> tensor<f32>
// CHECK: linalg.dot ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%[[F]] : tensor<f32>)
func.func @inner(%v: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %r = dlvm.dot %v, %w : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<f32>
}

// CHECK-LABEL: func.func @batch_matmul
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%{{.*}} : tensor<2x3x5xf32>)
func.func @batch_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %r = dlvm.dot %a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>
  return %r : tensor<2x3x5xf32>
}

// Several batch dimensions are collapsed into one around linalg.batch_matmul.
// CHECK-LABEL: func.func @batch2_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x3x4xf32>, %[[B:.*]]: tensor<2x3x4x5xf32>)
// CHECK-DAG: %[[CA:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x3x4xf32> into tensor<6x3x4xf32>
// CHECK-DAG: %[[CB:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
// CHECK: %[[M:.*]] = linalg.batch_matmul ins(%[[CA]], %[[CB]] : tensor<6x3x4xf32>, tensor<6x4x5xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 3, 5] : tensor<6x3x5xf32> into tensor<2x3x3x5xf32>
// CHECK: return %[[R]]
func.func @batch2_matmul(%a: tensor<2x3x3x4xf32>, %b: tensor<2x3x4x5xf32>) -> tensor<2x3x3x5xf32> {
  %r = dlvm.dot %a, %b : tensor<2x3x3x4xf32>, tensor<2x3x4x5xf32>
  return %r : tensor<2x3x3x5xf32>
}

// CHECK-LABEL: func.func @matmul_i32
// CHECK: arith.constant 0 : i32
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xi32>, tensor<4x5xi32>)
func.func @matmul_i32(%a: tensor<3x4xi32>, %b: tensor<4x5xi32>) -> tensor<3x5xi32> {
  %r = dlvm.dot %a, %b : tensor<3x4xi32>, tensor<4x5xi32>
  return %r : tensor<3x5xi32>
}
