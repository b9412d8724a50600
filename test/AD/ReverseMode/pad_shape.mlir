// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.pad_shape.

// dx = squeeze_shape(g) at the same dimension
// CHECK-LABEL: func.func @pad_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.pad_shape %[[ARG0]] at 0 : tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.squeeze_shape %[[ARG1]] at 0 : tensor<1x3xf32>
// CHECK:      return %[[V1]] : tensor<3xf32>
func.func @pad(%x: tensor<3xf32>) -> tensor<1x3xf32> {
  %y = dlvm.pad_shape %x at 0 : tensor<3xf32>
  return %y : tensor<1x3xf32>
}
func.func private @pad_grad(tensor<3xf32>, tensor<1x3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @pad seedable>}
