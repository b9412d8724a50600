// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.softmax.

// dx = y * (g - sum(g * y, axis, keepdims))
// CHECK-LABEL: func.func @softmax_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x4xf32>, %[[ARG1:.*]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:      %[[V0:.*]] = dlvm.softmax %[[ARG0]] axis 1 : tensor<2x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.mul %[[ARG1]], %[[V0]] : tensor<2x4xf32>, tensor<2x4xf32>
// CHECK:      %[[V2:.*]] = dlvm.reduce add %[[V1]] dims [1] : tensor<2x4xf32>
// CHECK:      %[[V3:.*]] = dlvm.reshape %[[V2]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V4:.*]] = dlvm.sub %[[ARG1]], %[[V3]] : tensor<2x4xf32>, tensor<2x1xf32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[V0]], %[[V4]] : tensor<2x4xf32>, tensor<2x4xf32>
// CHECK:      return %[[V5]] : tensor<2x4xf32>
func.func @softmax(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = dlvm.softmax %x axis 1 : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
func.func private @softmax_grad(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @softmax seedable>}
