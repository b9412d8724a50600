// RUN: dlvm-opt %s --canonicalize --mlir-print-ir-before-all --mlir-print-ir-after-all -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PRINT
// PRINT: // -----// IR Dump Before Canonicalizer (canonicalize) //----- //
// PRINT: arith.addi
// PRINT: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// PRINT-NOT: arith.addi

// RUN: dlvm-opt %s --canonicalize --cse --mlir-print-ir-after-all --mlir-print-ir-after-change -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHANGE
// CHANGE: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHANGE-NOT: IR Dump After CSE

// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-annotate --mlir-print-ir-after-all -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PYTHON-PASS
// PYTHON-PASS: // -----// IR Dump After TestAnnotate (test-annotate) //----- //

// RUN: dlvm-opt %s --canonicalize --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING
// TIMING: Execution time report
// TIMING: Canonicalizer

func.func @add_zero(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %b = arith.addi %a, %c0 : i32
  return %b : i32
}
