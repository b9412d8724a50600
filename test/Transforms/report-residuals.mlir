// dlvm-report-residuals: one remark per value the reverse sweep reads from the forward sweep
// (saved) or rebuilds (recomputed, after dlvm-checkpoint), and a total per gradient function.
// RUN: dlvm-opt %s --split-input-file --verify-diagnostics --dlvm-differentiate --dlvm-optimize --dlvm-report-residuals
// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate --dlvm-optimize --dlvm-checkpoint=policy=save-dots --dlvm-report-residuals 2>&1 >/dev/null | FileCheck %s --check-prefix=DOTS

func.func @layer(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<f32> {
  %z = dlvm.dot %x, %w : tensor<16x64xf32>, tensor<64x32xf32>
  // expected-remark @+1 {{saved: 'dlvm.tanh' tensor<16x32xf32> (2048 bytes)}}
  %h = dlvm.tanh %z : tensor<16x32xf32>
  %s = dlvm.reduce add %h dims [0, 1] : tensor<16x32xf32>
  return %s : tensor<f32>
}
// expected-remark @+1 {{@layer_grad: 1 saved values, 2048 bytes; 0 recomputed values, 0 flops}}
func.func private @layer_grad(tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @layer wrt [1]>}

// DOTS: report-residuals.mlir:[[# @LINE - 10]]:8: remark: saved: 'dlvm.dot' tensor<16x32xf32> (2048 bytes)
// DOTS: report-residuals.mlir:[[# @LINE - 9]]:8: remark: recomputed: 'dlvm.tanh' tensor<16x32xf32> (2048 bytes not stored, 512 flops)
// DOTS: remark: @layer_grad: 1 saved values, 2048 bytes; 1 recomputed values, 512 flops

// -----

// A function without a reverse sweep gets no report.
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
