// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.concatenate: each operand's adjoint is its slice of g.

// da = slice(g, [0, 0], [2, 3]), db = slice(g, [0, 3], [2, 2])
// CHECK-LABEL: func.func @cat_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2x2xf32>, %[[ARG2:.*]]: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>)
// CHECK:      %[[V0:.*]] = dlvm.concatenate %[[ARG0]], %[[ARG1]] axis 1 : tensor<2x3xf32>, tensor<2x2xf32>
// CHECK:      %[[V1:.*]] = dlvm.slice %[[ARG2]] offsets [0, 0] sizes [2, 3] : tensor<2x5xf32>
// CHECK:      %[[V2:.*]] = dlvm.slice %[[ARG2]] offsets [0, 3] sizes [2, 2] : tensor<2x5xf32>
// CHECK:      return %[[V1]], %[[V2]] : tensor<2x3xf32>, tensor<2x2xf32>
func.func @cat(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %c = dlvm.concatenate %a, %b axis 1 : tensor<2x3xf32>, tensor<2x2xf32>
  return %c : tensor<2x5xf32>
}
func.func private @cat_grad(tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @cat seedable>}
