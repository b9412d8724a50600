// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.sub with broadcasting: the adjoint of the broadcast operand
// is summed over the broadcast dimension, then reshaped (sum_to).

// dx = g, dy = sum_to(-g)
// CHECK-LABEL: func.func @sub_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.sub %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.neg %[[ARG2]] : tensor<2x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.reduce add %[[V1]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.reshape %[[V2]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[ARG2]], %[[V3]] : tensor<2x3xf32>, tensor<1x3xf32>
func.func @sub(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.sub %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @sub_grad(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @sub seedable>}
