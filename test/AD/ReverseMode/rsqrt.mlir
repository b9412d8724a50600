// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.rsqrt (g: the seed, y: the result).

// d x^(-1/2) = g * (-1/2) x^(-3/2) = g * (-1/2) * y^3
// CHECK-LABEL: func.func @rsqrt_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.rsqrt %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.square %[[V0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[V0]], %[[V1]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<-5.000000e-01> : tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[V2]], %[[V3]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[ARG1]], %[[V4]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V5]] : tensor<4xf32>
func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.rsqrt %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @rsqrt_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @rsqrt seedable>}
