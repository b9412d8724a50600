// A bug in a Python pass (an unexpected exception) is an internal error: the
// only case with a traceback, plus the command that reproduces it.

// RUN: not dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-crash 2>&1 | FileCheck %s
// CHECK: dlvm-opt: internal error (a bug in dlvm-mlir, not in the input); please report:
// CHECK: Traceback (most recent call last):
// CHECK: RuntimeError: bug in test-crash
// CHECK: reproduce with: dlvm-opt --load-pass-plugin={{.*}} '--pass-pipeline=builtin.module(test-crash)' {{.*}}input.mlir

func.func @f() {
  return
}
