// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.acos (g: the seed, y: the result).

// d acos(x) = -g / sqrt(1 - x^2)
// CHECK-LABEL: func.func @acos_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.acos %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.square %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.sub %[[V2]], %[[V1]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.rsqrt %[[V3]] : tensor<4xf32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[ARG1]], %[[V4]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V6:.*]] = dlvm.neg %[[V5]] : tensor<4xf32>
// CHECK:      return %[[V6]] : tensor<4xf32>
func.func @acos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.acos %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @acos_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @acos seedable>}
