// Layout assignment: elementwise ops, reductions, slices and pads between NCHW convolutions
// take the convolutions' layout, so that the transposes of an NHWC model cancel.
// RUN: dlvm-opt %s --dlvm-to-linalg --canonicalize --cse --dlvm-layout-assignment=report --verify-diagnostics | FileCheck %s
// RUN: dlvm-opt %s --dlvm-to-linalg --canonicalize --cse --dlvm-kernel-fusion=report -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUSED
// RUN: dlvm-opt %s --dlvm-to-linalg --canonicalize --cse --dlvm-kernel-fusion="report layouts=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=KEPT

// FUSED: @nhwc_block: 12 kernels (loop nests) -> 8 after fusion (before: conv 2, fill 1, generic 3, transpose 6; after: conv 2, fill 1, generic 5)
// KEPT: @nhwc_block: 12 kernels (loop nests) -> 10 after fusion (before: conv 2, fill 1, generic 3, transpose 6; after: conv 2, fill 1, generic 7)

// The bias is read along the channels of NCHW (loop 1), the sum over H and W keeps N and C.
// CHECK-DAG: #[[ROW:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d1)>
// CHECK-DAG: #[[N_C:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>

// Two NHWC layers as the JAX importer writes them (a transpose to NCHW before each
// convolution, one back after it), a bias, a relu, a padded second convolution and a
// cropped residual add: everything between the convolutions runs in NCHW, and only the
// input, the filters and the result are transposed.
// CHECK-LABEL: func.func @nhwc_block
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: %[[BIAS:.*]] = linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[ROW]], #[[ID]]]{{.*}} ins(%[[CONV]], %{{.*}} : tensor<2x8x8x8xf32>, tensor<1x1x1x8xf32>)
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[BIAS]], %{{.*}} : tensor<2x8x8x8xf32>, tensor<f32>)
// CHECK: linalg.generic {{.*}} ins(%arg3 : tensor<3x3x8x8xf32>) outs(%{{.*}} : tensor<8x8x3x3xf32>)
// CHECK-NOT: linalg.generic
// CHECK: tensor.pad %[[RELU]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[CONV2:.*]] = linalg.conv_2d_nchw_fchw
// CHECK-DAG: %[[CROP:.*]] = tensor.extract_slice %[[RELU]][0, 0, 1, 1] [2, 8, 6, 6] [1, 1, 1, 1]
// CHECK-DAG: %[[CROP2:.*]] = tensor.extract_slice %[[CONV2]][0, 0, 1, 1] [2, 8, 6, 6] [1, 1, 1, 1]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[CROP2]], %[[CROP]] : tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>)
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[TO_NHWC:map[0-9]*]], #[[ID]]]{{.*}} ins(%[[SUM]] : tensor<2x8x6x6xf32>) outs(%{{.*}} : tensor<2x6x6x8xf32>)
// CHECK: return %[[OUT]]
// expected-remark @+1 {{@nhwc_block: 1 groups laid out (9 ops); elements transposed: 3072 -> 576}}
func.func @nhwc_block(%x: tensor<2x10x10x3xf32>, %k1: tensor<3x3x3x8xf32>, %b: tensor<8xf32>, %k2: tensor<3x3x8x8xf32>) -> tensor<2x6x6x8xf32> {
  %0 = dlvm.transpose %x perm [0, 3, 1, 2] : tensor<2x10x10x3xf32>
  %1 = dlvm.transpose %k1 perm [3, 2, 0, 1] : tensor<3x3x3x8xf32>
  %2 = dlvm.convolve %0, %1 strides [1, 1] padding [0, 0, 0, 0] lhs_dilation [1, 1] rhs_dilation [1, 1] : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>
  %3 = dlvm.transpose %2 perm [0, 2, 3, 1] : tensor<2x8x8x8xf32>
  %4 = dlvm.reshape %b to [1, 1, 1, 8] : tensor<8xf32>
  %5 = dlvm.add %3, %4 : tensor<2x8x8x8xf32>, tensor<1x1x1x8xf32>
  %6 = dlvm.constant dense<0.000000e+00> : tensor<f32>
  %7 = dlvm.max %5, %6 : tensor<2x8x8x8xf32>, tensor<f32>
  %8 = dlvm.transpose %7 perm [0, 3, 1, 2] : tensor<2x8x8x8xf32>
  %9 = dlvm.transpose %k2 perm [3, 2, 0, 1] : tensor<3x3x8x8xf32>
  %10 = dlvm.convolve %8, %9 strides [1, 1] padding [1, 1, 1, 1] lhs_dilation [1, 1] rhs_dilation [1, 1] : tensor<2x8x8x8xf32>, tensor<8x8x3x3xf32>
  %11 = dlvm.transpose %10 perm [0, 2, 3, 1] : tensor<2x8x8x8xf32>
  %12 = dlvm.slice %7 offsets [0, 1, 1, 0] sizes [2, 6, 6, 8] : tensor<2x8x8x8xf32>
  %13 = dlvm.slice %11 offsets [0, 1, 1, 0] sizes [2, 6, 6, 8] : tensor<2x8x8x8xf32>
  %14 = dlvm.add %13, %12 : tensor<2x6x6x8xf32>, tensor<2x6x6x8xf32>
  return %14 : tensor<2x6x6x8xf32>
}

