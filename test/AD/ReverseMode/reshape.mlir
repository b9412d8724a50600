// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.reshape.

// dx = reshape(g, shape of x)
// CHECK-LABEL: func.func @rs_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3x4xf32>, %[[ARG1:.*]]: tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK:      %[[V0:.*]] = dlvm.reshape %[[ARG0]] to [2, 6] : tensor<3x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[ARG1]] to [3, 4] : tensor<2x6xf32>
// CHECK:      return %[[V1]] : tensor<3x4xf32>
func.func @rs(%x: tensor<3x4xf32>) -> tensor<2x6xf32> {
  %y = dlvm.reshape %x to [2, 6] : tensor<3x4xf32>
  return %y : tensor<2x6xf32>
}
func.func private @rs_grad(tensor<3x4xf32>, tensor<2x6xf32>) -> tensor<3x4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @rs seedable>}
