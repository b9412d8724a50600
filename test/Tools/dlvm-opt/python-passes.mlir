// Python passes and pipelines from a plugin, as flags and in --pass-pipeline.

// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-annotate | FileCheck %s --check-prefix=DEFAULTS
// DEFAULTS: module attributes {test.count = 0 : i64, test.flag = false, test.mode = "fast", test.scale = 1.000000e+00 : f64, test.sizes = array<i64>, test.tag = "none"}

// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py \
// RUN:   --test-annotate="tag='two words' count=0x10 scale=2 flag sizes=1,2,3 mode=safe" \
// RUN:   | FileCheck %s --check-prefix=FLAG
// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py \
// RUN:   --pass-pipeline='builtin.module(test-annotate{tag="two words" count=16 scale=2.0 flag=true sizes={1,2,3} mode=safe})' \
// RUN:   | FileCheck %s --check-prefix=FLAG
// FLAG: module attributes {test.count = 16 : i64, test.flag = true, test.mode = "safe", test.scale = 2.000000e+00 : f64, test.sizes = array<i64: 1, 2, 3>, test.tag = "two words"}

// Pass flags run in command-line order: the later annotation wins.
// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-annotate=tag=first --canonicalize --test-annotate=tag=second \
// RUN:   | FileCheck %s --check-prefix=ORDER
// ORDER: test.tag = "second"
// ORDER-LABEL: func.func @add_zero(
// ORDER-NEXT:    return

// A named pipeline expands to Python and upstream passes.
// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-cleanup=tag=done | FileCheck %s --check-prefix=PIPELINE
// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --pass-pipeline='builtin.module(test-cleanup{tag=done})' \
// RUN:   --dump-pass-pipeline 2>&1 | FileCheck %s --check-prefixes=DUMP,PIPELINE
// DUMP: builtin.module(test-annotate{tag=done},canonicalize,func.func(cse))
// PIPELINE: test.tag = "done"
// PIPELINE-LABEL: func.func @add_zero(
// PIPELINE-NEXT:    return

func.func @add_zero(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %b = arith.addi %a, %c0 : i32
  return %b : i32
}
