// An assertion in the parser or a pass (the MLIR wheels are built with
// assertions on) never kills dlvm-opt: each crash is an internal compiler error
// at the offending top-level op, with a reproducer; the other parts still run.
// Every upstream assertion known to be reachable from input is prevented
// (parsing.mlir), so the test's crash comes from the test hook
// DLVM_MLIR_TEST_ASSERT_ON: parsing a text that contains its value asserts.
// RUN: env DLVM_MLIR_TEST_ASSERT_ON=crash_here not dlvm-opt %s --split-input-file --canonicalize 2>&1 | FileCheck %s

// CHECK: crash-guard.mlir:[[@LINE+2]]:1: error: internal compiler error: test assertion (DLVM_MLIR_TEST_ASSERT_ON)
// CHECK-NEXT: note: while running stage 'parse'
func.func @crash_here(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %x : tensor<4x4xf32>
}
// CHECK-NEXT: note: reproducer: {{.*}}dlvm-crash-{{.*}}crash-guard.mlir (see README beside it)

// -----

// CHECK: crash-guard.mlir:[[@LINE+3]]:3: error: internal compiler error: test assertion
func.func @g(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  // a crash inside a function is located at its line
  %y = tensor.collapse_shape %x [[0, 1]] {crash_here} : tensor<4x4xf32> into tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// The part after the crashes is compiled as usual.
// CHECK: func.func @fine
// CHECK-NEXT: return
func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
