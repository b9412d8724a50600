// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.sigmoid (g: the seed, y: the result).

// d sigmoid(x) = g * y * (1 - y)
// CHECK-LABEL: func.func @sigmoid_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.sigmoid %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.sub %[[V1]], %[[V0]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V3:.*]] = dlvm.mul %[[V0]], %[[V2]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[ARG1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V4]] : tensor<4xf32>
func.func @sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.sigmoid %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @sigmoid_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sigmoid seedable>}
