// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of func.call: the callee gets a seedable gradient (created once, next to the callee,
// as a private function @<callee>__grad_<wrt>), called with the result adjoint as the seed.

// CHECK-LABEL: func.func private @sq__grad_0(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.square %[[ARG0]] : tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG0]], %[[V1]] : tensor<3xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.mul %[[ARG1]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      return %[[V3]] : tensor<3xf32>
// CHECK-LABEL: func.func @twice_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = call @sq(%[[ARG0]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.mul %[[V0]], %[[ARG1]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V2:.*]] = call @sq(%[[V1]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK:      %[[V4:.*]] = call @sq__grad_0(%[[V1]], %[[V3]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[V4]], %[[ARG1]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V6:.*]] = call @sq__grad_0(%[[ARG0]], %[[V5]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:      return %[[V6]] : tensor<3xf32>
func.func @sq(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = dlvm.square %x : tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func @twice(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %a = func.call @sq(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %b = dlvm.mul %a, %w : tensor<3xf32>, tensor<3xf32>
  %c = func.call @sq(%b) : (tensor<3xf32>) -> tensor<3xf32>
  return %c : tensor<3xf32>
}
func.func private @twice_grad(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @twice wrt [0]>}