// A reduction over an NHWC view of a convolution's result: the tanh and the sum read the
// result as it is, the sum reduces its two innermost loops.
// CHECK-LABEL: func.func @mean_of_nhwc
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: %[[TANH:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]]{{.*}} ins(%[[CONV]] : tensor<2x8x8x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[N_C]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[TANH]] : tensor<2x8x8x8xf32>) outs(%{{.*}} : tensor<2x8xf32>)
// expected-remark @+1 {{@mean_of_nhwc: 1 groups laid out (3 ops); elements transposed: 1024 -> 0}}
func.func @mean_of_nhwc(%x: tensor<2x3x10x10xf32>, %k: tensor<8x3x3x3xf32>) -> tensor<2x8xf32> {
  %0 = dlvm.convolve %x, %k strides [1, 1] padding [0, 0, 0, 0] lhs_dilation [1, 1] rhs_dilation [1, 1] : tensor<2x3x10x10xf32>, tensor<8x3x3x3xf32>
  %1 = dlvm.transpose %0 perm [0, 2, 3, 1] : tensor<2x8x8x8xf32>
  %2 = dlvm.tanh %1 : tensor<2x8x8x8xf32>
  %3 = dlvm.reduce add %2 dims [1, 2] : tensor<2x8x8x8xf32>
  return %3 : tensor<2x8xf32>
}

// One transpose between an argument and a result: moving it gains nothing, it stays
// (no remark).
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.generic {indexing_maps = [#[[T:map[0-9]*]], #[[ID2:map[0-9]*]]]{{.*}} ins(%arg0 : tensor<4x6xf32>) outs(%{{.*}} : tensor<6x4xf32>)
// CHECK: math.exp
func.func @left_alone(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %0 = dlvm.transpose %x perm [1, 0] : tensor<4x6xf32>
  %1 = dlvm.exp %0 : tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// x + transpose(x) ties the two loops of the add together: the read of the transpose is
// left a plain read, nothing is rewritten.
// CHECK-LABEL: func.func @x_plus_its_transpose
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<5x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[T]] : tensor<5x5xf32>, tensor<5x5xf32>)
func.func @x_plus_its_transpose(%x: tensor<5x5xf32>, %y: tensor<5x5xf32>) -> tensor<5x5xf32> {
  %0 = dlvm.transpose %x perm [1, 0] : tensor<5x5xf32>
  %1 = dlvm.add %x, %0 : tensor<5x5xf32>, tensor<5x5xf32>
  %2 = dlvm.transpose %1 perm [1, 0] : tensor<5x5xf32>
  %3 = dlvm.mul %2, %y : tensor<5x5xf32>, tensor<5x5xf32>
  return %3 : tensor<5x5xf32>
}
