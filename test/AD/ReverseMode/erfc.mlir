// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.erfc (g: the seed, y: the result).

// d erfc(x) = -g * 2/sqrt(pi) * e^(-x^2)
// CHECK-LABEL: func.func @erfc_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.erfc %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.square %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V2:.*]] = dlvm.neg %[[V1]] : tensor<4xf32>
// CHECK:      %[[V3:.*]] = dlvm.exp %[[V2]] : tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.constant dense<-1.12837923> : tensor<f32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[V3]], %[[V4]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V6:.*]] = dlvm.mul %[[ARG1]], %[[V5]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V6]] : tensor<4xf32>
func.func @erfc(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.erfc %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @erfc_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @erfc seedable>}
