// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.sinh (g: the seed, y: the result).

// d sinh(x) = g * cosh(x)
// CHECK-LABEL: func.func @sinh_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.sinh %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.cosh %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG1]], %[[V1]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V2]] : tensor<4xf32>
func.func @sinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.sinh %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @sinh_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sinh seedable>}
