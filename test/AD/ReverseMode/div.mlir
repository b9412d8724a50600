// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.div with broadcasting: the adjoint of the broadcast operand
// is summed over the broadcast dimension, then reshaped (sum_to).

// z = x / y: dx = g / y, dy = sum_to(-g * z / y) = sum_to(-g * x / y^2)
// (DLVM's Swift adjoint of divide was wrong.)
// CHECK-LABEL: func.func @div_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.div %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.div %[[ARG2]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG2]], %[[V0]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.div %[[V2]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.neg %[[V3]] : tensor<2x3xf32>
// CHECK:      %[[V5:.*]] = dlvm.reduce add %[[V4]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[V6:.*]] = dlvm.reshape %[[V5]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[V1]], %[[V6]] : tensor<2x3xf32>, tensor<1x3xf32>
func.func @div(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.div %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @div_grad(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @div seedable>}
