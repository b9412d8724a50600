// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s --check-prefix=RAW
// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate --canonicalize --cse | FileCheck %s --check-prefix=CLEAN

// Every form of a derivative declaration. RAW is the pass's output; CLEAN is after canonicalize
// and cse, where the dead forward copy is gone.

// The DLVM paper's Figure 3: foo(x, w, b) = dot(x, w) + b, [gradient @foo wrt 1, 2]
// returns (dot(transpose(x), ones), ones).
// RAW-LABEL: func.func @foo_grad(
// RAW-SAME:    %[[ARG0:.*]]: tensor<1x784xf32>, %[[ARG1:.*]]: tensor<784x10xf32>, %[[ARG2:.*]]: tensor<1x10xf32>) -> (tensor<784x10xf32>, tensor<1x10xf32>)
// RAW:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<1x784xf32>, tensor<784x10xf32>
// RAW:      %[[V1:.*]] = dlvm.add %[[V0]], %[[ARG2]] : tensor<1x10xf32>, tensor<1x10xf32>
// RAW:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<1x10xf32>
// RAW:      %[[V3:.*]] = dlvm.transpose %[[ARG0]] : tensor<1x784xf32>
// RAW:      %[[V4:.*]] = dlvm.dot %[[V3]], %[[V2]] : tensor<784x1xf32>, tensor<1x10xf32>
// RAW:      return %[[V4]], %[[V2]] : tensor<784x10xf32>, tensor<1x10xf32>
// CLEAN-LABEL: func.func @foo_grad(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<1x784xf32>, %[[ARG1:.*]]: tensor<784x10xf32>, %[[ARG2:.*]]: tensor<1x10xf32>) -> (tensor<784x10xf32>, tensor<1x10xf32>)
// CLEAN:      %[[V0:.*]] = dlvm.constant dense<1.000000e+00> : tensor<1x10xf32>
// CLEAN:      %[[V1:.*]] = dlvm.transpose %[[ARG0]] : tensor<1x784xf32>
// CLEAN:      %[[V2:.*]] = dlvm.dot %[[V1]], %[[V0]] : tensor<784x1xf32>, tensor<1x10xf32>
// CLEAN:      return %[[V2]], %[[V0]] : tensor<784x10xf32>, tensor<1x10xf32>
func.func @foo(%x: tensor<1x784xf32>, %w: tensor<784x10xf32>, %b: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %0 = dlvm.dot %x, %w : tensor<1x784xf32>, tensor<784x10xf32>
  %1 = dlvm.add %0, %b : tensor<1x10xf32>, tensor<1x10xf32>
  return %1 : tensor<1x10xf32>
}
func.func private @foo_grad(tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>) -> (tensor<784x10xf32>, tensor<1x10xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo wrt [1, 2]>}

// -----

