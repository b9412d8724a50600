// The lowered IR is valid linalg-on-tensors that the upstream pipeline
// bufferizes and lowers to the LLVM dialect (the naive CPU pipeline of
// ARCHITECTURE.md; erf/erfc need convert-math-to-libm).
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg,linalg-fuse-elementwise-ops,canonicalize,cse,eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries},buffer-deallocation-pipeline,convert-linalg-to-loops,convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,expand-strided-metadata,lower-affine,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s
// (No function here takes or returns i1 tensors, and elementwise fusion removes
// the intermediate ones: memref<...xi1> loads and
// stores assert in MemRefToLLVM of the MLIR 22 wheels.)

// CHECK-NOT: dlvm.
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK-DAG: llvm.func @unary(
// CHECK-DAG: llvm.func @binary(
// CHECK-DAG: llvm.func @linalg(
// CHECK-DAG: llvm.func @shape(
// CHECK-DAG: llvm.func @reduce(
// CHECK-DAG: llvm.func @window(
// CHECK-DAG: llvm.func @conv(
// CHECK-DAG: llvm.func @misc(
// CHECK-DAG: llvm.call @erff(
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.

func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4xi32>) -> (tensor<4x8xf32>, tensor<4xi32>) {
  %0 = dlvm.neg %x : tensor<4x8xf32>
  %1 = dlvm.exp %0 : tensor<4x8xf32>
  %2 = dlvm.log %1 : tensor<4x8xf32>
  %3 = dlvm.tanh %2 : tensor<4x8xf32>
  %4 = dlvm.sigmoid %3 : tensor<4x8xf32>
  %5 = dlvm.relu %4 : tensor<4x8xf32>
  %6 = dlvm.sqrt %5 : tensor<4x8xf32>
  %7 = dlvm.rsqrt %6 : tensor<4x8xf32>
  %8 = dlvm.square %7 : tensor<4x8xf32>
  %9 = dlvm.sign %8 : tensor<4x8xf32>
  %10 = dlvm.abs %9 : tensor<4x8xf32>
  %11 = dlvm.sin %10 : tensor<4x8xf32>
  %12 = dlvm.cos %11 : tensor<4x8xf32>
  %13 = dlvm.tan %12 : tensor<4x8xf32>
  %14 = dlvm.asin %13 : tensor<4x8xf32>
  %15 = dlvm.acos %14 : tensor<4x8xf32>
  %16 = dlvm.atan %15 : tensor<4x8xf32>
  %17 = dlvm.sinh %16 : tensor<4x8xf32>
  %18 = dlvm.cosh %17 : tensor<4x8xf32>
  %19 = dlvm.floor %18 : tensor<4x8xf32>
  %20 = dlvm.ceil %19 : tensor<4x8xf32>
  %21 = dlvm.round %20 : tensor<4x8xf32>
  %22 = dlvm.rint %21 : tensor<4x8xf32>
  %23 = dlvm.erf %22 : tensor<4x8xf32>
  %24 = dlvm.erfc %23 : tensor<4x8xf32>
  %25 = dlvm.lgamma %24 : tensor<4x8xf32>
  %26 = dlvm.digamma %25 : tensor<4x8xf32>
  %27 = dlvm.log1p %26 : tensor<4x8xf32>
  %28 = dlvm.expm1 %27 : tensor<4x8xf32>
  %i0 = dlvm.neg %i : tensor<4xi32>
  %i1 = dlvm.abs %i0 : tensor<4xi32>
  %i2 = dlvm.sign %i1 : tensor<4xi32>
  %i3 = dlvm.relu %i2 : tensor<4xi32>
  %i4 = dlvm.square %i3 : tensor<4xi32>
  %i5 = dlvm.not %i4 : tensor<4xi32>
  return %28, %i5 : tensor<4x8xf32>, tensor<4xi32>
}
func.func @binary(%x: tensor<4x8xf64>, %y: tensor<1x8xf64>, %s: tensor<f64>, %i: tensor<4xi32>, %j: tensor<i32>) -> (tensor<4x8xf64>, tensor<4xi32>) {
  %0 = dlvm.add %x, %y : tensor<4x8xf64>, tensor<1x8xf64>
  %1 = dlvm.sub %0, %s : tensor<4x8xf64>, tensor<f64>
  %2 = dlvm.mul %1, %y : tensor<4x8xf64>, tensor<1x8xf64>
  %3 = dlvm.div %2, %y : tensor<4x8xf64>, tensor<1x8xf64>
  %4 = dlvm.pow %3, %s : tensor<4x8xf64>, tensor<f64>
  %5 = dlvm.min %4, %x : tensor<4x8xf64>, tensor<4x8xf64>
  %6 = dlvm.max %5, %x : tensor<4x8xf64>, tensor<4x8xf64>
  %7 = dlvm.mod %6, %y : tensor<4x8xf64>, tensor<1x8xf64>
  %8 = dlvm.floor_div %7, %y : tensor<4x8xf64>, tensor<1x8xf64>
  %9 = dlvm.trunc_div %8, %y : tensor<4x8xf64>, tensor<1x8xf64>
  %m = dlvm.cmp ne, %9, %x : tensor<4x8xf64>, tensor<4x8xf64>
  %10 = dlvm.select %m, %9, %s : tensor<4x8xi1>, tensor<4x8xf64>, tensor<f64>
  %i0 = dlvm.div %i, %j : tensor<4xi32>, tensor<i32>
  %i1 = dlvm.mod %i0, %j : tensor<4xi32>, tensor<i32>
  %i2 = dlvm.floor_div %i1, %j : tensor<4xi32>, tensor<i32>
  %i3 = dlvm.trunc_div %i2, %j : tensor<4xi32>, tensor<i32>
  %i4 = dlvm.and %i3, %j : tensor<4xi32>, tensor<i32>
  %i5 = dlvm.or %i4, %j : tensor<4xi32>, tensor<i32>
  %i6 = dlvm.min %i5, %j : tensor<4xi32>, tensor<i32>
  %i7 = dlvm.max %i6, %j : tensor<4xi32>, tensor<i32>
  return %10, %i7 : tensor<4x8xf64>, tensor<4xi32>
}
func.func @linalg(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %v: tensor<4xf32>, %ba: tensor<2x3x3x4xf32>, %bb: tensor<2x3x4x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3x3x5xf32>, tensor<5xf32>) {
  %0 = dlvm.dot %a, %b : tensor<3x4xf32>, tensor<4x5xf32>
  %1 = dlvm.dot %a, %v : tensor<3x4xf32>, tensor<4xf32>
  %2 = dlvm.dot %v, %v : tensor<4xf32>, tensor<4xf32>
  %3 = dlvm.dot %ba, %bb : tensor<2x3x3x4xf32>, tensor<2x3x4x5xf32>
  %4 = dlvm.dot %v, %b : tensor<4xf32>, tensor<4x5xf32>
  return %0, %1, %2, %3, %4 : tensor<3x5xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3x3x5xf32>, tensor<5xf32>
}
func.func @shape(%a: tensor<3x4xf32>, %b: tensor<3x2xf32>, %c: tensor<1x4xf32>, %s: tensor<f32>) -> (tensor<4x3xf32>, tensor<3x4xf32>, tensor<3x6xf32>, tensor<2x2xf32>, tensor<2x6xf32>, tensor<3x1x4xf32>, tensor<4xf32>, tensor<5x4xf32>, tensor<2x3xf32>, tensor<1x1xf32>) {
  %0 = dlvm.transpose %a : tensor<3x4xf32>
  %1 = dlvm.reverse %a dims [1] : tensor<3x4xf32>
  %2 = dlvm.concatenate %a, %b axis 1 : tensor<3x4xf32>, tensor<3x2xf32>
  %3 = dlvm.slice %a offsets [0, 1] sizes [2, 2] strides [2, 2] : tensor<3x4xf32>
  %4 = dlvm.reshape %2 to [2, 9] : tensor<3x6xf32>
  %5 = dlvm.slice %4 offsets [0, 0] sizes [2, 6] : tensor<2x9xf32>
  %6 = dlvm.pad_shape %a at 1 : tensor<3x4xf32>
  %7 = dlvm.squeeze_shape %c at 0 : tensor<1x4xf32>
  %8 = dlvm.broadcast_to %c to [5, 4] : tensor<1x4xf32>
  %9 = dlvm.broadcast_to %s to [2, 3] : tensor<f32>
  %10 = dlvm.reshape %s to [1, 1] : tensor<f32>
  return %0, %1, %2, %3, %5, %6, %7, %8, %9, %10 : tensor<4x3xf32>, tensor<3x4xf32>, tensor<3x6xf32>, tensor<2x2xf32>, tensor<2x6xf32>, tensor<3x1x4xf32>, tensor<4xf32>, tensor<5x4xf32>, tensor<2x3xf32>, tensor<1x1xf32>
}
func.func @reduce(%x: tensor<4x8xf32>, %init: tensor<f32>, %i: tensor<4x8xi32>) -> (tensor<4xf32>, tensor<f32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<2x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xi32>) {
  %0 = dlvm.reduce add %x dims [1] : tensor<4x8xf32>
  %1 = dlvm.reduce max %x init %init dims [0, 1] : tensor<4x8xf32>, tensor<f32>
  %2 = dlvm.reduce mean %x init %init dims [0] : tensor<4x8xf32>, tensor<f32>
  %3 = dlvm.scan add %x dim 1 : tensor<4x8xf32>
  %4 = dlvm.scan max %i dim 0 : tensor<4x8xi32>
  %5 = dlvm.reduce_window mean %x window [2, 2] strides [2, 2] padding none : tensor<4x8xf32>
  %6 = dlvm.softmax %x axis 1 : tensor<4x8xf32>
  %7 = dlvm.log_softmax %x axis 0 : tensor<4x8xf32>
  %8 = dlvm.reduce and %i dims [1] : tensor<4x8xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4xf32>, tensor<f32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<2x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xi32>
}
func.func @window(%x: tensor<2x3x7x7xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>, tensor<2x3x7x7xf32>) {
  %0 = dlvm.reduce_window max %x window [1, 1, 3, 3] strides [1, 1, 2, 2] padding half : tensor<2x3x7x7xf32>
  %1 = dlvm.reduce_window mean %x window [1, 1, 2, 2] strides [1, 1, 1, 1] padding full : tensor<2x3x7x7xf32>
  %2 = dlvm.reduce_window min %x window [1, 1, 3, 3] strides [1, 1, 1, 1] padding half : tensor<2x3x7x7xf32>
  return %0, %1, %2 : tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>, tensor<2x3x7x7xf32>
}
func.func @conv(%x: tensor<2x4x9x9xf32>, %k: tensor<6x4x3x3xf32>, %kg: tensor<6x2x3x3xf32>, %x1: tensor<2x4x9xf32>, %k1: tensor<6x2x3xf32>, %x3: tensor<1x2x4x4x4xf32>, %k3: tensor<2x2x2x2x2xf32>) -> (tensor<2x6x9x9xf32>, tensor<2x6x4x4xf32>, tensor<2x6x17x17xf32>, tensor<2x6x7xf32>, tensor<1x2x3x3x3xf32>) {
  %0 = dlvm.convolve %x, %k strides [1, 1] padding [1, 1, 1, 1] : tensor<2x4x9x9xf32>, tensor<6x4x3x3xf32>
  %1 = dlvm.convolve %x, %kg strides [2, 2] rhs_dilation [1, 1] groups 2 : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>
  %2 = dlvm.convolve %x, %k padding [1, 1, 1, 1] lhs_dilation [2, 2] : tensor<2x4x9x9xf32>, tensor<6x4x3x3xf32>
  %3 = dlvm.convolve %x1, %k1 groups 2 : tensor<2x4x9xf32>, tensor<6x2x3xf32>
  %4 = dlvm.convolve %x3, %k3 : tensor<1x2x4x4x4xf32>, tensor<2x2x2x2x2xf32>
  return %0, %1, %2, %3, %4 : tensor<2x6x9x9xf32>, tensor<2x6x4x4xf32>, tensor<2x6x17x17xf32>, tensor<2x6x7xf32>, tensor<1x2x3x3x3xf32>
}
func.func @misc(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<2x2xf32>, tensor<3x5xf32>, tensor<4xi32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<2x3xf64>) {
  %0 = dlvm.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %1 = dlvm.constant dense<0.5> : tensor<3x5xf32>
  %2 = dlvm.cast %x to i32 : tensor<4xf32>
  %3 = dlvm.cast %x to f16 : tensor<4xf32>
  %4 = dlvm.cast %i to f32 : tensor<4xi32>
  %5 = dlvm.cast %i to i1 : tensor<4xi32>
  %6 = dlvm.cast %5 to f32 : tensor<4xi1>
  %7 = dlvm.bitcast %x to i32 : tensor<4xf32>
  %8 = dlvm.random [2, 3] from -1.0 upto 1.0 seed 7 : f64
  return %0, %1, %2, %3, %4, %6, %7, %8 : tensor<2x2xf32>, tensor<3x5xf32>, tensor<4xi32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<2x3xf64>
}
