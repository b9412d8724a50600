// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Forward mode of elementwise ops: the tangent is the same formula as the adjoint
// with the operand's tangent in place of the result's adjoint (t: tangent).

// d tanh(x) = t * (1 - y^2)
// CHECK-LABEL: func.func @tanh_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.tanh %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.square %[[V0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.sub %[[V2]], %[[V1]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[ARG1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V4]] : tensor<4xf32>
func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.tanh %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @tanh_jvp(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @tanh>}

// -----

// z = x * y with broadcasting: dz = tx * y + x * ty, each term broadcast to z's shape
// CHECK-LABEL: func.func @mul_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<1x3xf32>, %[[ARG2:.*]]: tensor<2x3xf32>, %[[ARG3:.*]]: tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.mul %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.mul %[[ARG2]], %[[ARG1]] : tensor<2x3xf32>, tensor<1x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[ARG3]], %[[ARG0]] : tensor<1x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.add %[[V1]], %[[V2]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      return %[[V3]] : tensor<2x3xf32>
func.func @mul(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %z = dlvm.mul %x, %y : tensor<2x3xf32>, tensor<1x3xf32>
  return %z : tensor<2x3xf32>
}
func.func private @mul_jvp(tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @mul>}

// -----

// z = x^y: dz = tx * y * x^(y-1) + ty * z * ln x
// CHECK-LABEL: func.func @pow_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<3xf32>, %[[ARG3:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.pow %[[ARG0]], %[[ARG1]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.sub %[[ARG1]], %[[V1]] : tensor<3xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.pow %[[ARG0]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[ARG1]], %[[V3]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[ARG2]], %[[V4]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V6:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V7:.*]] = dlvm.cmp eq, %[[ARG0]], %[[V6]] : tensor<3xf32>, tensor<f32>
// CHECK:      %[[V8:.*]] = dlvm.log %[[ARG0]] : tensor<3xf32>
// CHECK:      %[[V9:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V10:.*]] = dlvm.select %[[V7]], %[[V9]], %[[V8]] : tensor<3xi1>, tensor<f32>, tensor<3xf32>
// CHECK:      %[[V11:.*]] = dlvm.mul %[[V0]], %[[V10]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V12:.*]] = dlvm.mul %[[ARG3]], %[[V11]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      %[[V13:.*]] = dlvm.add %[[V5]], %[[V12]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      return %[[V13]] : tensor<3xf32>
func.func @pow(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %z = dlvm.pow %x, %y : tensor<3xf32>, tensor<3xf32>
  return %z : tensor<3xf32>
}
func.func private @pow_jvp(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @pow>}
