// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.mul with broadcasting: the adjoint of the broadcast operand
// is summed over the broadcast dimension, then reshaped (sum_to).

// dx = g * y, dy = sum_to(g * x)
// CHECK-LABEL: func.func @mul_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.mul %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.mul %[[ARG2]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG2]], %[[ARG0]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.reduce add %[[V2]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.reshape %[[V3]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[V1]], %[[V4]] : tensor<2x3xf32>, tensor<1x3xf32>
func.func @mul(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.mul %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @mul_grad(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @mul seedable>}
