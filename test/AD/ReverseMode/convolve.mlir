// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.convolve (NCHW input, OIHW kernel).
// d input: a transposed convolution: g with lhs_dilation = strides, the kernel with
// input/output channels swapped per group and flipped spatially, padding (K-1-lo, N+lo-(m-1)s-1),
// rhs_dilation as in the forward op; then every lhs_dilation-th element.
// d kernel: a convolution over the batch: the input as [C, N, ...] with g as [O, N, ...]
// for its kernel, strides = rhs_dilation, rhs_dilation = strides; one per group, concatenated.
// Negative padding is rejected (see errors.mlir).

// stride 1, no padding
// CHECK-LABEL: func.func @conv_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<1x2x5x5xf32>, %[[ARG1:.*]]: tensor<3x2x3x3xf32>, %[[ARG2:.*]]: tensor<1x3x3x3xf32>) -> (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>)
// CHECK:      %[[V0:.*]] = dlvm.convolve %[[ARG0]], %[[ARG1]] : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[ARG1]] to [1, 3, 2, 3, 3] : tensor<3x2x3x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.transpose %[[V1]] perm [0, 2, 1, 3, 4] : tensor<1x3x2x3x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.reshape %[[V2]] to [2, 3, 3, 3] : tensor<1x2x3x3x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.reverse %[[V3]] dims [2, 3] : tensor<2x3x3x3xf32>
// CHECK:      %[[V5:.*]] = dlvm.convolve %[[ARG2]], %[[V4]] padding [2, 2, 2, 2] : tensor<1x3x3x3xf32>, tensor<2x3x3x3xf32>
// CHECK:      %[[V6:.*]] = dlvm.transpose %[[ARG0]] perm [1, 0, 2, 3] : tensor<1x2x5x5xf32>
// CHECK:      %[[V7:.*]] = dlvm.transpose %[[ARG2]] perm [1, 0, 2, 3] : tensor<1x3x3x3xf32>
// CHECK:      %[[V8:.*]] = dlvm.convolve %[[V6]], %[[V7]] : tensor<2x1x5x5xf32>, tensor<3x1x3x3xf32>
// CHECK:      %[[V9:.*]] = dlvm.transpose %[[V8]] perm [1, 0, 2, 3] : tensor<2x3x3x3xf32>
// CHECK:      return %[[V5]], %[[V9]] : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>
func.func @conv(%x: tensor<1x2x5x5xf32>, %k: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %y = dlvm.convolve %x, %k : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}
func.func private @conv_grad(tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<1x3x3x3xf32>) -> (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @conv seedable>}

// -----

// strides, padding, both dilations and groups
// CHECK-LABEL: func.func @conv_general_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x4x7xf32>, %[[ARG1:.*]]: tensor<6x2x2xf32>, %[[ARG2:.*]]: tensor<2x6x7xf32>) -> (tensor<2x4x7xf32>, tensor<6x2x2xf32>)
// CHECK:      %[[V0:.*]] = dlvm.convolve %[[ARG0]], %[[ARG1]] strides [2] padding [1, 2] lhs_dilation [2] rhs_dilation [2] groups 2 : tensor<2x4x7xf32>, tensor<6x2x2xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[ARG1]] to [2, 3, 2, 2] : tensor<6x2x2xf32>
// CHECK:      %[[V2:.*]] = dlvm.transpose %[[V1]] perm [0, 2, 1, 3] : tensor<2x3x2x2xf32>
// CHECK:      %[[V3:.*]] = dlvm.reshape %[[V2]] to [4, 3, 2] : tensor<2x2x3x2xf32>
// CHECK:      %[[V4:.*]] = dlvm.reverse %[[V3]] dims [2] : tensor<4x3x2xf32>
// CHECK:      %[[V5:.*]] = dlvm.convolve %[[ARG2]], %[[V4]] padding [1, 1] lhs_dilation [2] rhs_dilation [2] groups 2 : tensor<2x6x7xf32>, tensor<4x3x2xf32>
// CHECK:      %[[V6:.*]] = dlvm.slice %[[V5]] offsets [0, 0, 0] sizes [2, 4, 7] strides [1, 1, 2] : tensor<2x4x13xf32>
// The kernel gradient of both groups is one grouped convolution: the input as [C/G, G*N, ...]
// (each group's images are its channels), the cotangent as the kernel [O, N, ...].
// CHECK:      %[[V7:.*]] = dlvm.reshape %[[ARG0]] to [2, 2, 2, 7] : tensor<2x4x7xf32>
// CHECK:      %[[V8:.*]] = dlvm.transpose %[[V7]] perm [2, 1, 0, 3] : tensor<2x2x2x7xf32>
// CHECK:      %[[V9:.*]] = dlvm.reshape %[[V8]] to [2, 4, 7] : tensor<2x2x2x7xf32>
// CHECK:      %[[V10:.*]] = dlvm.reshape %[[ARG2]] to [2, 2, 3, 7] : tensor<2x6x7xf32>
// CHECK:      %[[V11:.*]] = dlvm.transpose %[[V10]] perm [1, 2, 0, 3] : tensor<2x2x3x7xf32>
// CHECK:      %[[V12:.*]] = dlvm.reshape %[[V11]] to [6, 2, 7] : tensor<2x3x2x7xf32>
// CHECK:      %[[V13:.*]] = dlvm.convolve %[[V9]], %[[V12]] strides [2] padding [1, 2] lhs_dilation [2] rhs_dilation [2] groups 2 : tensor<2x4x7xf32>, tensor<6x2x7xf32>
// CHECK:      %[[V14:.*]] = dlvm.transpose %[[V13]] perm [1, 0, 2] : tensor<2x6x2xf32>
// CHECK:      return %[[V6]], %[[V14]] : tensor<2x4x7xf32>, tensor<6x2x2xf32>
func.func @conv_general(%x: tensor<2x4x7xf32>, %k: tensor<6x2x2xf32>) -> tensor<2x6x7xf32> {
  %y = dlvm.convolve %x, %k strides [2] padding [1, 2] lhs_dilation [2] rhs_dilation [2] groups 2 : tensor<2x4x7xf32>, tensor<6x2x2xf32>
  return %y : tensor<2x6x7xf32>
}
func.func private @conv_general_grad(tensor<2x4x7xf32>, tensor<6x2x2xf32>, tensor<2x6x7xf32>) -> (tensor<2x4x7xf32>, tensor<6x2x2xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @conv_general seedable>}
