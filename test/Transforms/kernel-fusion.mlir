// Kernel fusion of linalg-on-tensors code, with a report of kernels (loop nests) before and after.
// RUN: dlvm-opt %s --dlvm-to-linalg --canonicalize --cse --dlvm-kernel-fusion=report --verify-diagnostics | FileCheck %s
// RUN: dlvm-opt %s --dlvm-to-linalg --canonicalize --cse --dlvm-kernel-fusion="report duplicate-producers=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUP
// RUN: dlvm-opt %s --dlvm-to-linalg --canonicalize --cse --dlvm-kernel-fusion="report reductions=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NORED
// RUN: not dlvm-opt %s --dlvm-kernel-fusion=duplicate-producers=1 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not dlvm-opt %s --dlvm-kernel-fusion=report=maybe 2>&1 | FileCheck %s --check-prefix=BADBOOL

// BAD: error: duplicate-producers must be 0 (off) or at least 2, got 1
// BADBOOL: error: {{.*}}option 'report' expects a boolean, got 'maybe'

// An MLP layer: the bias add and the tanh become one loop nest that consumes
// the matmul (the fill initializing the accumulator is a kernel of its own).
// CHECK-LABEL: func.func @mlp_layer
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<32x64xf32>, tensor<64x128xf32>) outs(%[[FILL]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %{{.*}} : tensor<32x128xf32>, tensor<1x128xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: math.tanh
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.
// CHECK: return
// expected-remark @+1 {{@mlp_layer: 4 kernels (loop nests) -> 3 after fusion (before: fill 1, generic 2, matmul 1; after: fill 1, generic 1, matmul 1)}}
func.func @mlp_layer(%x: tensor<32x64xf32>, %w: tensor<64x128xf32>, %b: tensor<1x128xf32>) -> tensor<32x128xf32> {
  %0 = dlvm.dot %x, %w : tensor<32x64xf32>, tensor<64x128xf32>
  %1 = dlvm.add %0, %b : tensor<32x128xf32>, tensor<1x128xf32>
  %2 = dlvm.tanh %1 : tensor<32x128xf32>
  return %2 : tensor<32x128xf32>
}

// Softmax: the max becomes a generic reduction; x - max and exp fuse into one
// nest, which feeds both the sum and the division (shared, so by default it is
// stored once and read twice) ...
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %[[MAX]] :
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] :
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[EXP]], %[[SUM]] :
// CHECK: arith.divf
// expected-remark @+1 {{@softmax: 6 kernels (loop nests) -> 6 after fusion (before: fill 2, generic 2, reduce 2; after: fill 2, generic 2, generic-reduction 2)}}
func.func @softmax(%x: tensor<32x10xf32>) -> tensor<32x10xf32> {
  %0 = dlvm.softmax %x axis 1 : tensor<32x10xf32>
  return %0 : tensor<32x10xf32>
}
// ... and with duplicate-producers, exp(x - max) is recomputed in the sum and in
// the division: max, sum and normalize are three nests.
// DUP: remark: @softmax: 6 kernels (loop nests) -> 5 after fusion (before: fill 2, generic 2, reduce 2; after: fill 2, generic 1, generic-reduction 2)

// A reduction of an elementwise product: one nest.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<32x10xf32>) outs(%[[INIT]] : tensor<32xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
// expected-remark @+1 {{@sum_of_squares: 3 kernels (loop nests) -> 2 after fusion (before: fill 1, generic 1, reduce 1; after: fill 1, generic-reduction 1)}}
func.func @sum_of_squares(%x: tensor<32x10xf32>) -> tensor<32xf32> {
  %0 = dlvm.mul %x, %x : tensor<32x10xf32>, tensor<32x10xf32>
  %1 = dlvm.reduce add %0 dims [1] : tensor<32x10xf32>
  return %1 : tensor<32xf32>
}
// Without reductions=true, linalg.reduce stays and its producer is not fused.
// NORED: remark: @sum_of_squares: 3 kernels (loop nests) -> 3 after fusion (before: fill 1, generic 1, reduce 1; after: fill 1, generic 1, reduce 1)

// Elementwise arith/math ops on tensors are kernels too; inside a loop body a
// chain still fuses into one nest (counted once: kernels are counted in the IR).
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: scf.yield
// expected-remark @+1 {{@loop: 3 kernels (loop nests) -> 1 after fusion (before: arith.addf 1, arith.mulf 1, math.exp 1; after: generic 1)}}
func.func @loop(%x: tensor<16xf32>, %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<16xf32> {
    %0 = arith.mulf %acc, %x : tensor<16xf32>
    %1 = math.exp %0 : tensor<16xf32>
    %2 = arith.addf %1, %acc : tensor<16xf32>
    scf.yield %2 : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// A function without kernels gets no remark.
// CHECK-LABEL: func.func @no_kernels
func.func @no_kernels(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
