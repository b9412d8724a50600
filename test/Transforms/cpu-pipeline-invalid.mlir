// Entry points the CPU runtime cannot call are reported at the function.
// RUN: not dlvm-opt %s --dlvm-cpu-pipeline 2>&1 | FileCheck %s

// CHECK: cpu-pipeline-invalid.mlir:[[@LINE+1]]:1: error: dlvm-cpu-pipeline: @bf16_entry: unsupported element type at an entry point: tensor<3xbf16>
func.func @bf16_entry(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %s = dlvm.sin %x : tensor<3xbf16>
  return %s : tensor<3xbf16>
}
