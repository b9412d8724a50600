// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.abs (g: the seed, y: the result).

// d |x| = g where x >= 0, else -g (JAX's choice: the derivative at 0 is 1)
// CHECK-LABEL: func.func @abs_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.abs %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[Z:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V1:.*]] = dlvm.cmp ge, %[[ARG0]], %[[Z]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.neg %[[ARG1]] : tensor<4xf32>
// CHECK:      %[[V3:.*]] = dlvm.select %[[V1]], %[[ARG1]], %[[V2]] : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V3]] : tensor<4xf32>
func.func @abs(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.abs %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @abs_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @abs seedable>}
