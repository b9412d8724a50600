// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.dot in all its forms.

// matrix x matrix, C = A . B: dA = g . B^T, dB = A^T . g
// CHECK-LABEL: func.func @matmul_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<3x4xf32>, %[[ARG2:.*]]: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<3x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.transpose %[[ARG1]] : tensor<3x4xf32>
// CHECK:      %[[V2:.*]] = dlvm.dot %[[ARG2]], %[[V1]] : tensor<2x4xf32>, tensor<4x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.transpose %[[ARG0]] : tensor<2x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.dot %[[V3]], %[[ARG2]] : tensor<3x2xf32>, tensor<2x4xf32>
// CHECK:      return %[[V2]], %[[V4]] : tensor<2x3xf32>, tensor<3x4xf32>
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %c = dlvm.dot %a, %b : tensor<2x3xf32>, tensor<3x4xf32>
  return %c : tensor<2x4xf32>
}
func.func private @matmul_grad(tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<3x4xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @matmul seedable>}

// -----

// batched: dA = g . transpose(B, [0, 2, 1]), dB = transpose(A, [0, 2, 1]) . g
// CHECK-LABEL: func.func @batched_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<5x2x3xf32>, %[[ARG1:.*]]: tensor<5x3x4xf32>, %[[ARG2:.*]]: tensor<5x2x4xf32>) -> (tensor<5x2x3xf32>, tensor<5x3x4xf32>)
// CHECK:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<5x2x3xf32>, tensor<5x3x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.transpose %[[ARG1]] perm [0, 2, 1] : tensor<5x3x4xf32>
// CHECK:      %[[V2:.*]] = dlvm.dot %[[ARG2]], %[[V1]] : tensor<5x2x4xf32>, tensor<5x4x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.transpose %[[ARG0]] perm [0, 2, 1] : tensor<5x2x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.dot %[[V3]], %[[ARG2]] : tensor<5x3x2xf32>, tensor<5x2x4xf32>
// CHECK:      return %[[V2]], %[[V4]] : tensor<5x2x3xf32>, tensor<5x3x4xf32>
func.func @batched(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %c = dlvm.dot %a, %b : tensor<5x2x3xf32>, tensor<5x3x4xf32>
  return %c : tensor<5x2x4xf32>
}
func.func private @batched_grad(tensor<5x2x3xf32>, tensor<5x3x4xf32>, tensor<5x2x4xf32>) -> (tensor<5x2x3xf32>, tensor<5x3x4xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @batched seedable>}

// -----

// matrix x vector, c = A . v: dA = outer(g, v) (as [M,1] . [1,K]), dv = g . A (vector x matrix)
// CHECK-LABEL: func.func @matvec_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[ARG2]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V2:.*]] = dlvm.reshape %[[ARG1]] to [1, 3] : tensor<3xf32>
// CHECK:      %[[V3:.*]] = dlvm.dot %[[V1]], %[[V2]] : tensor<2x1xf32>, tensor<1x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.dot %[[ARG2]], %[[ARG0]] : tensor<2xf32>, tensor<2x3xf32>
// CHECK:      return %[[V3]], %[[V4]] : tensor<2x3xf32>, tensor<3xf32>
func.func @matvec(%a: tensor<2x3xf32>, %v: tensor<3xf32>) -> tensor<2xf32> {
  %c = dlvm.dot %a, %v : tensor<2x3xf32>, tensor<3xf32>
  return %c : tensor<2xf32>
}
func.func private @matvec_grad(tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @matvec seedable>}

// -----

// vector x matrix, c = v . B: dv = B . g (matrix x vector), dB = outer(v, g)
// CHECK-LABEL: func.func @vecmat_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3x4xf32>, %[[ARG2:.*]]: tensor<4xf32>) -> (tensor<3xf32>, tensor<3x4xf32>)
// CHECK:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<3xf32>, tensor<3x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.dot %[[ARG1]], %[[ARG2]] : tensor<3x4xf32>, tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.reshape %[[ARG0]] to [3, 1] : tensor<3xf32>
// CHECK:      %[[V3:.*]] = dlvm.reshape %[[ARG2]] to [1, 4] : tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.dot %[[V2]], %[[V3]] : tensor<3x1xf32>, tensor<1x4xf32>
// CHECK:      return %[[V1]], %[[V4]] : tensor<3xf32>, tensor<3x4xf32>
func.func @vecmat(%v: tensor<3xf32>, %b: tensor<3x4xf32>) -> tensor<4xf32> {
  %c = dlvm.dot %v, %b : tensor<3xf32>, tensor<3x4xf32>
  return %c : tensor<4xf32>
}
func.func private @vecmat_grad(tensor<3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> (tensor<3xf32>, tensor<3x4xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @vecmat seedable>}

// -----

// vector . vector -> scalar: du = g * v, dv = g * u (g has rank 0 and broadcasts)
// CHECK-LABEL: func.func @inner_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<f32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.mul %[[ARG2]], %[[ARG1]] : tensor<f32>, tensor<3xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG2]], %[[ARG0]] : tensor<f32>, tensor<3xf32>
// CHECK:      return %[[V1]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
func.func @inner(%u: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<f32> {
  %c = dlvm.dot %u, %v : tensor<3xf32>, tensor<3xf32>
  return %c : tensor<f32>
}
func.func private @inner_grad(tensor<3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @inner seedable>}
