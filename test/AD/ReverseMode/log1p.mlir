// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.log1p (g: the seed, y: the result).

// d ln(1 + x) = g / (1 + x)
// CHECK-LABEL: func.func @log1p_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.log1p %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.add %[[ARG0]], %[[V1]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.div %[[ARG1]], %[[V2]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V3]] : tensor<4xf32>
func.func @log1p(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.log1p %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @log1p_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @log1p seedable>}
