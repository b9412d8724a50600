// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.broadcast_to: sum over the broadcast dimensions.

// [1, 3] -> [4, 3]: dx = reshape(reduce add g dims [0], [1, 3])
// CHECK-LABEL: func.func @bcast_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<1x3xf32>, %[[ARG1:.*]]: tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.broadcast_to %[[ARG0]] to [4, 3] : tensor<1x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reduce add %[[ARG1]] dims [0] : tensor<4x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.reshape %[[V1]] to [1, 3] : tensor<3xf32>
// CHECK:      return %[[V2]] : tensor<1x3xf32>
func.func @bcast(%x: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %y = dlvm.broadcast_to %x to [4, 3] : tensor<1x3xf32>
  return %y : tensor<4x3xf32>
}
func.func private @bcast_grad(tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @bcast seedable>}

// -----

// rank 0 -> [2, 3]: dx = reduce add g dims [0, 1]
// CHECK-LABEL: func.func @bcast_scalar_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<f32>, %[[ARG1:.*]]: tensor<2x3xf32>) -> tensor<f32>
// CHECK:      %[[V0:.*]] = dlvm.broadcast_to %[[ARG0]] to [2, 3] : tensor<f32>
// CHECK:      %[[V1:.*]] = dlvm.reduce add %[[ARG1]] dims [0, 1] : tensor<2x3xf32>
// CHECK:      return %[[V1]] : tensor<f32>
func.func @bcast_scalar(%x: tensor<f32>) -> tensor<2x3xf32> {
  %y = dlvm.broadcast_to %x to [2, 3] : tensor<f32>
  return %y : tensor<2x3xf32>
}
func.func private @bcast_scalar_grad(tensor<f32>, tensor<2x3xf32>) -> tensor<f32>
    attributes {dlvm.gradient = #dlvm.gradient<of @bcast_scalar seedable>}
