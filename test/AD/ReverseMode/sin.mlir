// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.sin (g: the seed, y: the result).

// d sin(x) = g * cos(x)
// CHECK-LABEL: func.func @sin_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.cos %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG1]], %[[V1]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V2]] : tensor<4xf32>
func.func @sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.sin %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @sin_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sin seedable>}
