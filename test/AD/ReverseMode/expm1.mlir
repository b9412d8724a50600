// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.expm1 (g: the seed, y: the result).

// d (e^x - 1) = g * e^x = g * (y + 1)
// CHECK-LABEL: func.func @expm1_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.expm1 %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.add %[[V0]], %[[V1]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.mul %[[ARG1]], %[[V2]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V3]] : tensor<4xf32>
func.func @expm1(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.expm1 %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @expm1_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @expm1 seedable>}
