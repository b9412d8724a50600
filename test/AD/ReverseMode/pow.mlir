// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.pow with broadcasting: the adjoint of the broadcast operand
// is summed over the broadcast dimension, then reshaped (sum_to).

// z = x^y: dx = g * y * x^(y-1), dy = sum_to(g * z * ln x) with ln x taken as 0 where x == 0
// (DLVM's Swift adjoint of power was wrong.)
// CHECK-LABEL: func.func @pow_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.pow %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.sub %[[ARG1]], %[[V1]] : tensor<1x3xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.pow %[[ARG0]], %[[V2]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[ARG1]], %[[V3]] : tensor<1x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[ARG2]], %[[V4]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V6:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V7:.*]] = dlvm.cmp eq, %[[ARG0]], %[[V6]] : tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[V8:.*]] = dlvm.log %[[ARG0]] : tensor<2x3xf32>
// CHECK:      %[[V9:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V10:.*]] = dlvm.select %[[V7]], %[[V9]], %[[V8]] : tensor<2x3xi1>, tensor<f32>, tensor<2x3xf32>
// CHECK:      %[[V11:.*]] = dlvm.mul %[[V0]], %[[V10]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V12:.*]] = dlvm.mul %[[ARG2]], %[[V11]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V13:.*]] = dlvm.reduce add %[[V12]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[V14:.*]] = dlvm.reshape %[[V13]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[V5]], %[[V14]] : tensor<2x3xf32>, tensor<1x3xf32>
func.func @pow(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.pow %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @pow_grad(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @pow seedable>}