// keeping 0 and seedable: the seed replaces ones, and foo's result is also returned:
// (dot(transpose(x), seed), seed, foo(x, w, b)).
// RAW-LABEL: func.func @foo_grad_kept(
// RAW-SAME:    %[[ARG0:.*]]: tensor<1x784xf32>, %[[ARG1:.*]]: tensor<784x10xf32>, %[[ARG2:.*]]: tensor<1x10xf32>, %[[ARG3:.*]]: tensor<1x10xf32>) -> (tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
// RAW:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<1x784xf32>, tensor<784x10xf32>
// RAW:      %[[V1:.*]] = dlvm.add %[[V0]], %[[ARG2]] : tensor<1x10xf32>, tensor<1x10xf32>
// RAW:      %[[V2:.*]] = dlvm.transpose %[[ARG0]] : tensor<1x784xf32>
// RAW:      %[[V3:.*]] = dlvm.dot %[[V2]], %[[ARG3]] : tensor<784x1xf32>, tensor<1x10xf32>
// RAW:      return %[[V3]], %[[ARG3]], %[[V1]] : tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>
// CLEAN-LABEL: func.func @foo_grad_kept(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<1x784xf32>, %[[ARG1:.*]]: tensor<784x10xf32>, %[[ARG2:.*]]: tensor<1x10xf32>, %[[ARG3:.*]]: tensor<1x10xf32>) -> (tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
// CLEAN:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<1x784xf32>, tensor<784x10xf32>
// CLEAN:      %[[V1:.*]] = dlvm.add %[[V0]], %[[ARG2]] : tensor<1x10xf32>, tensor<1x10xf32>
// CLEAN:      %[[V2:.*]] = dlvm.transpose %[[ARG0]] : tensor<1x784xf32>
// CLEAN:      %[[V3:.*]] = dlvm.dot %[[V2]], %[[ARG3]] : tensor<784x1xf32>, tensor<1x10xf32>
// CLEAN:      return %[[V3]], %[[ARG3]], %[[V1]] : tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>
func.func @foo(%x: tensor<1x784xf32>, %w: tensor<784x10xf32>, %b: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %0 = dlvm.dot %x, %w : tensor<1x784xf32>, tensor<784x10xf32>
  %1 = dlvm.add %0, %b : tensor<1x10xf32>, tensor<1x10xf32>
  return %1 : tensor<1x10xf32>
}
func.func private @foo_grad_kept(tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>) -> (tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo wrt [1, 2] keeping [0] seedable>}

// -----

// No wrt: every argument; dx = dot(ones, transpose(w)).
// RAW-LABEL: func.func @foo_grad_all(
// RAW-SAME:    %[[ARG0:.*]]: tensor<1x784xf32>, %[[ARG1:.*]]: tensor<784x10xf32>, %[[ARG2:.*]]: tensor<1x10xf32>) -> (tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>)
// RAW:      %[[V0:.*]] = dlvm.dot %[[ARG0]], %[[ARG1]] : tensor<1x784xf32>, tensor<784x10xf32>
// RAW:      %[[V1:.*]] = dlvm.add %[[V0]], %[[ARG2]] : tensor<1x10xf32>, tensor<1x10xf32>
// RAW:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<1x10xf32>
// RAW:      %[[V3:.*]] = dlvm.transpose %[[ARG1]] : tensor<784x10xf32>
// RAW:      %[[V4:.*]] = dlvm.dot %[[V2]], %[[V3]] : tensor<1x10xf32>, tensor<10x784xf32>
// RAW:      %[[V5:.*]] = dlvm.transpose %[[ARG0]] : tensor<1x784xf32>
// RAW:      %[[V6:.*]] = dlvm.dot %[[V5]], %[[V2]] : tensor<784x1xf32>, tensor<1x10xf32>
// RAW:      return %[[V4]], %[[V6]], %[[V2]] : tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>
// CLEAN-LABEL: func.func @foo_grad_all(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<1x784xf32>, %[[ARG1:.*]]: tensor<784x10xf32>, %[[ARG2:.*]]: tensor<1x10xf32>) -> (tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>)
// CLEAN:      %[[V0:.*]] = dlvm.constant dense<1.000000e+00> : tensor<1x10xf32>
// CLEAN:      %[[V1:.*]] = dlvm.transpose %[[ARG1]] : tensor<784x10xf32>
// CLEAN:      %[[V2:.*]] = dlvm.dot %[[V0]], %[[V1]] : tensor<1x10xf32>, tensor<10x784xf32>
// CLEAN:      %[[V3:.*]] = dlvm.transpose %[[ARG0]] : tensor<1x784xf32>
// CLEAN:      %[[V4:.*]] = dlvm.dot %[[V3]], %[[V0]] : tensor<784x1xf32>, tensor<1x10xf32>
// CLEAN:      return %[[V2]], %[[V4]], %[[V0]] : tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>
func.func @foo(%x: tensor<1x784xf32>, %w: tensor<784x10xf32>, %b: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %0 = dlvm.dot %x, %w : tensor<1x784xf32>, tensor<784x10xf32>
  %1 = dlvm.add %0, %b : tensor<1x10xf32>, tensor<1x10xf32>
  return %1 : tensor<1x10xf32>
}
func.func private @foo_grad_all(tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>) -> (tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo>}

