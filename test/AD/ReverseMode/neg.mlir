// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.neg (g: the seed, y: the result).

// d(-x) = -g
// CHECK-LABEL: func.func @neg_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.neg %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.neg %[[ARG1]] : tensor<4xf32>
// CHECK:      return %[[V1]] : tensor<4xf32>
func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.neg %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @neg_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @neg seedable>}
