// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.atan (g: the seed, y: the result).

// d atan(x) = g / (1 + x^2)
// CHECK-LABEL: func.func @atan_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.atan %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.square %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.add %[[V2]], %[[V1]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.div %[[ARG1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V4]] : tensor<4xf32>
func.func @atan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.atan %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @atan_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @atan seedable>}
