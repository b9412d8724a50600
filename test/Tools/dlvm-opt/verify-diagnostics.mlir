// RUN: dlvm-opt %s --split-input-file --verify-diagnostics \
// RUN:   --load-pass-plugin=%S/Inputs/test_passes.py --test-reject-op

// A Python pass reports errors at the rejected operations; @+N, @-N, @above and
// @below designators and same-line comments all point at them.
func.func @designators(%a: i32) -> i32 {
  // expected-error @+1 {{'arith.addi' rejected by test-reject-op}}
  %b = arith.addi %a, %a : i32
  %c = arith.addi %b, %a : i32 // expected-error {{rejected by test-reject-op}}
  %d = arith.addi %c, %a : i32
  // expected-error @-1 {{rejected}}
  %e = arith.addi %d, %a : i32
  // expected-error @above {{rejected}}
  // expected-error @below {{rejected}}
  %f = arith.addi %e, %a : i32
  return %f : i32
}

// -----

// Parse errors are diagnostics too.
func.func @parse_error() {
  // expected-error @+1 {{custom op 'arith.bogus' is unknown}}
  %x = arith.bogus
}

// -----

// So are verifier errors; -re takes {{regex}} pieces.
func.func @verify_error(%a: i32) -> i64 {
  // expected-error-re @+1 {{type of return operand 0 ('i32') doesn't match function result type ('{{i[0-9]+}}')}}
  return %a : i32
}

// -----

// A part without diagnostics passes through.
func.func @clean(%a: i32) -> i32 {
  return %a : i32
}
