// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.tanh (g: the seed, y: the result).

// d tanh(x) = g * (1 - tanh(x)^2) = g * (1 - y^2)
// CHECK-LABEL: func.func @tanh_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.tanh %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.square %[[V0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.sub %[[V2]], %[[V1]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[ARG1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V4]] : tensor<4xf32>
func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.tanh %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @tanh_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @tanh seedable>}
