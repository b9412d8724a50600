// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Forward mode of func.call: the callee's JVP (created once, keeping every result)
// replaces the call and returns the results' tangents and the results.

// CHECK-LABEL: func.func private @sq__jvp_0(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.square %[[ARG0]] : tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG0]], %[[V1]] : tensor<3xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.mul %[[ARG1]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      return %[[V3]], %[[V0]] : tensor<3xf32>, tensor<3xf32>
// CHECK-LABEL: func.func @f_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]]:2 = call @sq__jvp_0(%[[ARG0]], %[[ARG1]]) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:      %[[V1:.*]] = dlvm.sin %[[V0]]#1 : tensor<3xf32>
// CHECK:      %[[V2:.*]] = dlvm.cos %[[V0]]#1 : tensor<3xf32>
// CHECK:      %[[V3:.*]] = dlvm.mul %[[V0]]#0, %[[V2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      return %[[V3]] : tensor<3xf32>
func.func @sq(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = dlvm.square %x : tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = func.call @sq(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %b = dlvm.sin %a : tensor<3xf32>
  return %b : tensor<3xf32>
}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @f>}
