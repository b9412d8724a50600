// dlvm.convolve: input dilation/padding first, then a named linalg convolution
// where one fits, else a grouped linalg.generic.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-DAG: #[[IN1:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 * 2 + d5 * 3)>
// CHECK-DAG: #[[K1:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
// CHECK-DAG: #[[OUT1:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x7x8xf32>, %[[K:.*]]: tensor<4x3x3x2xf32>)
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<2x4x3x6xf32>)
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
// CHECK-SAME: ins(%[[X]], %[[K]] : tensor<2x3x7x8xf32>, tensor<4x3x3x2xf32>) outs(%[[F]] : tensor<2x4x3x6xf32>)
// CHECK: return %[[C]]
func.func @conv2d(%x: tensor<2x3x7x8xf32>, %k: tensor<4x3x3x2xf32>) -> tensor<2x4x3x6xf32> {
  %r = dlvm.convolve %x, %k strides [2, 1] rhs_dilation [1, 2] : tensor<2x3x7x8xf32>, tensor<4x3x3x2xf32>
  return %r : tensor<2x4x3x6xf32>
}

// CHECK-LABEL: func.func @conv2d_padding
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<2x3x7x8xf32> to tensor<2x3x9x10xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %{{.*}} : tensor<2x3x9x10xf32>, tensor<4x3x3x2xf32>)
func.func @conv2d_padding(%x: tensor<2x3x7x8xf32>, %k: tensor<4x3x3x2xf32>) -> tensor<2x4x7x9xf32> {
  %r = dlvm.convolve %x, %k padding [1, 1, 1, 1] : tensor<2x3x7x8xf32>, tensor<4x3x3x2xf32>
  return %r : tensor<2x4x7x9xf32>
}

// Input dilation: the input is inserted with strides into a zero tensor of
// the dilated, padded size.
// CHECK-LABEL: func.func @conv2d_lhs_dilation
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[K:.*]]: tensor<3x2x2x2xf32>)
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x9x7xf32>)
// CHECK: %[[D:.*]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 1, 0] [1, 2, 4, 4] [1, 1, 2, 2] : tensor<1x2x4x4xf32> into tensor<1x2x9x7xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[D]], %[[K]] : tensor<1x2x9x7xf32>, tensor<3x2x2x2xf32>)
func.func @conv2d_lhs_dilation(%x: tensor<1x2x4x4xf32>, %k: tensor<3x2x2x2xf32>) -> tensor<1x3x8x6xf32> {
  %r = dlvm.convolve %x, %k padding [1, 1, 0, 0] lhs_dilation [2, 2] : tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>
  return %r : tensor<1x3x8x6xf32>
}

// Negative padding crops.
// CHECK-LABEL: func.func @conv2d_negative_padding
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 0, 1] high[0, 0, 0, 0]
// CHECK: %[[S:.*]] = tensor.extract_slice %[[P]][0, 0, 1, 0] [2, 3, 6, 9] [1, 1, 1, 1] : tensor<2x3x7x9xf32> to tensor<2x3x6x9xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[S]], %{{.*}} : tensor<2x3x6x9xf32>
func.func @conv2d_negative_padding(%x: tensor<2x3x7x8xf32>, %k: tensor<4x3x3x2xf32>) -> tensor<2x4x4x8xf32> {
  %r = dlvm.convolve %x, %k padding [-1, 0, 1, 0] : tensor<2x3x7x8xf32>, tensor<4x3x3x2xf32>
  return %r : tensor<2x4x4x8xf32>
}

// Feature groups, 2-D: channels split into (groups, channels per group).
// CHECK-LABEL: func.func @conv2d_groups
// CHECK-SAME: (%[[X:.*]]: tensor<2x6x6x5xf32>, %[[K:.*]]: tensor<9x2x2x3xf32>)
// CHECK-DAG: %[[XG:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 3, 2, 6, 5] : tensor<2x6x6x5xf32> into tensor<2x3x2x6x5xf32>
// CHECK-DAG: %[[KG:.*]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3], [4]] output_shape [3, 3, 2, 2, 3] : tensor<9x2x2x3xf32> into tensor<3x3x2x2x3xf32>
// CHECK: %[[C:.*]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%[[XG]], %[[KG]] : tensor<2x3x2x6x5xf32>, tensor<3x3x2x2x3xf32>) outs(%{{.*}} : tensor<2x3x3x5x3xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0], [1, 2], [3], [4]] : tensor<2x3x3x5x3xf32> into tensor<2x9x5x3xf32>
// CHECK: return %[[R]]
func.func @conv2d_groups(%x: tensor<2x6x6x5xf32>, %k: tensor<9x2x2x3xf32>) -> tensor<2x9x5x3xf32> {
  %r = dlvm.convolve %x, %k groups 3 : tensor<2x6x6x5xf32>, tensor<9x2x2x3xf32>
  return %r : tensor<2x9x5x3xf32>
}

// CHECK-LABEL: func.func @conv1d
// CHECK: linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
func.func @conv1d(%x: tensor<2x4x11xf32>, %k: tensor<5x4x3xf32>) -> tensor<2x5x5xf32> {
  %r = dlvm.convolve %x, %k strides [2] : tensor<2x4x11xf32>, tensor<5x4x3xf32>
  return %r : tensor<2x5x5xf32>
}

// Grouped 1-D: no named op, a generic over (n, g, f, o, c, w).
// CHECK-LABEL: func.func @conv1d_groups
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[IN1]], #[[K1]], #[[OUT1]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x2x2x11xf32>, tensor<2x3x2x3xf32>) outs(%{{.*}} : tensor<2x2x3x3xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK: linalg.yield %[[S]]
// CHECK: tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2], [3]] : tensor<2x2x3x3xf32> into tensor<2x6x3xf32>
func.func @conv1d_groups(%x: tensor<2x4x11xf32>, %k: tensor<6x2x3xf32>) -> tensor<2x6x3xf32> {
  %r = dlvm.convolve %x, %k strides [2] rhs_dilation [3] groups 2 : tensor<2x4x11xf32>, tensor<6x2x3xf32>
  return %r : tensor<2x6x3xf32>
}

// CHECK-LABEL: func.func @conv3d
// CHECK: linalg.conv_3d_ncdhw_fcdhw
func.func @conv3d(%x: tensor<1x2x5x4x6xf32>, %k: tensor<3x2x2x3x2xf32>) -> tensor<1x3x4x2x5xf32> {
  %r = dlvm.convolve %x, %k : tensor<1x2x5x4x6xf32>, tensor<3x2x2x3x2xf32>
  return %r : tensor<1x3x4x2x5xf32>
}

// CHECK-LABEL: func.func @conv2d_i32
// CHECK: arith.constant 0 : i32
// CHECK: linalg.conv_2d_nchw_fchw
func.func @conv2d_i32(%x: tensor<1x2x5x5xi32>, %k: tensor<2x2x2x2xi32>) -> tensor<1x2x4x4xi32> {
  %r = dlvm.convolve %x, %k : tensor<1x2x5x5xi32>, tensor<2x2x2x2xi32>
  return %r : tensor<1x2x4x4xi32>
}
