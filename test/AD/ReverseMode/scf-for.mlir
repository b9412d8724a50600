// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of scf.for. The forward loop stores each iteration's loop-carried values on a tape
// (a tensor with one slot per iteration, filled with tensor.insert_slice / tensor.insert); the reverse
// loop runs the iterations last to first: it reads the carried values back (extract_slice / extract),
// recomputes the body, and runs the body's reverse sweep, carrying the adjoints of the carried values
// and of the outside values the body uses (here %w).

// Constant bounds: a static tape tensor<3x1x4xf32>.
// CHECK-LABEL: func.func @rnn_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<1x4xf32>, %[[ARG1:.*]]: tensor<4x4xf32>, %[[ARG2:.*]]: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<4x4xf32>)
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK:      %[[C1:.*]] = arith.constant 1 : index
// CHECK:      %[[C3:.*]] = arith.constant 3 : index
// CHECK:      %[[C3_0:.*]] = arith.constant 3 : index
// CHECK:      %[[V0:.*]] = tensor.empty() : tensor<3x1x4xf32>
// CHECK:      %[[V1:.*]]:2 = scf.for %[[ARG3:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[ARG4:.*]] = %[[ARG0]], %[[ARG5:.*]] = %[[V0]]) -> (tensor<1x4xf32>, tensor<3x1x4xf32>) {
// CHECK:        %[[V4:.*]] = arith.subi %[[ARG3]], %[[C0]] : index
// CHECK:        %[[V5:.*]] = arith.divsi %[[V4]], %[[C1]] : index
// CHECK:        %[[V6:.*]] = dlvm.pad_shape %[[ARG4]] at 0 : tensor<1x4xf32>
// CHECK:        %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[V6]] into %[[ARG5]][%[[V5]], 0, 0] [1, 1, 4] [1, 1, 1] : tensor<1x1x4xf32> into tensor<3x1x4xf32>
// CHECK:        %[[V7:.*]] = dlvm.dot %[[ARG4]], %[[ARG1]] : tensor<1x4xf32>, tensor<4x4xf32>
// CHECK:        %[[V8:.*]] = dlvm.tanh %[[V7]] : tensor<1x4xf32>
// CHECK:        scf.yield %[[V8]], %[[INSERTED_SLICE]] : tensor<1x4xf32>, tensor<3x1x4xf32>
// CHECK:      }
// CHECK:      %[[V2:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4x4xf32>
// CHECK:      %[[C0_1:.*]] = arith.constant 0 : index
// CHECK:      %[[C1_2:.*]] = arith.constant 1 : index
// CHECK:      %[[V3:.*]]:2 = scf.for %[[ARG3:.*]] = %[[C0_1]] to %[[C3_0]] step %[[C1_2]] iter_args(%[[ARG4:.*]] = %[[ARG2]], %[[ARG5:.*]] = %[[V2]]) -> (tensor<1x4xf32>, tensor<4x4xf32>) {
// CHECK:        %[[C1_3:.*]] = arith.constant 1 : index
// CHECK:        %[[V4:.*]] = arith.subi %[[C3_0]], %[[C1_3]] : index
// CHECK:        %[[V5:.*]] = arith.subi %[[V4]], %[[ARG3]] : index
// CHECK:        %[[V6:.*]] = arith.muli %[[V5]], %[[C1]] : index
// CHECK:        %[[V7:.*]] = arith.addi %[[C0]], %[[V6]] : index
// CHECK:        %[[EXTRACTED_SLICE:.*]] = tensor.extract_slice %[[V1]]#1[%[[V5]], 0, 0] [1, 1, 4] [1, 1, 1] : tensor<3x1x4xf32> to tensor<1x1x4xf32>
// CHECK:        %[[V8:.*]] = dlvm.squeeze_shape %[[EXTRACTED_SLICE]] at 0 : tensor<1x1x4xf32>
// CHECK:        %[[V9:.*]] = dlvm.dot %[[V8]], %[[ARG1]] : tensor<1x4xf32>, tensor<4x4xf32>
// CHECK:        %[[V10:.*]] = dlvm.tanh %[[V9]] : tensor<1x4xf32>
// CHECK:        %[[V11:.*]] = dlvm.square %[[V10]] : tensor<1x4xf32>
// CHECK:        %[[V12:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:        %[[V13:.*]] = dlvm.sub %[[V12]], %[[V11]] : tensor<f32>, tensor<1x4xf32>
// CHECK:        %[[V14:.*]] = dlvm.mul %[[ARG4]], %[[V13]] : tensor<1x4xf32>, tensor<1x4xf32>
// CHECK:        %[[V15:.*]] = dlvm.transpose %[[ARG1]] : tensor<4x4xf32>
// CHECK:        %[[V16:.*]] = dlvm.dot %[[V14]], %[[V15]] : tensor<1x4xf32>, tensor<4x4xf32>
// CHECK:        %[[V17:.*]] = dlvm.transpose %[[V8]] : tensor<1x4xf32>
// CHECK:        %[[V18:.*]] = dlvm.dot %[[V17]], %[[V14]] : tensor<4x1xf32>, tensor<1x4xf32>
// CHECK:        %[[V19:.*]] = dlvm.add %[[ARG5]], %[[V18]] : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK:        scf.yield %[[V16]], %[[V19]] : tensor<1x4xf32>, tensor<4x4xf32>
// CHECK:      }
// CHECK:      return %[[V3]]#0, %[[V3]]#1 : tensor<1x4xf32>, tensor<4x4xf32>
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
func.func private @rnn_grad(tensor<1x4xf32>, tensor<4x4xf32>, tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<4x4xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @rnn seedable>}

