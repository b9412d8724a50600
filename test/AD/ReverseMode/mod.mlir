// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.mod with broadcasting: the adjoint of the broadcast operand
// is summed over the broadcast dimension, then reshaped (sum_to).

// floored x mod y = x - floor(x / y) * y: dx = g, dy = sum_to(-g * floor(x / y))
// CHECK-LABEL: func.func @mod_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.mod %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.div %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.floor %[[V1]] : tensor<2x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.mul %[[ARG2]], %[[V2]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.neg %[[V3]] : tensor<2x3xf32>
// CHECK:      %[[V5:.*]] = dlvm.reduce add %[[V4]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[V6:.*]] = dlvm.reshape %[[V5]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[ARG2]], %[[V6]] : tensor<2x3xf32>, tensor<1x3xf32>
func.func @mod(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.mod %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @mod_grad(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @mod seedable>}
