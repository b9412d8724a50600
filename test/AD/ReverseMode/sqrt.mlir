// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.sqrt (g: the seed, y: the result).

// d sqrt(x) = g / (2 sqrt(x)) = g / (2 y)
// CHECK-LABEL: func.func @sqrt_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.sqrt %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[V0]], %[[V1]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.div %[[ARG1]], %[[V2]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V3]] : tensor<4xf32>
func.func @sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.sqrt %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @sqrt_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sqrt seedable>}
