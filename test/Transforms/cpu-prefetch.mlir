// The lower-vectors stage's prefetch step (backend/prefetch.py): a convolution kernel
// whose loads read new rows in every iteration of their tap loop (a stride-2 layer's
// 3-tap column phase) prefetches them for its next step of input channels; a 3x3
// kernel, whose tap loop re-reads the same rows shifted by a column, gets none.
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="stop-at=lower-vectors vector-bits=512 threads=1" | FileCheck %s

// CHECK-LABEL: func.func @dlvm_conv_stride2
// The 6-tap phase: no prefetch.
// CHECK: scf.for %[[C0:.*]] = %c0 to %c16 step %c8 iter_args
// CHECK-NOT: memref.prefetch
// CHECK: vector.fma
// The 3-tap phase: the channel step's next value, min(c + 8, 8), and 8 prefetches of
// rows of that channel step beside the 8 loads of this one.
// CHECK: scf.for %[[C:.*]] = %c0 to %c16 step %c8 iter_args
// CHECK: %[[AHEAD:.*]] = arith.addi %[[C]], %c8
// CHECK: %[[NEXT:.*]] = arith.minsi %[[AHEAD]], %c8
// CHECK: scf.for
// CHECK-COUNT-8: memref.prefetch {{.*}} read, locality<3>, data
// CHECK-LABEL: func.func @dlvm_conv3x3
// CHECK-NOT: memref.prefetch
func.func @conv_stride2(%x: tensor<2x16x34x34xf32>, %k: tensor<32x16x3x3xf32>) -> tensor<2x32x16x16xf32> {
  %y = dlvm.convolve %x, %k strides [2, 2] : tensor<2x16x34x34xf32>, tensor<32x16x3x3xf32>
  return %y : tensor<2x32x16x16xf32>
}
func.func @conv3x3(%x: tensor<2x16x16x16xf32>, %k: tensor<32x16x3x3xf32>) -> tensor<2x32x16x16xf32> {
  %y = dlvm.convolve %x, %k padding [1, 1, 1, 1] : tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>
  return %y : tensor<2x32x16x16xf32>
}
