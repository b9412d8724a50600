// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of scf.while with a data-dependent trip count. The forward sweep runs the loop with an
// iteration counter (its results are the primal results), then replays that many iterations as an
// scf.for that tapes the state before each iteration. The reverse sweep reverses the last evaluation
// of the condition region on the final state, then runs an scf.for backwards: per iteration it
// recomputes the 'before' and 'after' regions from the tape and reverses 'after', then 'before'.

// CHECK-LABEL: func.func @grow_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2xf32>, %[[ARG1:.*]]: tensor<2xf32>, %[[ARG2:.*]]: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK:      %[[V0:.*]] = dlvm.constant dense<1.000000e+01> : tensor<f32>
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK:      %[[V1:.*]]:2 = scf.while (%[[ARG3:.*]] = %[[ARG0]], %[[ARG4:.*]] = %[[C0]]) : (tensor<2xf32>, index) -> (tensor<2xf32>, index) {
// CHECK:        %[[V8:.*]] = dlvm.reduce add %[[ARG3]] dims [0] : tensor<2xf32>
// CHECK:        %[[V9:.*]] = dlvm.cmp lt, %[[V8]], %[[V0]] : tensor<f32>, tensor<f32>
// CHECK:        %[[EXTRACTED_3:.*]] = tensor.extract %[[V9]][] : tensor<i1>
// CHECK:        scf.condition(%[[EXTRACTED_3]]) %[[ARG3]], %[[ARG4]] : tensor<2xf32>, index
// CHECK:      } do {
// CHECK:      ^bb0(%[[ARG3:.*]]: tensor<2xf32>, %[[ARG4:.*]]: index):
// CHECK:        %[[V8:.*]] = dlvm.mul %[[ARG3]], %[[ARG1]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[C1_3:.*]] = arith.constant 1 : index
// CHECK:        %[[V9:.*]] = arith.addi %[[ARG4]], %[[C1_3]] : index
// CHECK:        scf.yield %[[V8]], %[[V9]] : tensor<2xf32>, index
// CHECK:      }
// CHECK:      %[[V2:.*]] = tensor.empty(%[[V1]]#1) : tensor<?x2xf32>
// CHECK:      %[[C0_0:.*]] = arith.constant 0 : index
// CHECK:      %[[C1:.*]] = arith.constant 1 : index
// CHECK:      %[[V3:.*]]:2 = scf.for %[[ARG3:.*]] = %[[C0_0]] to %[[V1]]#1 step %[[C1]] iter_args(%[[ARG4:.*]] = %[[ARG0]], %[[ARG5:.*]] = %[[V2]]) -> (tensor<2xf32>, tensor<?x2xf32>) {
// CHECK:        %[[V8:.*]] = dlvm.pad_shape %[[ARG4]] at 0 : tensor<2xf32>
// CHECK:        %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[V8]] into %[[ARG5]][%[[ARG3]], 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<?x2xf32>
// CHECK:        %[[V9:.*]] = dlvm.reduce add %[[ARG4]] dims [0] : tensor<2xf32>
// CHECK:        %[[V10:.*]] = dlvm.cmp lt, %[[V9]], %[[V0]] : tensor<f32>, tensor<f32>
// CHECK:        %[[EXTRACTED_3:.*]] = tensor.extract %[[V10]][] : tensor<i1>
// CHECK:        %[[V11:.*]] = dlvm.mul %[[ARG4]], %[[ARG1]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        scf.yield %[[V11]], %[[INSERTED_SLICE]] : tensor<2xf32>, tensor<?x2xf32>
// CHECK:      }
// CHECK:      %[[V4:.*]] = dlvm.reduce add %[[V3]]#0 dims [0] : tensor<2xf32>
// CHECK:      %[[V5:.*]] = dlvm.cmp lt, %[[V4]], %[[V0]] : tensor<f32>, tensor<f32>
// CHECK:      %[[EXTRACTED:.*]] = tensor.extract %[[V5]][] : tensor<i1>
// CHECK:      %[[V6:.*]] = dlvm.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK:      %[[C0_1:.*]] = arith.constant 0 : index
// CHECK:      %[[C1_2:.*]] = arith.constant 1 : index
// CHECK:      %[[V7:.*]]:2 = scf.for %[[ARG3:.*]] = %[[C0_1]] to %[[V1]]#1 step %[[C1_2]] iter_args(%[[ARG4:.*]] = %[[ARG2]], %[[ARG5:.*]] = %[[V6]]) -> (tensor<2xf32>, tensor<2xf32>) {
// CHECK:        %[[C1_3:.*]] = arith.constant 1 : index
// CHECK:        %[[V8:.*]] = arith.subi %[[V1]]#1, %[[C1_3]] : index
// CHECK:        %[[V9:.*]] = arith.subi %[[V8]], %[[ARG3]] : index
// CHECK:        %[[EXTRACTED_SLICE:.*]] = tensor.extract_slice %[[V3]]#1[%[[V9]], 0] [1, 2] [1, 1] : tensor<?x2xf32> to tensor<1x2xf32>
// CHECK:        %[[V10:.*]] = dlvm.squeeze_shape %[[EXTRACTED_SLICE]] at 0 : tensor<1x2xf32>
// CHECK:        %[[V11:.*]] = dlvm.reduce add %[[V10]] dims [0] : tensor<2xf32>
// CHECK:        %[[V12:.*]] = dlvm.cmp lt, %[[V11]], %[[V0]] : tensor<f32>, tensor<f32>
// CHECK:        %[[EXTRACTED_4:.*]] = tensor.extract %[[V12]][] : tensor<i1>
// CHECK:        %[[V13:.*]] = dlvm.mul %[[V10]], %[[ARG1]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[V14:.*]] = dlvm.mul %[[ARG4]], %[[ARG1]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[V15:.*]] = dlvm.mul %[[ARG4]], %[[V10]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[V16:.*]] = dlvm.add %[[ARG5]], %[[V15]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        scf.yield %[[V14]], %[[V16]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      }
// CHECK:      return %[[V7]]#0, %[[V7]]#1 : tensor<2xf32>, tensor<2xf32>
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
func.func private @grow_grad(tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @grow seedable>}
