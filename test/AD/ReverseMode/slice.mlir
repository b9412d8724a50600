// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.slice: g inserted into zeros at the (strided) window.

// dx = insert_slice(g into zeros, offsets, sizes, strides)
// CHECK-LABEL: func.func @window_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4x8xf32>, %[[ARG1:.*]]: tensor<2x3xf32>) -> tensor<4x8xf32>
// CHECK:      %[[V0:.*]] = dlvm.slice %[[ARG0]] offsets [1, 2] sizes [2, 3] : tensor<4x8xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK:      %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[ARG1]] into %[[V1]][1, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x8xf32>
// CHECK:      return %[[INSERTED_SLICE]] : tensor<4x8xf32>
func.func @window(%x: tensor<4x8xf32>) -> tensor<2x3xf32> {
  %y = dlvm.slice %x offsets [1, 2] sizes [2, 3] : tensor<4x8xf32>
  return %y : tensor<2x3xf32>
}
func.func private @window_grad(tensor<4x8xf32>, tensor<2x3xf32>) -> tensor<4x8xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @window seedable>}

// -----

// strided: dx = insert_slice(g into zeros, [0, 1], [2, 3], [2, 2])
// CHECK-LABEL: func.func @strided_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4x8xf32>, %[[ARG1:.*]]: tensor<2x3xf32>) -> tensor<4x8xf32>
// CHECK:      %[[V0:.*]] = dlvm.slice %[[ARG0]] offsets [0, 1] sizes [2, 3] strides [2, 2] : tensor<4x8xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK:      %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[ARG1]] into %[[V1]][0, 1] [2, 3] [2, 2] : tensor<2x3xf32> into tensor<4x8xf32>
// CHECK:      return %[[INSERTED_SLICE]] : tensor<4x8xf32>
func.func @strided(%x: tensor<4x8xf32>) -> tensor<2x3xf32> {
  %y = dlvm.slice %x offsets [0, 1] sizes [2, 3] strides [2, 2] : tensor<4x8xf32>
  return %y : tensor<2x3xf32>
}
func.func private @strided_grad(tensor<4x8xf32>, tensor<2x3xf32>) -> tensor<4x8xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @strided seedable>}
