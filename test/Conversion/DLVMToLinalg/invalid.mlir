// Inputs the conversion cannot handle give a diagnostic, never a crash.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' --split-input-file --verify-diagnostics

func.func @dynamic_operand(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'dlvm.exp' op cannot be lowered by dlvm-to-linalg: every operand and result must be a statically shaped ranked tensor}}
  %r = dlvm.exp %x : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

func.func @dynamic_dot(%a: tensor<?x4xf32>, %b: tensor<4x5xf32>) -> tensor<?x5xf32> {
  // expected-error @+1 {{'dlvm.dot' op cannot be lowered by dlvm-to-linalg}}
  %r = dlvm.dot %a, %b : tensor<?x4xf32>, tensor<4x5xf32>
  return %r : tensor<?x5xf32>
}

// -----

// Every offending op is reported, not just the first.
func.func @two_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'dlvm.neg' op cannot be lowered}}
  %a = dlvm.neg %x : tensor<?xf32>
  // expected-error @+1 {{'dlvm.exp' op cannot be lowered}}
  %b = dlvm.exp %a : tensor<?xf32>
  return %b : tensor<?xf32>
}
