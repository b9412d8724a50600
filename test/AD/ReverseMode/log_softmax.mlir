// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.log_softmax.

// dx = g - exp(y) * sum(g, axis, keepdims)
// CHECK-LABEL: func.func @log_softmax_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x4xf32>, %[[ARG1:.*]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:      %[[V0:.*]] = dlvm.log_softmax %[[ARG0]] axis 1 : tensor<2x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.reduce add %[[ARG1]] dims [1] : tensor<2x4xf32>
// CHECK:      %[[V2:.*]] = dlvm.reshape %[[V1]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V3:.*]] = dlvm.exp %[[V0]] : tensor<2x4xf32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[V3]], %[[V2]] : tensor<2x4xf32>, tensor<2x1xf32>
// CHECK:      %[[V5:.*]] = dlvm.sub %[[ARG1]], %[[V4]] : tensor<2x4xf32>, tensor<2x4xf32>
// CHECK:      return %[[V5]] : tensor<2x4xf32>
func.func @log_softmax(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = dlvm.log_softmax %x axis 1 : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
func.func private @log_softmax_grad(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @log_softmax seedable>}
