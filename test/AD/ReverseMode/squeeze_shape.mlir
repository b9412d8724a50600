// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.squeeze_shape.

// dx = pad_shape(g) at the same dimension
// CHECK-LABEL: func.func @squeeze_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3x1xf32>, %[[ARG1:.*]]: tensor<3xf32>) -> tensor<3x1xf32>
// CHECK:      %[[V0:.*]] = dlvm.squeeze_shape %[[ARG0]] at 1 : tensor<3x1xf32>
// CHECK:      %[[V1:.*]] = dlvm.pad_shape %[[ARG1]] at 1 : tensor<3xf32>
// CHECK:      return %[[V1]] : tensor<3x1xf32>
func.func @squeeze(%x: tensor<3x1xf32>) -> tensor<3xf32> {
  %y = dlvm.squeeze_shape %x at 1 : tensor<3x1xf32>
  return %y : tensor<3xf32>
}
func.func private @squeeze_grad(tensor<3x1xf32>, tensor<3xf32>) -> tensor<3x1xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @squeeze seedable>}
