// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.reverse.

// dx = reverse(g, same dims)
// CHECK-LABEL: func.func @rev_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.reverse %[[ARG0]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reverse %[[ARG1]] dims [1] : tensor<2x3xf32>
// CHECK:      return %[[V1]] : tensor<2x3xf32>
func.func @rev(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = dlvm.reverse %x dims [1] : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @rev_grad(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @rev seedable>}
