// A failing pipeline prints the dlvm-opt command that replays it on a saved copy of its input,
// narrowed to the first failing element of the pipeline and the IR that element received.

// RUN: rm -rf %t
// RUN: not dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --canonicalize --test-raise-at-func \
// RUN:   --reproducer-dir=%t 2>&1 | FileCheck %s

// The saved input keeps the original locations, so the replay reports the same place.
// RUN: not dlvm-opt --load-pass-plugin=%S/Inputs/test_passes.py '--pass-pipeline=builtin.module(test-raise-at-func)' \
// RUN:   %t/input.mlir 2>&1 | FileCheck %s --check-prefix=REPLAY

// CHECK: reproducer.mlir:[[@LINE+2]]:1: error: functions are not allowed here
// REPLAY: reproducer.mlir:[[@LINE+1]]:1: error: functions are not allowed here
func.func @f() {
  return
}
// Narrowing replays the elements silently: the error is reported once.
// CHECK-NOT: error:
// CHECK: note: reproduce with: dlvm-opt --load-pass-plugin={{.*}}test_passes.py '--pass-pipeline=builtin.module(test-raise-at-func)' {{.*}}input.mlir

// With --split-input-file, each failing part is saved in its own folder.
// RUN: rm -rf %t.split
// RUN: not dlvm-opt %s --split-input-file --load-pass-plugin=%S/Inputs/test_passes.py --test-raise-at-func \
// RUN:   --reproducer-dir=%t.split 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: note: reproduce with: {{.*}}.split/part-1/input.mlir
// SPLIT: note: reproduce with: {{.*}}.split/part-2/input.mlir

// -----

func.func @g() {
  return
}
