// RUN: dlvm-opt --help | FileCheck %s
// RUN: dlvm-opt --help --load-pass-plugin=%S/Inputs/test_passes.py | FileCheck %s --check-prefix=PLUGIN
// RUN: dlvm-opt --version | FileCheck %s --check-prefix=VERSION

// CHECK: usage: dlvm-opt [options] [input-file|-] [-o output-file]
// CHECK: -o FILE
// CHECK: --pass-pipeline=TEXT
// CHECK: --split-input-file[=MARKER]
// CHECK: --verify-diagnostics
// CHECK: --mlir-print-ir-after-all
// CHECK: --mlir-timing
// CHECK: Python passes
// CHECK: Pass pipelines:
// CHECK: Upstream MLIR passes

// PLUGIN:      --test-annotate {{ *}}Record the option values as test.* attributes of the module
// PLUGIN-NEXT:     tag=<str>  value of test.tag (default: none)
// PLUGIN:          sizes=<list<int>>  value of test.sizes (default: empty)
// PLUGIN-NEXT:     mode=<fast|safe>  value of test.mode (default: fast)
// PLUGIN:      Pass pipelines:
// PLUGIN: --test-cleanup {{ *}}Annotate, then canonicalize and cse

// VERSION: dlvm-opt from dlvm-mlir {{.*}}, MLIR 22.1.8
