// Reductions keep their parallel loops on threads and fuse elementwise producers:
// softmax's exp(x - max) is recomputed inside the sum and inside the division
// instead of going through memory.
// RUN: dlvm-opt %s --dlvm-gpu-pipeline=stop-at=map | FileCheck %s

// CHECK-LABEL: func.func @dlvm_softmax
// max over each row: 32 rows on 32 threads, the 10 columns sequentially in each thread
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c32, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: gpu.launch
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c10, {{.*}} = %c16, {{.*}} = %c1)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.divf
// CHECK-NOT: gpu.launch
func.func @softmax(%x: tensor<32x10xf32>) -> tensor<32x10xf32> {
  %0 = dlvm.softmax %x axis 1 : tensor<32x10xf32>
  return %0 : tensor<32x10xf32>
}

// A full reduction to a scalar has no parallel loop: one thread.
// CHECK-LABEL: func.func @dlvm_total
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: scf.for
// CHECK: arith.addf
func.func @total(%x: tensor<32x10xf32>) -> tensor<f32> {
  %0 = dlvm.reduce add %x dims [0, 1] : tensor<32x10xf32>
  return %0 : tensor<f32>
}
