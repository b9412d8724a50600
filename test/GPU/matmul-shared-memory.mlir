// Contractions become the shared-memory matmul kernel: 256 threads, A and B tiles in
// workgroup memory, gpu.barrier around the tile copies, a register tile of FMAs per thread.
// RUN: dlvm-opt %s --dlvm-gpu-pipeline=stop-at=map | FileCheck %s

// 1024x512x64: 64x64 tiles (4x4 accumulators per thread, 16x16 threads), k steps of 16.
// CHECK-LABEL: func.func @dlvm_matmul
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c8, {{.*}} = %c16, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<16x68xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x68xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: memref.store {{.*}}, %[[AS]]
// CHECK: memref.store {{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[AS]]
// CHECK: memref.load %[[BS]]
// CHECK: math.fma
// CHECK: gpu.barrier
// CHECK: scf.yield
func.func @matmul(%a: tensor<1024x64xf32>, %b: tensor<64x512xf32>) -> tensor<1024x512xf32> {
  %r = dlvm.dot %a, %b : tensor<1024x64xf32>, tensor<64x512xf32>
  return %r : tensor<1024x512xf32>
}

// A small problem gets smaller tiles so that more SMs have work: 200x300 -> 32x32 tiles,
// a 10x7 grid, 2x2 accumulators per thread.
// CHECK-LABEL: func.func @dlvm_small
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c10, {{.*}} = %c7, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME: workgroup({{.*}} : memref<16x36xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<16x36xf32, #gpu.address_space<workgroup>>)
// CHECK: iter_args({{.*}}) -> (f32, f32, f32, f32)
func.func @small(%a: tensor<200x100xf32>, %b: tensor<100x300xf32>) -> tensor<200x300xf32> {
  %r = dlvm.dot %a, %b : tensor<200x100xf32>, tensor<100x300xf32>
  return %r : tensor<200x300xf32>
}

// A transposed operand is read in place (the transpose is folded into the matmul,
// the tile copy reads A's contiguous index fastest): no transpose kernel.
// CHECK-LABEL: func.func @dlvm_transposed
// CHECK-NOT: linalg.transpose
// CHECK: workgroup(
// CHECK: memref.load %arg0[
// CHECK: gpu.barrier
func.func @transposed(%a: tensor<100x200xf32>, %b: tensor<100x300xf32>) -> tensor<200x300xf32> {
  %at = dlvm.transpose %a : tensor<100x200xf32>
  %r = dlvm.dot %at, %b : tensor<200x100xf32>, tensor<100x300xf32>
  return %r : tensor<200x300xf32>
}

// Batched: the batch index is the grid's z dimension.
// CHECK-LABEL: func.func @dlvm_batched
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}}, {{.*}} = %c3) threads({{.*}}) in ({{.*}} = %c256
// CHECK: workgroup(
func.func @batched(%a: tensor<3x64x32xf32>, %b: tensor<3x32x48xf32>) -> tensor<3x64x48xf32> {
  %r = dlvm.dot %a, %b : tensor<3x64x32xf32>, tensor<3x32x48xf32>
  return %r : tensor<3x64x48xf32>
}

// Both operands transposed (as dlvm-to-linalg emits them: a matmul with transposed
// indexing maps), batched too: still the shared-memory kernel, no transpose kernel.
// CHECK-LABEL: func.func @dlvm_transposed_both
// CHECK-NOT: linalg.transpose
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}}, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256
// CHECK: workgroup(
// CHECK: gpu.barrier
func.func @transposed_both(%a: tensor<100x200xf32>, %b: tensor<300x100xf32>) -> tensor<200x300xf32> {
  %at = dlvm.transpose %a : tensor<100x200xf32>
  %bt = dlvm.transpose %b : tensor<300x100xf32>
  %r = dlvm.dot %at, %bt : tensor<200x100xf32>, tensor<100x300xf32>
  return %r : tensor<200x300xf32>
}

// CHECK-LABEL: func.func @dlvm_batched_transposed
// CHECK-NOT: linalg.transpose
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}}, {{.*}} = %c3) threads({{.*}}) in ({{.*}} = %c256
func.func @batched_transposed(%a: tensor<3x64x32xf32>, %b: tensor<3x48x64xf32>) -> tensor<3x32x48xf32> {
  %at = dlvm.transpose %a perm [0, 2, 1] : tensor<3x64x32xf32>
  %bt = dlvm.transpose %b perm [0, 2, 1] : tensor<3x48x64xf32>
  %r = dlvm.dot %at, %bt : tensor<3x32x64xf32>, tensor<3x64x48xf32>
  return %r : tensor<3x32x48xf32>
}

// A transpose that moves the batch dimension cannot be read by the batched kernel: it
// stays a kernel of its own (it used to be folded into an invalid batch_matmul).
// CHECK-LABEL: func.func @dlvm_batch_moving_transpose
// CHECK: gpu.launch
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}}, {{.*}} = %c2) threads({{.*}}) in ({{.*}} = %c256
func.func @batch_moving_transpose(%a: tensor<3x4x2xf32>, %b: tensor<2x3x5xf32>) -> tensor<2x4x5xf32> {
  %at = dlvm.transpose %a : tensor<3x4x2xf32>
  %r = dlvm.dot %at, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>
  return %r : tensor<2x4x5xf32>
}
