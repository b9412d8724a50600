// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.min with broadcasting: the adjoint of the broadcast operand
// is summed over the broadcast dimension, then reshaped (sum_to).

// dx = g where x <= y, dy = sum_to(g where x > y): ties go to the left operand
// CHECK-LABEL: func.func @min_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.min %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.cmp le, %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.select %[[V1]], %[[ARG2]], %[[V2]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.cmp le, %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V5:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V6:.*]] = dlvm.select %[[V4]], %[[V5]], %[[ARG2]] : tensor<2x3xi1>, tensor<f32>, tensor<2x3xf32>
// CHECK:      %[[V7:.*]] = dlvm.reduce add %[[V6]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[V8:.*]] = dlvm.reshape %[[V7]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[V3]], %[[V8]] : tensor<2x3xf32>, tensor<1x3xf32>
func.func @min(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.min %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @min_grad(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @min seedable>}
