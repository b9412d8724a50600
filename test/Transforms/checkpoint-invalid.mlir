// RUN: dlvm-opt %s --split-input-file --verify-diagnostics --dlvm-differentiate --dlvm-checkpoint=budget=64
// RUN: not dlvm-opt %s --split-input-file --dlvm-checkpoint=budget=lots 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not dlvm-opt %s --split-input-file --dlvm-checkpoint='policy=save-dots budget=1KiB' 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not dlvm-opt %s --split-input-file --dlvm-checkpoint=policy=sometimes 2>&1 | FileCheck %s --check-prefix=POLICY

// SIZE: error: dlvm-checkpoint: bad budget: 'lots' is not a size (examples: 65536, 64KiB, 1.5MB)
// MIXED: error: budget applies to policy=min-recompute, not policy=save-dots
// POLICY: error: {{.*}}sometimes{{.*}}

// A loop's result (and tape) cannot be recomputed by copying one op: a budget below its size
// cannot be met.
func.func @f(%x: tensor<32xf64>, %w: tensor<32xf64>) -> tensor<f64> {
  %a = dlvm.mul %x, %w : tensor<32xf64>, tensor<32xf64>
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %a) -> (tensor<32xf64>) {
    %t = dlvm.sin %h : tensor<32xf64>
    scf.yield %t : tensor<32xf64>
  }
  %e = dlvm.exp %r : tensor<32xf64>
  %s = dlvm.reduce add %e dims [0] : tensor<32xf64>
  return %s : tensor<f64>
}
// expected-error @+1 {{dlvm-checkpoint: @f_grad cannot meet budget=64 (64 bytes): its reverse sweep needs at least}}
func.func private @f_grad(tensor<32xf64>, tensor<32xf64>) -> tensor<32xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [1]>}
