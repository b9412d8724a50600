// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.lgamma (g: the seed, y: the result).

// d ln|Gamma(x)| = g * digamma(x)
// CHECK-LABEL: func.func @lgamma_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.lgamma %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.digamma %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG1]], %[[V1]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V2]] : tensor<4xf32>
func.func @lgamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.lgamma %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @lgamma_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @lgamma seedable>}
