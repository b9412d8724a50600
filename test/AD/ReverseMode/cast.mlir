// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.cast between float types: cast the adjoint back.

// dx = cast(g to f32)
// CHECK-LABEL: func.func @widen_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf64>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.cast %[[ARG0]] to f64 : tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.cast %[[ARG1]] to f32 : tensor<3xf64>
// CHECK:      return %[[V1]] : tensor<3xf32>
func.func @widen(%x: tensor<3xf32>) -> tensor<3xf64> {
  %y = dlvm.cast %x to f64 : tensor<3xf32>
  return %y : tensor<3xf64>
}
func.func private @widen_grad(tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @widen seedable>}
