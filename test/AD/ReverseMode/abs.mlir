// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.abs (g: the seed, y: the result).

// d |x| = g * sign(x)
// CHECK-LABEL: func.func @abs_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.abs %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.sign %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG1]], %[[V1]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V2]] : tensor<4xf32>
func.func @abs(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.abs %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @abs_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @abs seedable>}
