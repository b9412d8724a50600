// RUN: dlvm-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: not dlvm-opt %s --split-input-file --load-pass-plugin=%S/Inputs/test_passes.py \
// RUN:   --test-reject-op 2>&1 | FileCheck %s --check-prefix=ERRORS

// Each part is its own module; the outputs are joined by the split marker.
// CHECK-LABEL: func.func @first(
// CHECK-NEXT:    return
// CHECK:       // -----
// CHECK-LABEL: func.func @second(
// CHECK-NEXT:    return
// CHECK-NOT:   // -----

// Diagnostics give the line numbers of the whole file, for every part.
func.func @first(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  // ERRORS: split-input-file.mlir:[[@LINE+2]]:8: error: 'arith.addi' rejected by test-reject-op
  // ERRORS-NEXT: %b = arith.addi %a, %c0 : i32
  %b = arith.addi %a, %c0 : i32
  return %b : i32
}

// -----

func.func @second(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  // ERRORS: split-input-file.mlir:[[@LINE+1]]:8: error: 'arith.addi' rejected by test-reject-op
  %b = arith.addi %c0, %a : i32
  return %b : i32
}
