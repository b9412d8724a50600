// RUN: dlvm-opt %s | dlvm-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: dlvm-opt < %s | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: dlvm-opt - -o %t < %s && FileCheck %s --check-prefix=ROUNDTRIP --input-file=%t
// RUN: dlvm-opt %s --canonicalize --cse | FileCheck %s --check-prefix=CLEAN
// RUN: dlvm-opt %s -canonicalize=max-iterations=2 | FileCheck %s --check-prefix=CLEAN
// RUN: dlvm-opt %s --pass-pipeline='builtin.module(func.func(canonicalize,cse))' | FileCheck %s --check-prefix=CLEAN
// RUN: dlvm-opt %s --pass-pipeline='func.func(canonicalize)' | FileCheck %s --check-prefix=CLEAN
// RUN: dlvm-opt %s --mlir-print-generic-op-form | FileCheck %s --check-prefix=GENERIC
// RUN: dlvm-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUGINFO

// ROUNDTRIP-LABEL: func.func @add_zero(
// ROUNDTRIP-SAME:    %[[A:.*]]: i32) -> i32
// ROUNDTRIP:         %[[C0:.*]] = arith.constant 0 : i32
// ROUNDTRIP:         %[[SUM:.*]] = arith.addi %[[A]], %[[C0]] : i32
// ROUNDTRIP:         return %[[SUM]] : i32

// CLEAN-LABEL: func.func @add_zero(
// CLEAN-SAME:    %[[A:.*]]: i32) -> i32
// CLEAN-NEXT:    return %[[A]] : i32

// GENERIC: "func.func"() <{function_type = (i32) -> i32, sym_name = "add_zero"}>
// GENERIC: "arith.addi"

// The locations name the input file, at its lines.
// DEBUGINFO: arith.addi {{.*}} loc(#[[ADD:loc[0-9]*]])
// DEBUGINFO: #[[ADD]] = loc("{{.*}}basic.mlir":[[@LINE+3]]:8)
func.func @add_zero(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %b = arith.addi %a, %c0 : i32
  return %b : i32
}