// -----

// from 1 of a two-result function: only the second result is differentiated (seeded with ones).
// RAW-LABEL: func.func @two_grad_from1(
// RAW-SAME:    %[[ARG0:.*]]: tensor<3xf32>) -> tensor<3xf32>
// RAW:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V1:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<3xf32>
// RAW:      %[[V3:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V4:.*]] = dlvm.mul %[[V2]], %[[V3]] : tensor<3xf32>, tensor<3xf32>
// RAW:      %[[V5:.*]] = dlvm.neg %[[V4]] : tensor<3xf32>
// RAW:      return %[[V5]] : tensor<3xf32>
// CLEAN-LABEL: func.func @two_grad_from1(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CLEAN:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// CLEAN:      %[[V1:.*]] = dlvm.neg %[[V0]] : tensor<3xf32>
// CLEAN:      return %[[V1]] : tensor<3xf32>
func.func @two(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %s = dlvm.sin %x : tensor<3xf32>
  %c = dlvm.cos %x : tensor<3xf32>
  return %s, %c : tensor<3xf32>, tensor<3xf32>
}
func.func private @two_grad_from1(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @two from 1>}

// -----

// Without from, every result is differentiated: the gradient of their sum, cos(x) - sin(x).
// RAW-LABEL: func.func @two_grad(
// RAW-SAME:    %[[ARG0:.*]]: tensor<3xf32>) -> tensor<3xf32>
// RAW:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V1:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<3xf32>
// RAW:      %[[V3:.*]] = dlvm.constant dense<1.000000e+00> : tensor<3xf32>
// RAW:      %[[V4:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V5:.*]] = dlvm.mul %[[V3]], %[[V4]] : tensor<3xf32>, tensor<3xf32>
// RAW:      %[[V6:.*]] = dlvm.neg %[[V5]] : tensor<3xf32>
// RAW:      %[[V7:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V8:.*]] = dlvm.mul %[[V2]], %[[V7]] : tensor<3xf32>, tensor<3xf32>
// RAW:      %[[V9:.*]] = dlvm.add %[[V6]], %[[V8]] : tensor<3xf32>, tensor<3xf32>
// RAW:      return %[[V9]] : tensor<3xf32>
// CLEAN-LABEL: func.func @two_grad(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CLEAN:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// CLEAN:      %[[V1:.*]] = dlvm.neg %[[V0]] : tensor<3xf32>
// CLEAN:      %[[V2:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// CLEAN:      %[[V3:.*]] = dlvm.add %[[V1]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
// CLEAN:      return %[[V3]] : tensor<3xf32>
func.func @two(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %s = dlvm.sin %x : tensor<3xf32>
  %c = dlvm.cos %x : tensor<3xf32>
  return %s, %c : tensor<3xf32>, tensor<3xf32>
}
func.func private @two_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @two>}

// -----

