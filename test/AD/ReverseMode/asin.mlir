// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.asin (g: the seed, y: the result).

// d asin(x) = g / sqrt(1 - x^2)
// CHECK-LABEL: func.func @asin_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.asin %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.square %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.sub %[[V2]], %[[V1]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.rsqrt %[[V3]] : tensor<4xf32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[ARG1]], %[[V4]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V5]] : tensor<4xf32>
func.func @asin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.asin %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @asin_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @asin seedable>}
