// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.log (g: the seed, y: the result).

// d ln(x) = g / x
// CHECK-LABEL: func.func @log_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.log %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.div %[[ARG1]], %[[ARG0]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V1]] : tensor<4xf32>
func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.log %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @log_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @log seedable>}
