// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Forward mode of (multi)linear ops: the op applied to the tangents.

// dot is bilinear: d(A . B) = tA . B + A . tB
// CHECK-LABEL: func.func @dot_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<3x4xf32>, %[[ARG2:.*]]: tensor<2x3xf32>, %[[ARG3:.*]]: tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<2x3xf32>, tensor<3x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.dot %[[ARG2]], %[[ARG1]] : tensor<2x3xf32>, tensor<3x4xf32>
// CHECK:      %[[V2:.*]] = dlvm.dot %[[ARG0]], %[[ARG3]] : tensor<2x3xf32>, tensor<3x4xf32>
// CHECK:      %[[V3:.*]] = dlvm.add %[[V1]], %[[V2]] : tensor<2x4xf32>, tensor<2x4xf32>
// CHECK:      return %[[V3]] : tensor<2x4xf32>
func.func @dot(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %c = dlvm.dot %a, %b : tensor<2x3xf32>, tensor<3x4xf32>
  return %c : tensor<2x4xf32>
}
func.func private @dot_jvp(tensor<2x3xf32>, tensor<3x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @dot>}

// -----

// transpose and reduce add are linear: the same ops on the tangent
// CHECK-LABEL: func.func @lin_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2x3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.transpose %[[ARG0]] : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.transpose %[[ARG1]] : tensor<2x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.reduce add %[[V0]] dims [1] : tensor<3x2xf32>
// CHECK:      %[[V3:.*]] = dlvm.reduce add %[[V1]] dims [1] : tensor<3x2xf32>
// CHECK:      return %[[V3]] : tensor<3xf32>
func.func @lin(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %t = dlvm.transpose %x : tensor<2x3xf32>
  %r = dlvm.reduce add %t dims [1] : tensor<3x2xf32>
  return %r : tensor<3xf32>
}
func.func private @lin_jvp(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @lin>}

// -----

// convolve is bilinear
// CHECK-LABEL: func.func @conv_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<1x1x4xf32>, %[[ARG1:.*]]: tensor<2x1x2xf32>, %[[ARG2:.*]]: tensor<1x1x4xf32>, %[[ARG3:.*]]: tensor<2x1x2xf32>) -> tensor<1x2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.convolve %[[ARG0]], %[[ARG1]] : tensor<1x1x4xf32>, tensor<2x1x2xf32>
// CHECK:      %[[V1:.*]] = dlvm.convolve %[[ARG2]], %[[ARG1]] : tensor<1x1x4xf32>, tensor<2x1x2xf32>
// CHECK:      %[[V2:.*]] = dlvm.convolve %[[ARG0]], %[[ARG3]] : tensor<1x1x4xf32>, tensor<2x1x2xf32>
// CHECK:      %[[V3:.*]] = dlvm.add %[[V1]], %[[V2]] : tensor<1x2x3xf32>, tensor<1x2x3xf32>
// CHECK:      return %[[V3]] : tensor<1x2x3xf32>
func.func @conv(%x: tensor<1x1x4xf32>, %k: tensor<2x1x2xf32>) -> tensor<1x2x3xf32> {
  %y = dlvm.convolve %x, %k : tensor<1x1x4xf32>, tensor<2x1x2xf32>
  return %y : tensor<1x2x3xf32>
}
func.func private @conv_jvp(tensor<1x1x4xf32>, tensor<2x1x2xf32>, tensor<1x1x4xf32>, tensor<2x1x2xf32>) -> tensor<1x2x3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @conv>}
