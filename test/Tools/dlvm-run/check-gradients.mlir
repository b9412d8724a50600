// dlvm-run --check-gradients: the synthesized gradient of the entry, evaluated
// by the interpreter in float64, against central finite differences.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.save('%t/x.npy', r.standard_normal((3, 4)).astype(np.float32)); np.save('%t/w.npy', r.standard_normal((4, 2)).astype(np.float32)); np.save('%t/z.npy', np.array([-1.5, 0.0, 2.0]))"
// RUN: dlvm-run %s --entry layer --input %t/x.npy --input %t/w.npy --check-gradients | FileCheck %s --check-prefix=ALL
// RUN: dlvm-run %s --entry declared --input %t/x.npy --input %t/w.npy --check-gradients | FileCheck %s --check-prefix=DECL
// RUN: not dlvm-run %s --entry kink --input %t/z.npy --check-gradients 2>&1 | FileCheck %s --check-prefix=KINK
// RUN: dlvm-run %s --entry kink --input %t/z.npy --check-gradients --tolerance 2 | FileCheck %s --check-prefix=LOOSE
// RUN: not dlvm-run %s --entry missing --input %t/z.npy --check-gradients 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not dlvm-run %s --entry layer --input %t/z.npy --check-gradients 2>&1 | FileCheck %s --check-prefix=ARITY

// Every floating-point argument by default.
// ALL: argument 0: relative error {{[0-9.]+e-(0[7-9]|1[0-9])}}
// ALL-NEXT: argument 1: relative error {{[0-9.]+e-(0[7-9]|1[0-9])}}
// ALL-NEXT: gradient of @layer: ok
func.func @layer(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>) -> tensor<3x2xf32> {
  %0 = dlvm.dot %x, %w : tensor<3x4xf32>, tensor<4x2xf32>
  %1 = dlvm.tanh %0 : tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// The module's own declaration chooses the arguments (here only %w).
// DECL-NOT: argument 0
// DECL: argument 1: relative error
// DECL-NEXT: gradient of @declared: ok
func.func @declared(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>) -> tensor<3x2xf32> {
  %0 = dlvm.dot %x, %w : tensor<3x4xf32>, tensor<4x2xf32>
  %1 = dlvm.sigmoid %0 : tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}
func.func private @declared_grad(tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @declared wrt [1]>}

// abs'(0) is defined as 1; finite differences see 0 there.
// KINK: argument 0: relative error
// KINK: dlvm-run: error: gradient of @kink: worst relative error {{.*}} > 1e-06
// LOOSE: gradient of @kink: ok
func.func @kink(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = dlvm.abs %x : tensor<3xf64>
  return %0 : tensor<3xf64>
}

// MISSING: dlvm-run: error: {{.*}}check-gradients.mlir: no function @missing to differentiate
// ARITY: dlvm-run: error: @layer takes 2 argument(s), got 1