// Seedable without from: one seed per result.
// RAW-LABEL: func.func @two_grad_seeds(
// RAW-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<3xf32>) -> tensor<3xf32>
// RAW:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V1:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V2:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V3:.*]] = dlvm.mul %[[ARG2]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
// RAW:      %[[V4:.*]] = dlvm.neg %[[V3]] : tensor<3xf32>
// RAW:      %[[V5:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V6:.*]] = dlvm.mul %[[ARG1]], %[[V5]] : tensor<3xf32>, tensor<3xf32>
// RAW:      %[[V7:.*]] = dlvm.add %[[V4]], %[[V6]] : tensor<3xf32>, tensor<3xf32>
// RAW:      return %[[V7]] : tensor<3xf32>
// CLEAN-LABEL: func.func @two_grad_seeds(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CLEAN:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// CLEAN:      %[[V1:.*]] = dlvm.mul %[[ARG2]], %[[V0]] : tensor<3xf32>, tensor<3xf32>
// CLEAN:      %[[V2:.*]] = dlvm.neg %[[V1]] : tensor<3xf32>
// CLEAN:      %[[V3:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// CLEAN:      %[[V4:.*]] = dlvm.mul %[[ARG1]], %[[V3]] : tensor<3xf32>, tensor<3xf32>
// CLEAN:      %[[V5:.*]] = dlvm.add %[[V2]], %[[V4]] : tensor<3xf32>, tensor<3xf32>
// CLEAN:      return %[[V5]] : tensor<3xf32>
func.func @two(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %s = dlvm.sin %x : tensor<3xf32>
  %c = dlvm.cos %x : tensor<3xf32>
  return %s, %c : tensor<3xf32>, tensor<3xf32>
}
func.func private @two_grad_seeds(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @two seedable>}

// -----

