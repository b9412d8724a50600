// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.select (the mask is not differentiable).

// d on_true = sum_to(select(mask, g, 0)), d on_false = sum_to(select(mask, 0, g))
// CHECK-LABEL: func.func @select_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xi1>, %[[ARG1:.*]]: tensor<2x3xf32>, %[[ARG2:.*]]: tensor<f32>, %[[ARG3:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<f32>)
// CHECK:      %[[V0:.*]] = dlvm.select %[[ARG0]], %[[ARG1]], %[[ARG2]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.select %[[ARG0]], %[[ARG3]], %[[V1]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.select %[[ARG0]], %[[V3]], %[[ARG3]] : tensor<2x3xi1>, tensor<f32>, tensor<2x3xf32>
// CHECK:      %[[V5:.*]] = dlvm.reduce add %[[V4]] dims [0, 1] : tensor<2x3xf32>
// CHECK:      return %[[V2]], %[[V5]] : tensor<2x3xf32>, tensor<f32>
func.func @select(%m: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %r = dlvm.select %m, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>
  return %r : tensor<2x3xf32>
}
func.func private @select_grad(tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<f32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @select wrt [1, 2] seedable>}
