// RUN: dlvm-opt %s --verify-diagnostics --load-pass-plugin=%S/Inputs/test_passes.py --test-error-at-unknown-loc

// expected-error @unknown {{no position for this one}}
func.func @f() {
  return
}
