// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.add with broadcasting: the adjoint of the broadcast operand
// is summed over the broadcast dimension, then reshaped (sum_to).

// dx = g, dy = sum_to(g)
// CHECK-LABEL: func.func @add_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.add %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reduce add %[[ARG2]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.reshape %[[V1]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[ARG2]], %[[V2]] : tensor<2x3xf32>, tensor<1x3xf32>
func.func @add(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.add %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @add_grad(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @add seedable>}
