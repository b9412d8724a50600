// Gradient and tangent declarations: every form round-trips; the verifier
// checks each declared signature against the primal's.
// RUN: dlvm-opt %s --split-input-file | dlvm-opt --split-input-file | FileCheck %s
// RUN: %mlir_opt %s --split-input-file | FileCheck %s

func.func @foo(%x: tensor<1x784xf32>, %w: tensor<784x10xf32>, %b: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %0 = dlvm.dot %x, %w : tensor<1x784xf32>, tensor<784x10xf32>
  %1 = dlvm.add %0, %b : tensor<1x10xf32>, tensor<1x10xf32>
  return %1 : tensor<1x10xf32>
}

// The DLVM paper's example: [gradient @foo wrt 1, 2 keeping 0 seedable].
// CHECK-LABEL: func.func private @foo_grad
// CHECK-SAME: (tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>) -> (tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
// CHECK-SAME: dlvm.gradient = #dlvm.gradient<of @foo wrt [1, 2] keeping [0] seedable>
func.func private @foo_grad(tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
    -> (tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo wrt [1, 2] keeping [0] seedable>}

// All arguments, unseeded.
// CHECK-LABEL: func.func private @foo_grad_all
// CHECK-SAME: dlvm.gradient = #dlvm.gradient<of @foo>
func.func private @foo_grad_all(tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>)
    -> (tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo>}

// Clauses in any order print in canonical order.
// CHECK-LABEL: func.func private @foo_grad_order
// CHECK-SAME: #dlvm.gradient<of @foo wrt [2] keeping [0]>
func.func private @foo_grad_order(tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>)
    -> (tensor<1x10xf32>, tensor<1x10xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo keeping [0] wrt [2]>}

// Forward mode: arguments, then one tangent per wrt argument.
// CHECK-LABEL: func.func private @foo_jvp
// CHECK-SAME: dlvm.tangent = #dlvm.tangent<of @foo wrt [1]>
func.func private @foo_jvp(tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>, tensor<784x10xf32>)
    -> tensor<1x10xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @foo wrt [1]>}

// -----

func.func @two(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %0 = dlvm.tanh %x : tensor<3xf32>
  %1 = dlvm.reduce add %0 dims [0] : tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<f32>
}

// `from 1` differentiates the second result; the seed is that result's type.
// CHECK-LABEL: func.func private @two_grad
// CHECK-SAME: #dlvm.gradient<of @two from 1 keeping [0, 1] seedable>
func.func private @two_grad(tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<f32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @two from 1 keeping [0, 1] seedable>}

// Higher order: the gradient of a gradient.
// CHECK-LABEL: func.func private @two_grad_grad
// CHECK-SAME: #dlvm.gradient<of @two_grad from 0 wrt [0]>
func.func private @two_grad_grad(tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @two_grad from 0 wrt [0]>}
