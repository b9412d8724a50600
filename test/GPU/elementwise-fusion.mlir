// Elementwise chains become one kernel tiled onto blocks and threads (not one thread per block).
// RUN: dlvm-opt %s --dlvm-gpu-pipeline=stop-at=map | FileCheck %s

// A bias add and a tanh fuse into one linalg.generic; 300 columns go to
// threads x (150 per block, a divisor, so every tile is full), 64 rows to blocks y.
// CHECK-LABEL: func.func @dlvm_bias_tanh
// CHECK-SAME: %[[OUT:[^:]*]]: memref<64x300xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: %[[C150:.*]] = arith.constant 150 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C2]], {{.*}} = %[[C64]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C150]], {{.*}} = %c1, {{.*}} = %c1)
// CHECK: gpu.block_id x
// CHECK: gpu.thread_id x
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: math.tanh
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @bias_tanh(%x: tensor<64x300xf32>, %b: tensor<1x300xf32>) -> tensor<64x300xf32> {
  %0 = dlvm.add %x, %b : tensor<64x300xf32>, tensor<1x300xf32>
  %1 = dlvm.tanh %0 : tensor<64x300xf32>
  return %1 : tensor<64x300xf32>
}

// Rows that do not fill a block: 37 rows x 70 columns -> 70 x 3 threads, 13 blocks.
// CHECK-LABEL: func.func @dlvm_partial
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c13, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c70, {{.*}} = %c3, {{.*}} = %c1)
// CHECK: affine.min
// CHECK: math.exp
func.func @partial(%x: tensor<37x70xf32>) -> tensor<37x70xf32> {
  %0 = dlvm.exp %x : tensor<37x70xf32>
  return %0 : tensor<37x70xf32>
}
