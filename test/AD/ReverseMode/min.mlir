// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.min with broadcasting: the adjoint of the broadcast operand
// is summed over the broadcast dimension, then reshaped (sum_to).

// JAX's rule: an operand equal to the result z gets g, half of it at a tie
// (both equal z), none where it differs (also where z is NaN):
// dx = select(x == z, select(y == z, g * 0.5, g), 0), dy likewise then sum_to.
// CHECK-LABEL: func.func @min_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:      %[[Z:.*]] = dlvm.min %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[XZ:.*]] = dlvm.cmp eq, %[[ARG0]], %[[Z]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[YZ:.*]] = dlvm.cmp eq, %[[ARG1]], %[[Z]] : tensor<1x3xf32>, tensor<2x3xf32>
// CHECK:      %[[H:.*]] = dlvm.constant dense<5.000000e-01> : tensor<f32>
// CHECK:      %[[HG:.*]] = dlvm.mul %[[ARG2]], %[[H]] : tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[T:.*]] = dlvm.select %[[YZ]], %[[HG]], %[[ARG2]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[C0:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[DX:.*]] = dlvm.select %[[XZ]], %[[T]], %[[C0]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[YZ2:.*]] = dlvm.cmp eq, %[[ARG1]], %[[Z]] : tensor<1x3xf32>, tensor<2x3xf32>
// CHECK:      %[[XZ2:.*]] = dlvm.cmp eq, %[[ARG0]], %[[Z]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[H2:.*]] = dlvm.constant dense<5.000000e-01> : tensor<f32>
// CHECK:      %[[HG2:.*]] = dlvm.mul %[[ARG2]], %[[H2]] : tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[T2:.*]] = dlvm.select %[[XZ2]], %[[HG2]], %[[ARG2]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[C1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[DY:.*]] = dlvm.select %[[YZ2]], %[[T2]], %[[C1]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[S:.*]] = dlvm.reduce add %[[DY]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[R:.*]] = dlvm.reshape %[[S]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[DX]], %[[R]] : tensor<2x3xf32>, tensor<1x3xf32>
func.func @min(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.min %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @min_grad(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @min seedable>}