// A tangent declaration with wrt and keeping: the JVP, then the kept results.
// RAW-LABEL: func.func @two_jvp(
// RAW-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// RAW:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V1:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// RAW:      %[[V2:.*]] = dlvm.mul %[[ARG2]], %[[V1]] : tensor<3xf32>, tensor<3xf32>
// RAW:      %[[V3:.*]] = dlvm.mul %[[V0]], %[[ARG1]] : tensor<3xf32>, tensor<3xf32>
// RAW:      %[[V4:.*]] = dlvm.mul %[[V2]], %[[ARG1]] : tensor<3xf32>, tensor<3xf32>
// RAW:      return %[[V4]], %[[V0]], %[[V3]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// CLEAN-LABEL: func.func @two_jvp(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CLEAN:      %[[V0:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// CLEAN:      %[[V1:.*]] = dlvm.cos %[[ARG0]] : tensor<3xf32>
// CLEAN:      %[[V2:.*]] = dlvm.mul %[[ARG2]], %[[V1]] : tensor<3xf32>, tensor<3xf32>
// CLEAN:      %[[V3:.*]] = dlvm.mul %[[V0]], %[[ARG1]] : tensor<3xf32>, tensor<3xf32>
// CLEAN:      %[[V4:.*]] = dlvm.mul %[[V2]], %[[ARG1]] : tensor<3xf32>, tensor<3xf32>
// CLEAN:      return %[[V4]], %[[V0]], %[[V3]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
func.func @two(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %s = dlvm.sin %x : tensor<3xf32>
  %m = dlvm.mul %s, %y : tensor<3xf32>, tensor<3xf32>
  return %s, %m : tensor<3xf32>, tensor<3xf32>
}
func.func private @two_jvp(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    attributes {dlvm.tangent = #dlvm.tangent<of @two from 1 wrt [0] keeping [0, 1]>}

// -----

// Higher order: a gradient of a gradient (declarations are synthesized in dependency order).
// RAW-LABEL: func.func @ddt(
// RAW-SAME:    %[[ARG0:.*]]: tensor<2xf32>) -> tensor<2xf32>
// RAW:      %[[V0:.*]] = dlvm.tanh %[[ARG0]] : tensor<2xf32>
// RAW:      %[[V1:.*]] = dlvm.constant dense<1.000000e+00> : tensor<2xf32>
// RAW:      %[[V2:.*]] = dlvm.square %[[V0]] : tensor<2xf32>
// RAW:      %[[V3:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// RAW:      %[[V4:.*]] = dlvm.sub %[[V3]], %[[V2]] : tensor<f32>, tensor<2xf32>
// RAW:      %[[V5:.*]] = dlvm.mul %[[V1]], %[[V4]] : tensor<2xf32>, tensor<2xf32>
// RAW:      %[[V6:.*]] = dlvm.constant dense<1.000000e+00> : tensor<2xf32>
// RAW:      %[[V7:.*]] = dlvm.mul %[[V6]], %[[V1]] : tensor<2xf32>, tensor<2xf32>
// RAW:      %[[V8:.*]] = dlvm.neg %[[V7]] : tensor<2xf32>
// RAW:      %[[V9:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// RAW:      %[[V10:.*]] = dlvm.mul %[[V0]], %[[V9]] : tensor<2xf32>, tensor<f32>
// RAW:      %[[V11:.*]] = dlvm.mul %[[V8]], %[[V10]] : tensor<2xf32>, tensor<2xf32>
// RAW:      %[[V12:.*]] = dlvm.square %[[V0]] : tensor<2xf32>
// RAW:      %[[V13:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// RAW:      %[[V14:.*]] = dlvm.sub %[[V13]], %[[V12]] : tensor<f32>, tensor<2xf32>
// RAW:      %[[V15:.*]] = dlvm.mul %[[V11]], %[[V14]] : tensor<2xf32>, tensor<2xf32>
// RAW:      return %[[V15]] : tensor<2xf32>
// RAW-LABEL: func.func @dt(
// RAW-SAME:    %[[ARG0:.*]]: tensor<2xf32>) -> tensor<2xf32>
// RAW:      %[[V0:.*]] = dlvm.tanh %[[ARG0]] : tensor<2xf32>
// RAW:      %[[V1:.*]] = dlvm.constant dense<1.000000e+00> : tensor<2xf32>
// RAW:      %[[V2:.*]] = dlvm.square %[[V0]] : tensor<2xf32>
// RAW:      %[[V3:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// RAW:      %[[V4:.*]] = dlvm.sub %[[V3]], %[[V2]] : tensor<f32>, tensor<2xf32>
// RAW:      %[[V5:.*]] = dlvm.mul %[[V1]], %[[V4]] : tensor<2xf32>, tensor<2xf32>
// RAW:      return %[[V5]] : tensor<2xf32>
// CLEAN-LABEL: func.func @ddt(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CLEAN:      %[[V0:.*]] = dlvm.constant dense<-1.000000e+00> : tensor<2xf32>
// CLEAN:      %[[V1:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CLEAN:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CLEAN:      %[[V3:.*]] = dlvm.tanh %[[ARG0]] : tensor<2xf32>
// CLEAN:      %[[V4:.*]] = dlvm.mul %[[V3]], %[[V1]] : tensor<2xf32>, tensor<f32>
// CLEAN:      %[[V5:.*]] = dlvm.mul %[[V4]], %[[V0]] : tensor<2xf32>, tensor<2xf32>
// CLEAN:      %[[V6:.*]] = dlvm.square %[[V3]] : tensor<2xf32>
// CLEAN:      %[[V7:.*]] = dlvm.sub %[[V2]], %[[V6]] : tensor<f32>, tensor<2xf32>
// CLEAN:      %[[V8:.*]] = dlvm.mul %[[V5]], %[[V7]] : tensor<2xf32>, tensor<2xf32>
// CLEAN:      return %[[V8]] : tensor<2xf32>
// CLEAN-LABEL: func.func @dt(
// CLEAN-SAME:    %[[ARG0:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CLEAN:      %[[V0:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CLEAN:      %[[V1:.*]] = dlvm.tanh %[[ARG0]] : tensor<2xf32>
// CLEAN:      %[[V2:.*]] = dlvm.square %[[V1]] : tensor<2xf32>
// CLEAN:      %[[V3:.*]] = dlvm.sub %[[V0]], %[[V2]] : tensor<f32>, tensor<2xf32>
// CLEAN:      return %[[V3]] : tensor<2xf32>
func.func @t(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = dlvm.tanh %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func private @ddt(tensor<2xf32>) -> tensor<2xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @dt>}
func.func private @dt(tensor<2xf32>) -> tensor<2xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @t>}
