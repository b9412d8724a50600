// --verify-diagnostics fails, naming each unexpected, missing or mis-kinded diagnostic.

// RUN: not dlvm-opt %s --split-input-file --verify-diagnostics \
// RUN:   --load-pass-plugin=%S/Inputs/test_passes.py --test-reject-op 2>&1 | FileCheck %s

func.func @unexpected(%a: i32) -> i32 {
  // CHECK: verify-diagnostics-mismatch.mlir:[[@LINE+1]]:8: error: unexpected error: 'arith.addi' rejected by test-reject-op
  %b = arith.addi %a, %a : i32
  return %b : i32
}

// -----

func.func @missing(%a: i32) -> i32 {
  // CHECK: verify-diagnostics-mismatch.mlir:[[@LINE+1]]:6: error: expected error "never emitted" was not produced
  // expected-error @+1 {{never emitted}}
  return %a : i32
}

// -----

func.func @wrong_kind(%a: i32) -> i32 {
  // CHECK: verify-diagnostics-mismatch.mlir:[[@LINE+1]]:6: error: 'error' diagnostic emitted when expecting a 'warning'
  // expected-warning @+1 {{rejected}}
  %b = arith.addi %a, %a : i32
  return %b : i32
}

// -----

// RUN: not dlvm-opt %s --verify-diagnostics --load-pass-plugin=%S/Inputs/test_passes.py \
// RUN:   --test-error-at-unknown-loc 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unexpected error: no position for this one
