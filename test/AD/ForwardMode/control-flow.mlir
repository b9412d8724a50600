// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Forward mode through control flow: tangents ride along as extra loop-carried
// values (scf.for, scf.while) or extra results (scf.if).

// scf.for: iter_args (h, th)
// CHECK-LABEL: func.func @rnn_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<1x4xf32>, %[[ARG1:.*]]: tensor<4x4xf32>, %[[ARG2:.*]]: tensor<1x4xf32>, %[[ARG3:.*]]: tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK:      %[[C1:.*]] = arith.constant 1 : index
// CHECK:      %[[C3:.*]] = arith.constant 3 : index
// CHECK:      %[[V0:.*]]:2 = scf.for %[[ARG4:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[ARG5:.*]] = %[[ARG0]], %[[ARG6:.*]] = %[[ARG2]]) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
// CHECK:        %[[V1:.*]] = dlvm.dot %[[ARG5]], %[[ARG1]] : tensor<1x4xf32>, tensor<4x4xf32>
// CHECK:        %[[V2:.*]] = dlvm.dot %[[ARG6]], %[[ARG1]] : tensor<1x4xf32>, tensor<4x4xf32>
// CHECK:        %[[V3:.*]] = dlvm.dot %[[ARG5]], %[[ARG3]] : tensor<1x4xf32>, tensor<4x4xf32>
// CHECK:        %[[V4:.*]] = dlvm.add %[[V2]], %[[V3]] : tensor<1x4xf32>, tensor<1x4xf32>
// CHECK:        %[[V5:.*]] = dlvm.tanh %[[V1]] : tensor<1x4xf32>
// CHECK:        %[[V6:.*]] = dlvm.square %[[V5]] : tensor<1x4xf32>
// CHECK:        %[[V7:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:        %[[V8:.*]] = dlvm.sub %[[V7]], %[[V6]] : tensor<f32>, tensor<1x4xf32>
// CHECK:        %[[V9:.*]] = dlvm.mul %[[V4]], %[[V8]] : tensor<1x4xf32>, tensor<1x4xf32>
// CHECK:        scf.yield %[[V5]], %[[V9]] : tensor<1x4xf32>, tensor<1x4xf32>
// CHECK:      }
// CHECK:      return %[[V0]]#1 : tensor<1x4xf32>
func.func @rnn(%h0: tensor<1x4xf32>, %w: tensor<4x4xf32>) -> tensor<1x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %h = scf.for %t = %c0 to %c3 step %c1 iter_args(%hc = %h0) -> (tensor<1x4xf32>) {
    %a = dlvm.dot %hc, %w : tensor<1x4xf32>, tensor<4x4xf32>
    %hn = dlvm.tanh %a : tensor<1x4xf32>
    scf.yield %hn : tensor<1x4xf32>
  }
  return %h : tensor<1x4xf32>
}
func.func private @rnn_jvp(tensor<1x4xf32>, tensor<4x4xf32>, tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @rnn>}

// -----

// scf.while: the tangent of the state is carried through both regions
// CHECK-LABEL: func.func @grow_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2xf32>, %[[ARG1:.*]]: tensor<2xf32>, %[[ARG2:.*]]: tensor<2xf32>, %[[ARG3:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CHECK:      %[[V0:.*]] = dlvm.constant dense<1.000000e+01> : tensor<f32>
// CHECK:      %[[V1:.*]]:2 = scf.while (%[[ARG4:.*]] = %[[ARG0]], %[[ARG5:.*]] = %[[ARG2]]) : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
// CHECK:        %[[V2:.*]] = dlvm.reduce add %[[ARG4]] dims [0] : tensor<2xf32>
// CHECK:        %[[V3:.*]] = dlvm.cmp lt, %[[V2]], %[[V0]] : tensor<f32>, tensor<f32>
// CHECK:        %[[EXTRACTED:.*]] = tensor.extract %[[V3]][] : tensor<i1>
// CHECK:        scf.condition(%[[EXTRACTED]]) %[[ARG4]], %[[ARG5]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      } do {
// CHECK:      ^bb0(%[[ARG4:.*]]: tensor<2xf32>, %[[ARG5:.*]]: tensor<2xf32>):
// CHECK:        %[[V2:.*]] = dlvm.mul %[[ARG4]], %[[ARG1]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[V3:.*]] = dlvm.mul %[[ARG5]], %[[ARG1]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[V4:.*]] = dlvm.mul %[[ARG3]], %[[ARG4]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[V5:.*]] = dlvm.add %[[V3]], %[[V4]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        scf.yield %[[V2]], %[[V5]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      }
// CHECK:      return %[[V1]]#1 : tensor<2xf32>
func.func @grow(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<2xf32> {
  %limit = dlvm.constant dense<10.0> : tensor<f32>
  %r = scf.while (%v = %x) : (tensor<2xf32>) -> tensor<2xf32> {
    %s = dlvm.reduce add %v dims [0] : tensor<2xf32>
    %c = dlvm.cmp lt, %s, %limit : tensor<f32>, tensor<f32>
    %cc = tensor.extract %c[] : tensor<i1>
    scf.condition(%cc) %v : tensor<2xf32>
  } do {
  ^bb0(%v: tensor<2xf32>):
    %m = dlvm.mul %v, %w : tensor<2xf32>, tensor<2xf32>
    scf.yield %m : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
func.func private @grow_jvp(tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @grow>}

// -----

// scf.if: results (r, tr)
// CHECK-LABEL: func.func @branch_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: i1, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]]:2 = scf.if %[[ARG0]] -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK:        %[[V1:.*]] = dlvm.sin %[[ARG1]] : tensor<3xf32>
// CHECK:        %[[V2:.*]] = dlvm.cos %[[ARG1]] : tensor<3xf32>
// CHECK:        %[[V3:.*]] = dlvm.mul %[[ARG2]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        scf.yield %[[V1]], %[[V3]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      } else {
// CHECK:        %[[V1:.*]] = dlvm.exp %[[ARG1]] : tensor<3xf32>
// CHECK:        %[[V2:.*]] = dlvm.mul %[[ARG2]], %[[V1]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        scf.yield %[[V1]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      }
// CHECK:      return %[[V0]]#1 : tensor<3xf32>
func.func @branch(%c: i1, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = scf.if %c -> (tensor<3xf32>) {
    %s = dlvm.sin %x : tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  } else {
    %e = dlvm.exp %x : tensor<3xf32>
    scf.yield %e : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
func.func private @branch_jvp(i1, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @branch wrt [1]>}
