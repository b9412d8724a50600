// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.transpose: transpose back with the inverse permutation.

// default (reversal): dx = transpose(g)
// CHECK-LABEL: func.func @t2_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<3x2xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.transpose %[[ARG0]] : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.transpose %[[ARG1]] : tensor<3x2xf32>
// CHECK:      return %[[V1]] : tensor<2x3xf32>
func.func @t2(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %y = dlvm.transpose %x : tensor<2x3xf32>
  return %y : tensor<3x2xf32>
}
func.func private @t2_grad(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @t2 seedable>}

// -----

// perm [1, 2, 0]: dx = transpose(g, perm [2, 0, 1])
// CHECK-LABEL: func.func @t3_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3x4xf32>, %[[ARG1:.*]]: tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
// CHECK:      %[[V0:.*]] = dlvm.transpose %[[ARG0]] perm [1, 2, 0] : tensor<2x3x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.transpose %[[ARG1]] perm [2, 0, 1] : tensor<3x4x2xf32>
// CHECK:      return %[[V1]] : tensor<2x3x4xf32>
func.func @t3(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %y = dlvm.transpose %x perm [1, 2, 0] : tensor<2x3x4xf32>
  return %y : tensor<3x4x2xf32>
}
func.func private @t3_grad(tensor<2x3x4xf32>, tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @t3 seedable>}