// -----

// Dynamic trip count 0 < n ? max(0, ceildiv(n - 0, 1)) : 0: a dynamically sized tape; the body
// uses the free value %x.
// CHECK-LABEL: func.func @power_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: i32, %[[ARG2:.*]]: f32) -> f32
// CHECK:      %[[C0_I32:.*]] = arith.constant 0 : i32
// CHECK:      %[[C1_I32:.*]] = arith.constant 1 : i32
// CHECK:      %[[C1_I32_0:.*]] = arith.constant 1 : i32
// CHECK:      %[[C0_I32_1:.*]] = arith.constant 0 : i32
// CHECK:      %[[V0:.*]] = arith.subi %[[ARG1]], %[[C0_I32]] : i32
// CHECK:      %[[V1:.*]] = arith.subi %[[C1_I32]], %[[C1_I32_0]] : i32
// CHECK:      %[[V2:.*]] = arith.addi %[[V0]], %[[V1]] : i32
// CHECK:      %[[V3:.*]] = arith.divsi %[[V2]], %[[C1_I32]] : i32
// CHECK:      %[[V4A:.*]] = arith.maxsi %[[V3]], %[[C0_I32_1]] : i32
// CHECK:      %[[RUNS:.*]] = arith.cmpi slt, %[[C0_I32]], %[[ARG1]] : i32
// CHECK:      %[[V4:.*]] = arith.select %[[RUNS]], %[[V4A]], %[[C0_I32_1]] : i32
// CHECK:      %[[V5:.*]] = arith.index_cast %[[V4]] : i32 to index
// CHECK:      %[[V6:.*]] = tensor.empty(%[[V5]]) : tensor<?xf32>
// CHECK:      %[[V7:.*]]:2 = scf.for %[[ARG3:.*]] = %[[C0_I32]] to %[[ARG1]] step %[[C1_I32]] iter_args(%[[ARG4:.*]] = %[[ARG0]], %[[ARG5:.*]] = %[[V6]]) -> (f32, tensor<?xf32>)  : i32 {
// CHECK:        %[[V10:.*]] = arith.subi %[[ARG3]], %[[C0_I32]] : i32
// CHECK:        %[[V11:.*]] = arith.divsi %[[V10]], %[[C1_I32]] : i32
// CHECK:        %[[V12:.*]] = arith.index_cast %[[V11]] : i32 to index
// CHECK:        %[[INSERTED:.*]] = tensor.insert %[[ARG4]] into %[[ARG5]][%[[V12]]] : tensor<?xf32>
// CHECK:        %[[V13:.*]] = arith.mulf %[[ARG4]], %[[ARG0]] : f32
// CHECK:        scf.yield %[[V13]], %[[INSERTED]] : f32, tensor<?xf32>
// CHECK:      }
// CHECK:      %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK:      %[[C1:.*]] = arith.constant 1 : index
// CHECK:      %[[V8:.*]]:2 = scf.for %[[ARG3:.*]] = %[[C0]] to %[[V5]] step %[[C1]] iter_args(%[[ARG4:.*]] = %[[ARG2]], %[[ARG5:.*]] = %[[CST]]) -> (f32, f32) {
// CHECK:        %[[C1_2:.*]] = arith.constant 1 : index
// CHECK:        %[[V10:.*]] = arith.subi %[[V5]], %[[C1_2]] : index
// CHECK:        %[[V11:.*]] = arith.subi %[[V10]], %[[ARG3]] : index
// CHECK:        %[[V12:.*]] = arith.index_cast %[[V11]] : index to i32
// CHECK:        %[[V13:.*]] = arith.muli %[[V12]], %[[C1_I32]] : i32
// CHECK:        %[[V14:.*]] = arith.addi %[[C0_I32]], %[[V13]] : i32
// CHECK:        %[[EXTRACTED:.*]] = tensor.extract %[[V7]]#1[%[[V11]]] : tensor<?xf32>
// CHECK:        %[[V15:.*]] = arith.mulf %[[EXTRACTED]], %[[ARG0]] : f32
// CHECK:        %[[V16:.*]] = arith.mulf %[[ARG4]], %[[ARG0]] : f32
// CHECK:        %[[V17:.*]] = arith.mulf %[[ARG4]], %[[EXTRACTED]] : f32
// CHECK:        %[[V18:.*]] = arith.addf %[[ARG5]], %[[V17]] : f32
// CHECK:        scf.yield %[[V16]], %[[V18]] : f32, f32
// CHECK:      }
// CHECK:      %[[V9:.*]] = arith.addf %[[V8]]#1, %[[V8]]#0 : f32
// CHECK:      return %[[V9]] : f32
func.func @power(%x: f32, %n: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) : i32 {
    %m = arith.mulf %a, %x : f32
    scf.yield %m : f32
  }
  return %r : f32
}
func.func private @power_grad(f32, i32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @power wrt [0] seedable>}
