// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.cos (g: the seed, y: the result).

// d cos(x) = -g * sin(x)
// CHECK-LABEL: func.func @cos_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.cos %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.sin %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG1]], %[[V1]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V3:.*]] = dlvm.neg %[[V2]] : tensor<4xf32>
// CHECK:      return %[[V3]] : tensor<4xf32>
func.func @cos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.cos %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @cos_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @cos seedable>}
