// A reduction with few outputs and a long reduced loop is split (gpu_split_reduction.py):
// partial results for 512 interleaved parts (row c * 512 + s), initialised to the
// combiner's identity, then combined into the output. With split-reductions=false each
// of the 8 outputs is one thread looping over 4096 rows.
// RUN: dlvm-opt %s --dlvm-gpu-pipeline=stop-at=map | FileCheck %s
// RUN: dlvm-opt %s --dlvm-gpu-pipeline='stop-at=map split-reductions=false' | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @dlvm_sum_rows
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<512x8xf32>
// CHECK: gpu.launch
// CHECK: linalg.fill ins(%{{.*}} : f32)
// CHECK: %[[X:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [8, 512, 8] : memref<4096x8xf32> into memref<8x512x8xf32>
// CHECK: gpu.launch {{.*}} in ({{.*}} = %c1, {{.*}} = %c16, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c8, {{.*}} = %c32, {{.*}} = %c1)
// CHECK: memref.subview %[[X]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.addf
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c8, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: memref.subview %[[PARTIAL]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf

// OFF-LABEL: func.func @dlvm_sum_rows
// OFF-NOT: memref.expand_shape
// OFF: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c8, {{.*}} = %c1, {{.*}} = %c1)
// OFF: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// OFF-NOT: memref.expand_shape
func.func @sum_rows(%x: tensor<4096x8xf32>) -> tensor<8xf32> {
  %a = dlvm.reduce add %x dims [0] : tensor<4096x8xf32>
  return %a : tensor<8xf32>
}

// CHECK-LABEL: func.func @dlvm_argmax
// CHECK-NOT: memref.expand_shape
// CHECK: return
func.func @argmax(%x: tensor<4096x8xf32>) -> tensor<8xi32> {
  %a = dlvm.argmax %x axis 0 : tensor<4096x8xf32> -> tensor<8xi32>
  return %a : tensor<8xi32>
}
