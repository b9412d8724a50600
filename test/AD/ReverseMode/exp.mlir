// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.exp (g: the seed, y: the result).

// d e^x = g * e^x = g * y
// CHECK-LABEL: func.func @exp_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.exp %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.mul %[[ARG1]], %[[V0]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V1]] : tensor<4xf32>
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @exp_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @exp seedable>}
