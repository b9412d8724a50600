// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.relu (g: the seed, y: the result).

// d relu(x) = g where relu(x) > 0 (exactly where x > 0), else 0: the gradient keeps the
// result, not the argument
// CHECK-LABEL: func.func @relu_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.relu %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.cmp gt, %[[V0]], %[[V1]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.select %[[V2]], %[[ARG1]], %[[V3]] : tensor<4xi1>, tensor<4xf32>, tensor<f32>
// CHECK:      return %[[V4]] : tensor<4xf32>
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @relu_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @relu seedable>}
