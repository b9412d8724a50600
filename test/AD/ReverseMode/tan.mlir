// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.tan (g: the seed, y: the result).

// d tan(x) = g * (1 + tan(x)^2) = g * (1 + y^2)
// CHECK-LABEL: func.func @tan_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.tan %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.square %[[V0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.add %[[V2]], %[[V1]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[ARG1]], %[[V3]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V4]] : tensor<4xf32>
func.func @tan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.tan %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @tan_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @tan seedable>}
