// Every dlvm op round-trips in custom form, through dlvm-opt and through the
// stock mlir-opt with the plugin; the generic form parses back to the same.
// RUN: %mlir_opt %s | %mlir_opt | FileCheck %s
// RUN: %mlir_opt %s --mlir-print-op-generic | %mlir_opt | FileCheck %s
// RUN: dlvm-opt %s | dlvm-opt | FileCheck %s

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>) {
  // CHECK: dlvm.neg %{{.*}} : tensor<4x8xf32>
  %0 = dlvm.neg %x : tensor<4x8xf32>
  // CHECK: dlvm.exp %{{.*}} : tensor<4x8xf32>
  %1 = dlvm.exp %x : tensor<4x8xf32>
  // CHECK: dlvm.log %{{.*}} : tensor<4x8xf32>
  %2 = dlvm.log %x : tensor<4x8xf32>
  // CHECK: dlvm.tanh
  %3 = dlvm.tanh %x : tensor<4x8xf32>
  // CHECK: dlvm.sigmoid
  %4 = dlvm.sigmoid %x : tensor<4x8xf32>
  // CHECK: dlvm.relu
  %5 = dlvm.relu %x : tensor<4x8xf32>
  // CHECK: dlvm.sqrt
  %6 = dlvm.sqrt %x : tensor<4x8xf32>
  // CHECK: dlvm.rsqrt
  %7 = dlvm.rsqrt %x : tensor<4x8xf32>
  // CHECK: dlvm.square
  %8 = dlvm.square %x : tensor<4x8xf32>
  // CHECK: dlvm.sign
  %9 = dlvm.sign %x : tensor<4x8xf32>
  // CHECK: dlvm.abs
  %10 = dlvm.abs %x : tensor<4x8xf32>
  // CHECK: dlvm.sin
  %11 = dlvm.sin %x : tensor<4x8xf32>
  // CHECK: dlvm.cos
  %12 = dlvm.cos %x : tensor<4x8xf32>
  // CHECK: dlvm.tan
  %13 = dlvm.tan %x : tensor<4x8xf32>
  // CHECK: dlvm.asin
  %14 = dlvm.asin %x : tensor<4x8xf32>
  // CHECK: dlvm.acos
  %15 = dlvm.acos %x : tensor<4x8xf32>
  // CHECK: dlvm.atan
  %16 = dlvm.atan %x : tensor<4x8xf32>
  // CHECK: dlvm.sinh
  %17 = dlvm.sinh %x : tensor<4x8xf32>
  // CHECK: dlvm.cosh
  %18 = dlvm.cosh %x : tensor<4x8xf32>
  // CHECK: dlvm.floor
  %19 = dlvm.floor %x : tensor<4x8xf32>
  // CHECK: dlvm.ceil
  %20 = dlvm.ceil %x : tensor<4x8xf32>
  // CHECK: dlvm.round
  %21 = dlvm.round %x : tensor<4x8xf32>
  // CHECK: dlvm.rint
  %22 = dlvm.rint %x : tensor<4x8xf32>
  // CHECK: dlvm.erf
  %23 = dlvm.erf %x : tensor<4x8xf32>
  // CHECK: dlvm.erfc
  %24 = dlvm.erfc %x : tensor<4x8xf32>
  // CHECK: dlvm.lgamma
  %25 = dlvm.lgamma %x : tensor<4x8xf32>
  // CHECK: dlvm.digamma
  %26 = dlvm.digamma %x : tensor<4x8xf32>
  // CHECK: dlvm.log1p
  %27 = dlvm.log1p %x : tensor<4x8xf32>
  // CHECK: dlvm.expm1
  %28 = dlvm.expm1 %x : tensor<4x8xf32>
  // CHECK: dlvm.neg %{{.*}} : tensor<4xi32>
  %29 = dlvm.neg %i : tensor<4xi32>
  // CHECK: dlvm.not %{{.*}} : tensor<4xi1>
  %30 = dlvm.not %b : tensor<4xi1>
  // CHECK: dlvm.abs %{{.*}} : tensor<4xi32>
  %31 = dlvm.abs %i : tensor<4xi32>
  return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<4x8xf32>, %row: tensor<1x8xf32>, %s: tensor<f32>,
                  %i: tensor<4xi32>, %b: tensor<4xi1>) {
  // CHECK: dlvm.add %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<1x8xf32>
  %0 = dlvm.add %x, %row : tensor<4x8xf32>, tensor<1x8xf32>
  // CHECK: dlvm.sub %{{.*}}, %{{.*}} : tensor<f32>, tensor<4x8xf32>
  %1 = dlvm.sub %s, %x : tensor<f32>, tensor<4x8xf32>
  // CHECK: dlvm.mul
  %2 = dlvm.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: dlvm.div
  %3 = dlvm.div %x, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: dlvm.pow
  %4 = dlvm.pow %x, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: dlvm.min
  %5 = dlvm.min %x, %row : tensor<4x8xf32>, tensor<1x8xf32>
  // CHECK: dlvm.max
  %6 = dlvm.max %x, %row : tensor<4x8xf32>, tensor<1x8xf32>
  // CHECK: dlvm.mod
  %7 = dlvm.mod %i, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: dlvm.floor_div
  %8 = dlvm.floor_div %x, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: dlvm.trunc_div
  %9 = dlvm.trunc_div %i, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: dlvm.and %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xi1>
  %10 = dlvm.and %b, %b : tensor<4xi1>, tensor<4xi1>
  // CHECK: dlvm.or %{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi32>
  %11 = dlvm.or %i, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: dlvm.xor %{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi32>
  %x1 = dlvm.xor %i, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: dlvm.rem %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<f32>
  %x2 = dlvm.rem %x, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: dlvm.atan2 %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<1x8xf32>
  %x3 = dlvm.atan2 %x, %row : tensor<4x8xf32>, tensor<1x8xf32>
  // CHECK: dlvm.shift_left
  %x4 = dlvm.shift_left %i, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: dlvm.shift_right_arithmetic
  %x5 = dlvm.shift_right_arithmetic %i, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: dlvm.shift_right_logical
  %x6 = dlvm.shift_right_logical %i, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: dlvm.popcount %{{.*}} : tensor<4xi32>
  %x7 = dlvm.popcount %i : tensor<4xi32>
  // CHECK: dlvm.is_finite %{{.*}} : tensor<4x8xf32>
  %x8 = dlvm.is_finite %x : tensor<4x8xf32>
  // CHECK: dlvm.clamp %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<4x8xf32>, tensor<f32>
  %x9 = dlvm.clamp %s, %x, %s : tensor<f32>, tensor<4x8xf32>, tensor<f32>
  // CHECK: dlvm.cbrt
  %x10 = dlvm.cbrt %x : tensor<4x8xf32>
  // CHECK: dlvm.cmp lt, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<f32>
  %12 = dlvm.cmp lt, %x, %s : tensor<4x8xf32>, tensor<f32>
  // CHECK: dlvm.cmp ne, %{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi32>
  %13 = dlvm.cmp ne, %i, %i : tensor<4xi32>, tensor<4xi32>
  // CHECK: dlvm.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>
  %14 = dlvm.select %12, %x, %s : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>
  return
}

// CHECK-LABEL: func.func @pad
// CHECK: %[[P:.*]] = dlvm.pad %{{.*}}, %{{.*}} low [1, -1] high [2, 0] interior [0, 2] : tensor<2x3xf32>, tensor<f32>
// CHECK: dlvm.neg %[[P]] : tensor<5x6xf32>
func.func @pad(%a: tensor<2x3xf32>, %s: tensor<f32>) {
  %p = dlvm.pad %a, %s low [1, -1] high [2, 0] interior [0, 2] : tensor<2x3xf32>, tensor<f32>
  %n = dlvm.neg %p : tensor<5x6xf32>
  %same = dlvm.pad %a, %s low [0, 0] high [0, 0] interior [0, 0] : tensor<2x3xf32>, tensor<f32>
  %m = dlvm.neg %same : tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @linalg_and_shape
func.func @linalg_and_shape(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %v: tensor<3xf32>,
                            %ba: tensor<5x2x3xf32>, %bb: tensor<5x3x4xf32>) {
  // CHECK: dlvm.dot %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>
  %0 = dlvm.dot %a, %b : tensor<2x3xf32>, tensor<3x4xf32>
  // CHECK: dlvm.dot %{{.*}}, %{{.*}} : tensor<5x2x3xf32>, tensor<5x3x4xf32>
  %1 = dlvm.dot %ba, %bb : tensor<5x2x3xf32>, tensor<5x3x4xf32>
  // CHECK: dlvm.dot %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>
  %2 = dlvm.dot %a, %v : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: dlvm.dot %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3x4xf32>
  %3 = dlvm.dot %v, %b : tensor<3xf32>, tensor<3x4xf32>
  // CHECK: dlvm.dot %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>
  %4 = dlvm.dot %v, %v : tensor<3xf32>, tensor<3xf32>
  // CHECK: dlvm.transpose %{{.*}} : tensor<2x3xf32>
  %5 = dlvm.transpose %a : tensor<2x3xf32>
  // CHECK: dlvm.transpose %{{.*}} perm [0, 2, 1] : tensor<5x2x3xf32>
  %6 = dlvm.transpose %ba perm [0, 2, 1] : tensor<5x2x3xf32>
  // CHECK: dlvm.reverse %{{.*}} dims [1] : tensor<2x3xf32>
  %7 = dlvm.reverse %a dims [1] : tensor<2x3xf32>
  // CHECK: dlvm.concatenate %{{.*}}, %{{.*}} axis 0 : tensor<2x3xf32>, tensor<2x3xf32>
  %8 = dlvm.concatenate %a, %a axis 0 : tensor<2x3xf32>, tensor<2x3xf32>
  // CHECK: dlvm.slice %{{.*}} offsets [0, 1] sizes [2, 2] : tensor<2x3xf32>
  %9 = dlvm.slice %a offsets [0, 1] sizes [2, 2] : tensor<2x3xf32>
  // CHECK: dlvm.slice %{{.*}} offsets [0, 0] sizes [1, 2] strides [1, 2] : tensor<2x3xf32>
  %10 = dlvm.slice %a offsets [0, 0] sizes [1, 2] strides [1, 2] : tensor<2x3xf32>
  // CHECK: dlvm.reshape %{{.*}} to [3, 2] : tensor<2x3xf32>
  %11 = dlvm.reshape %a to [3, 2] : tensor<2x3xf32>
  // CHECK: dlvm.pad_shape %{{.*}} at 0 : tensor<3xf32>
  %12 = dlvm.pad_shape %v at 0 : tensor<3xf32>
  // CHECK: dlvm.squeeze_shape %{{.*}} at 0 : tensor<1x3xf32>
  %13 = dlvm.squeeze_shape %12 at 0 : tensor<1x3xf32>
  // CHECK: dlvm.broadcast_to %{{.*}} to [4, 3] : tensor<1x3xf32>
  %14 = dlvm.broadcast_to %12 to [4, 3] : tensor<1x3xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x8xf32>, %init: tensor<f32>, %img: tensor<2x3x8x8xf32>,
                      %i: tensor<4xi32>) {
  // CHECK: dlvm.reduce add %{{.*}} dims [1] : tensor<4x8xf32>
  %0 = dlvm.reduce add %x dims [1] : tensor<4x8xf32>
  // CHECK: dlvm.reduce max %{{.*}} init %{{.*}} dims [0, 1] : tensor<4x8xf32>, tensor<f32>
  %1 = dlvm.reduce max %x init %init dims [0, 1] : tensor<4x8xf32>, tensor<f32>
  // CHECK: dlvm.reduce mean %{{.*}} dims [0] : tensor<4x8xf32>
  %2 = dlvm.reduce mean %x dims [0] : tensor<4x8xf32>
  // CHECK: dlvm.reduce mul
  %3 = dlvm.reduce mul %x dims [0] : tensor<4x8xf32>
  // CHECK: dlvm.reduce min
  %4 = dlvm.reduce min %x dims [0] : tensor<4x8xf32>
  // CHECK: dlvm.reduce and %{{.*}} dims [0] : tensor<4xi32>
  %5 = dlvm.reduce and %i dims [0] : tensor<4xi32>
  // CHECK: dlvm.reduce or %{{.*}} dims [0] : tensor<4xi32>
  %6 = dlvm.reduce or %i dims [0] : tensor<4xi32>
  // CHECK: dlvm.scan add %{{.*}} dim 1 : tensor<4x8xf32>
  %7 = dlvm.scan add %x dim 1 : tensor<4x8xf32>
  // CHECK: dlvm.scan max %{{.*}} dim 0 exclusive reverse : tensor<4x8xf32>
  %scan_er = dlvm.scan max %x dim 0 exclusive reverse : tensor<4x8xf32>
  // CHECK: dlvm.scan add %{{.*}} dim 1 reverse : tensor<4x8xf32>
  %scan_r = dlvm.scan add %x dim 1 reverse : tensor<4x8xf32>
  // CHECK: dlvm.reduce_window max %{{.*}} window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : tensor<2x3x8x8xf32>
  %8 = dlvm.reduce_window max %img window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : tensor<2x3x8x8xf32>
  // CHECK: dlvm.reduce_window add %{{.*}} window [1, 1, 3, 3] strides [1, 1, 1, 1] padding none low [0, 0, 1, 1] high [0, 0, 1, 1] window_dilation [1, 1, 2, 2] base_dilation [1, 1, 2, 1] : tensor<2x3x8x8xf32>
  %dil = dlvm.reduce_window add %img window [1, 1, 3, 3] strides [1, 1, 1, 1] padding none low [0, 0, 1, 1] high [0, 0, 1, 1] window_dilation [1, 1, 2, 2] base_dilation [1, 1, 2, 1] : tensor<2x3x8x8xf32>
  // CHECK: dlvm.reduce_window mean %{{.*}} padding half
  %9 = dlvm.reduce_window mean %img window [1, 1, 3, 3] strides [1, 1, 1, 1] padding half : tensor<2x3x8x8xf32>
  // CHECK: dlvm.reduce_window add %{{.*}} padding full
  %10 = dlvm.reduce_window add %img window [1, 1, 3, 3] strides [1, 1, 1, 1] padding full : tensor<2x3x8x8xf32>
  // CHECK: dlvm.softmax %{{.*}} axis 1 : tensor<4x8xf32>
  %11 = dlvm.softmax %x axis 1 : tensor<4x8xf32>
  // CHECK: dlvm.log_softmax %{{.*}} axis 0 : tensor<4x8xf32>
  %12 = dlvm.log_softmax %x axis 0 : tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @convolution
func.func @convolution(%x: tensor<2x4x8x8xf32>, %k: tensor<6x2x3x3xf32>, %k1: tensor<5x4x3xf32>,
                       %x1: tensor<2x4x16xf32>) {
  // CHECK: dlvm.convolve %{{.*}}, %{{.*}} strides [2, 2] padding [1, 1, 1, 1] rhs_dilation [1, 1] groups 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>
  %0 = dlvm.convolve %x, %k strides [2, 2] padding [1, 1, 1, 1] rhs_dilation [1, 1] groups 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>
  // CHECK: dlvm.convolve %{{.*}}, %{{.*}} lhs_dilation [2] : tensor<2x4x16xf32>, tensor<5x4x3xf32>
  %1 = dlvm.convolve %x1, %k1 lhs_dilation [2] : tensor<2x4x16xf32>, tensor<5x4x3xf32>
  // CHECK: dlvm.convolve %{{.*}}, %{{.*}} : tensor<2x4x16xf32>, tensor<5x4x3xf32>
  %2 = dlvm.convolve %x1, %k1 : tensor<2x4x16xf32>, tensor<5x4x3xf32>
  return
}

// CHECK-LABEL: func.func @literals
func.func @literals(%x: tensor<4xf32>) {
  // CHECK: dlvm.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %0 = dlvm.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // CHECK: dlvm.constant dense<0.000000e+00> : tensor<128x10xbf16>
  %1 = dlvm.constant dense<0.0> : tensor<128x10xbf16>
  // CHECK: dlvm.cast %{{.*}} to f16 : tensor<4xf32>
  %2 = dlvm.cast %x to f16 : tensor<4xf32>
  // CHECK: dlvm.cast %{{.*}} to i8 : tensor<4xf32>
  %3 = dlvm.cast %x to i8 : tensor<4xf32>
  // CHECK: dlvm.bitcast %{{.*}} to i32 : tensor<4xf32>
  %4 = dlvm.bitcast %x to i32 : tensor<4xf32>
  // CHECK: dlvm.random [784, 512] from -5.000000e-02 upto 5.000000e-02 seed 7 : f32
  %5 = dlvm.random [784, 512] from -0.05 upto 0.05 seed 7 : f32
  // CHECK: dlvm.random [3] from 0.000000e+00 upto 1.000000e+00 seed 0 : f64
  %6 = dlvm.random [3] from 0.0 upto 1.0 seed 0 : f64
  return
}

// DLVM's branch, conditional and apply are upstream cf/func ops.
// CHECK-LABEL: func.func @control_flow
func.func @control_flow(%x: tensor<f32>, %c: i1) -> tensor<f32> {
  // CHECK: cf.cond_br
  cf.cond_br %c, ^bb1, ^bb2(%x : tensor<f32>)
^bb1:
  %0 = func.call @control_flow(%x, %c) : (tensor<f32>, i1) -> tensor<f32>
  cf.br ^bb2(%0 : tensor<f32>)
^bb2(%r: tensor<f32>):
  return %r : tensor<f32>
}

// Inferred types at the edges: a dynamic size propagates where the result's
// size needs no static check; an empty dimension dilates to 0 (as XLA), and
// full padding gives no window on an empty dimension with a window of 1.
// CHECK-LABEL: func.func @inferred_edges
func.func @inferred_edges(%a: tensor<3x?xf32>, %b: tensor<3x2xf32>, %d: tensor<?xf32>,
                          %z: tensor<0xf32>, %x: tensor<?x2x5x5xf32>, %k: tensor<4x2x0x0xf32>,
                          %e: tensor<1x2x0x4xf32>, %k1: tensor<4x2x1x1xf32>)
    -> (tensor<3x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<0xf32>, tensor<?x4x6x6xf32>,
        tensor<1x4x2x10xf32>) {
  // CHECK: dlvm.concatenate %{{.*}}, %{{.*}} axis 1 : tensor<3x?xf32>, tensor<3x2xf32>
  %0 = dlvm.concatenate %a, %b axis 1 : tensor<3x?xf32>, tensor<3x2xf32>
  // CHECK: dlvm.reduce_window max %{{.*}} padding half : tensor<?xf32>
  %1 = dlvm.reduce_window max %d window [2] strides [2] padding half : tensor<?xf32>
  // CHECK: dlvm.reduce_window max %{{.*}} padding full : tensor<?xf32>
  %2 = dlvm.reduce_window max %d window [2] strides [2] padding full : tensor<?xf32>
  // CHECK: dlvm.reduce_window max %{{.*}} padding full : tensor<0xf32>
  %3 = dlvm.reduce_window max %z window [1] strides [1] padding full : tensor<0xf32>
  // CHECK: dlvm.convolve %{{.*}}, %{{.*}} rhs_dilation [3, 3] : tensor<?x2x5x5xf32>, tensor<4x2x0x0xf32>
  %4 = dlvm.convolve %x, %k rhs_dilation [3, 3] : tensor<?x2x5x5xf32>, tensor<4x2x0x0xf32>
  // CHECK: dlvm.convolve %{{.*}}, %{{.*}} padding [1, 1, 0, 0] lhs_dilation [3, 3] : tensor<1x2x0x4xf32>, tensor<4x2x1x1xf32>
  %5 = dlvm.convolve %e, %k1 padding [1, 1, 0, 0] lhs_dilation [3, 3] : tensor<1x2x0x4xf32>, tensor<4x2x1x1xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<0xf32>,
      tensor<?x4x6x6xf32>, tensor<1x4x2x10xf32>
}

// CHECK-LABEL: func.func @indexing
func.func @indexing(%x: tensor<4x8xf32>, %u: tensor<1x8xf32>, %t: tensor<i32>, %c: tensor<i64>) {
  // CHECK: dlvm.dynamic_slice %{{.*}} at [%{{.*}}, %{{.*}}] sizes [1, 8] : tensor<4x8xf32>, tensor<i32>, tensor<i64>
  %0 = dlvm.dynamic_slice %x at [%t, %c] sizes [1, 8] : tensor<4x8xf32>, tensor<i32>, tensor<i64>
  // CHECK: dlvm.dynamic_update_slice %{{.*}}, %{{.*}} at [%{{.*}}, %{{.*}}] : tensor<4x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>
  %1 = dlvm.dynamic_update_slice %x, %u at [%t, %t] : tensor<4x8xf32>, tensor<1x8xf32>, tensor<i32>, tensor<i32>
  // CHECK: dlvm.iota dim 1 : tensor<4x8xi32>
  %2 = dlvm.iota dim 1 : tensor<4x8xi32>
  // CHECK: dlvm.argmax %{{.*}} axis 1 : tensor<4x8xf32> -> tensor<4xi32>
  %3 = dlvm.argmax %x axis 1 : tensor<4x8xf32> -> tensor<4xi32>
  // CHECK: dlvm.argmin %{{.*}} axis 0 : tensor<4x8xf32> -> tensor<8xi64>
  %4 = dlvm.argmin %x axis 0 : tensor<4x8xf32> -> tensor<8xi64>
  return
}

// CHECK-LABEL: func.func @dot_general
// (the returned types check the inferred ones)
func.func @dot_general(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x9x32xf32>, %s: tensor<f32>, %v: tensor<3xf32>)
    -> (tensor<2x4x16x9xf32>, tensor<3xf32>) {
  // CHECK: dlvm.dot_general %{{.*}}, %{{.*}} batch [0, 1] x [0, 1] contract [3] x [3] : tensor<2x4x16x32xf32>, tensor<2x4x9x32xf32>
  %0 = dlvm.dot_general %q, %k batch [0, 1] x [0, 1] contract [3] x [3] : tensor<2x4x16x32xf32>, tensor<2x4x9x32xf32>
  // CHECK: dlvm.dot_general %{{.*}}, %{{.*}} batch [] x [] contract [] x [] : tensor<f32>, tensor<3xf32>
  %1 = dlvm.dot_general %s, %v batch [] x [] contract [] x [] : tensor<f32>, tensor<3xf32>
  return %0, %1 : tensor<2x4x16x9xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @sort_top_k
func.func @sort_top_k(%x: tensor<4x100xf32>, %k: tensor<16xi32>, %v: tensor<16xf32>)
    -> (tensor<4x100xf32>, tensor<16xf32>, tensor<4x5xf32>, tensor<4x5xi32>) {
  // CHECK: dlvm.sort %{{.*}} dim 1 : tensor<4x100xf32>
  %s = dlvm.sort %x dim 1 : tensor<4x100xf32>
  // CHECK: dlvm.sort %{{.*}}, %{{.*}} dim 0 descending : tensor<16xi32>, tensor<16xf32>
  %a, %b = dlvm.sort %k, %v dim 0 descending : tensor<16xi32>, tensor<16xf32>
  // CHECK: dlvm.top_k %{{.*}} k 5 : tensor<4x100xf32>
  %tv, %ti = dlvm.top_k %x k 5 : tensor<4x100xf32>
  return %s, %b, %tv, %ti : tensor<4x100xf32>, tensor<16xf32>, tensor<4x5xf32>, tensor<4x5xi32>
}

// CHECK-LABEL: func.func @gather_scatter
func.func @gather_scatter(%x: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<3x4xf32>) {
  // CHECK: dlvm.gather %{{.*}}[%{{.*}}] offset_dims [1] collapsed_slice_dims [0] start_index_map [0] index_vector_dim 1 slice_sizes [1, 4] : tensor<10x4xf32>, tensor<3xi32>
  %0 = dlvm.gather %x[%i] offset_dims [1] collapsed_slice_dims [0] start_index_map [0] index_vector_dim 1 slice_sizes [1, 4] : tensor<10x4xf32>, tensor<3xi32>
  // CHECK: dlvm.scatter max %{{.*}}[%{{.*}}], %{{.*}} update_window_dims [1] inserted_window_dims [0] scatter_dims_to_operand_dims [0] index_vector_dim 1 : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  %1 = dlvm.scatter max %x[%i], %u update_window_dims [1] inserted_window_dims [0] scatter_dims_to_operand_dims [0] index_vector_dim 1 : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  return
}
