// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.square (g: the seed, y: the result).

// d x^2 = g * 2x
// CHECK-LABEL: func.func @square_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.square %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG0]], %[[V1]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.mul %[[ARG1]], %[[V2]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V3]] : tensor<4xf32>
func.func @square(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.square %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @square_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @square seedable>}
