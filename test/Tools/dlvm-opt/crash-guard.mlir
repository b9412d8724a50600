// Upstream assertions reachable from the input (the wheels are built with
// assertions on) never kill dlvm-opt: each crash is an internal compiler error
// at the offending top-level op, with a reproducer; the other parts still run.
// RUN: not dlvm-opt %s --split-input-file --canonicalize 2>&1 | FileCheck %s

// CHECK: crash-guard.mlir:[[@LINE+2]]:1: error: internal compiler error: willBeValidAffineMap
// CHECK-NEXT: note: while running stage 'parse'
func.func @collapse_minus_one(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %y = tensor.collapse_shape %x [[0, -1]] : tensor<4x4xf32> into tensor<16xf32>
  return %y : tensor<16xf32>
}
// CHECK-NEXT: note: reproducer: {{.*}}dlvm-crash-{{.*}}crash-guard.mlir (see README beside it)

// -----

// CHECK: crash-guard.mlir:[[@LINE+1]]:1: error: internal compiler error: willBeValidAffineMap
func.func @collapse_huge(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %y = tensor.collapse_shape %x [[0, 9223372036854775807]] : tensor<4x4xf32> into tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// CHECK: crash-guard.mlir:[[@LINE+1]]:1: error: internal compiler error: succeeded
func.func @pad_huge(%x: tensor<4x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %y = tensor.pad %x low[0, 0] high[9223372036854775807, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<4x4xf32> to tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// The part after the crashes is compiled as usual.
// CHECK: func.func @fine
// CHECK-NEXT: return
func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
