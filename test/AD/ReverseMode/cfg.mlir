// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of a CFG loop (cf.br / cf.cond_br). A copy of the function is first turned into
// structured control flow (upstream lift-cf-to-scf: an scf.while whose 'before' region holds the
// branch as an scf.if), which is then differentiated like any scf.while: the branch path of each
// iteration is recomputed from the taped state. The primal function keeps its CFG.

// CHECK-LABEL: func.func @cfg_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<f32>, %[[ARG1:.*]]: i32, %[[ARG2:.*]]: tensor<f32>) -> tensor<f32>
// CHECK:      %[[V0:.*]] = ub.poison : i32
// CHECK:      %[[V1:.*]] = ub.poison : tensor<f32>
// CHECK:      %[[C1_I32:.*]] = arith.constant 1 : i32
// CHECK:      %[[C0_I32:.*]] = arith.constant 0 : i32
// CHECK:      %[[C0_I32_0:.*]] = arith.constant 0 : i32
// CHECK:      %[[C1_I32_1:.*]] = arith.constant 1 : i32
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK:      %[[V2:.*]]:4 = scf.while (%[[ARG3:.*]] = %[[ARG0]], %[[ARG4:.*]] = %[[C0_I32_0]], %[[ARG5:.*]] = %[[V1]], %[[ARG6:.*]] = %[[C0]]) : (tensor<f32>, i32, tensor<f32>, index) -> (tensor<f32>, i32, tensor<f32>, index) {
// CHECK:        %[[V10:.*]] = arith.cmpi slt, %[[ARG4]], %[[ARG1]] : i32
// CHECK:        %[[V11:.*]]:4 = scf.if %[[V10]] -> (tensor<f32>, i32, i32, i32) {
// CHECK:          %[[V13:.*]] = dlvm.sin %[[ARG3]] : tensor<f32>
// CHECK:          %[[V14:.*]] = arith.addi %[[ARG4]], %[[C1_I32_1]] : i32
// CHECK:          scf.yield %[[V13]], %[[V14]], %[[C0_I32]], %[[C1_I32]] : tensor<f32>, i32, i32, i32
// CHECK:        } else {
// CHECK:          scf.yield %[[V1]], %[[V0]], %[[C1_I32]], %[[C0_I32]] : tensor<f32>, i32, i32, i32
// CHECK:        }
// CHECK:        %[[V12:.*]] = arith.trunci %[[V11]]#3 : i32 to i1
// CHECK:        scf.condition(%[[V12]]) %[[V11]]#0, %[[V11]]#1, %[[ARG3]], %[[ARG6]] : tensor<f32>, i32, tensor<f32>, index
// CHECK:      } do {
// CHECK:      ^bb0(%[[ARG3:.*]]: tensor<f32>, %[[ARG4:.*]]: i32, %[[ARG5:.*]]: tensor<f32>, %[[ARG6:.*]]: index):
// CHECK:        %[[C1_5:.*]] = arith.constant 1 : index
// CHECK:        %[[V10:.*]] = arith.addi %[[ARG6]], %[[C1_5]] : index
// CHECK:        scf.yield %[[ARG3]], %[[ARG4]], %[[ARG5]], %[[V10]] : tensor<f32>, i32, tensor<f32>, index
// CHECK:      }
// CHECK:      %[[V3:.*]] = tensor.empty(%[[V2]]#3) : tensor<?xf32>
// CHECK:      %[[V4:.*]] = tensor.empty(%[[V2]]#3) : tensor<?xi32>
// CHECK:      %[[C0_2:.*]] = arith.constant 0 : index
// CHECK:      %[[C1:.*]] = arith.constant 1 : index
// CHECK:      %[[V5:.*]]:5 = scf.for %[[ARG3:.*]] = %[[C0_2]] to %[[V2]]#3 step %[[C1]] iter_args(%[[ARG4:.*]] = %[[ARG0]], %[[ARG5:.*]] = %[[C0_I32_0]], %[[ARG6:.*]] = %[[V1]], %[[ARG7:.*]] = %[[V3]], %[[ARG8:.*]] = %[[V4]]) -> (tensor<f32>, i32, tensor<f32>, tensor<?xf32>, tensor<?xi32>) {
// CHECK:        %[[V10:.*]] = dlvm.pad_shape %[[ARG4]] at 0 : tensor<f32>
// CHECK:        %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[V10]] into %[[ARG7]][%[[ARG3]]] [1] [1] : tensor<1xf32> into tensor<?xf32>
// CHECK:        %[[INSERTED:.*]] = tensor.insert %[[ARG5]] into %[[ARG8]][%[[ARG3]]] : tensor<?xi32>
// CHECK:        %[[V11:.*]] = arith.cmpi slt, %[[ARG5]], %[[ARG1]] : i32
// CHECK:        %[[V12:.*]]:4 = scf.if %[[V11]] -> (tensor<f32>, i32, i32, i32) {
// CHECK:          %[[V14:.*]] = dlvm.sin %[[ARG4]] : tensor<f32>
// CHECK:          %[[V15:.*]] = arith.addi %[[ARG5]], %[[C1_I32_1]] : i32
// CHECK:          scf.yield %[[V14]], %[[V15]], %[[C0_I32]], %[[C1_I32]] : tensor<f32>, i32, i32, i32
// CHECK:        } else {
// CHECK:          scf.yield %[[V1]], %[[V0]], %[[C1_I32]], %[[C0_I32]] : tensor<f32>, i32, i32, i32
// CHECK:        }
// CHECK:        %[[V13:.*]] = arith.trunci %[[V12]]#3 : i32 to i1
// CHECK:        scf.yield %[[V12]]#0, %[[V12]]#1, %[[ARG4]], %[[INSERTED_SLICE]], %[[INSERTED]] : tensor<f32>, i32, tensor<f32>, tensor<?xf32>, tensor<?xi32>
// CHECK:      }
// CHECK:      %[[V6:.*]] = arith.cmpi slt, %[[V5]]#1, %[[ARG1]] : i32
// CHECK:      %[[V7:.*]]:4 = scf.if %[[V6]] -> (tensor<f32>, i32, i32, i32) {
// CHECK:        %[[V10:.*]] = dlvm.sin %[[V5]]#0 : tensor<f32>
// CHECK:        %[[V11:.*]] = arith.addi %[[V5]]#1, %[[C1_I32_1]] : i32
// CHECK:        scf.yield %[[V10]], %[[V11]], %[[C0_I32]], %[[C1_I32]] : tensor<f32>, i32, i32, i32
// CHECK:      } else {
// CHECK:        scf.yield %[[V1]], %[[V0]], %[[C1_I32]], %[[C0_I32]] : tensor<f32>, i32, i32, i32
// CHECK:      }
// CHECK:      %[[V8:.*]] = arith.trunci %[[V7]]#3 : i32 to i1
// CHECK:      %[[C0_3:.*]] = arith.constant 0 : index
// CHECK:      %[[C1_4:.*]] = arith.constant 1 : index
// CHECK:      %[[V9:.*]] = scf.for %[[ARG3:.*]] = %[[C0_3]] to %[[V2]]#3 step %[[C1_4]] iter_args(%[[ARG4:.*]] = %[[ARG2]]) -> (tensor<f32>) {
// CHECK:        %[[C1_5:.*]] = arith.constant 1 : index
// CHECK:        %[[V10:.*]] = arith.subi %[[V2]]#3, %[[C1_5]] : index
// CHECK:        %[[V11:.*]] = arith.subi %[[V10]], %[[ARG3]] : index
// CHECK:        %[[EXTRACTED_SLICE:.*]] = tensor.extract_slice %[[V5]]#3[%[[V11]]] [1] [1] : tensor<?xf32> to tensor<1xf32>
// CHECK:        %[[V12:.*]] = dlvm.squeeze_shape %[[EXTRACTED_SLICE]] at 0 : tensor<1xf32>
// CHECK:        %[[EXTRACTED:.*]] = tensor.extract %[[V5]]#4[%[[V11]]] : tensor<?xi32>
// CHECK:        %[[V13:.*]] = arith.cmpi slt, %[[EXTRACTED]], %[[ARG1]] : i32
// CHECK:        %[[V14:.*]]:4 = scf.if %[[V13]] -> (tensor<f32>, i32, i32, i32) {
// CHECK:          %[[V18:.*]] = dlvm.sin %[[V12]] : tensor<f32>
// CHECK:          %[[V19:.*]] = arith.addi %[[EXTRACTED]], %[[C1_I32_1]] : i32
// CHECK:          scf.yield %[[V18]], %[[V19]], %[[C0_I32]], %[[C1_I32]] : tensor<f32>, i32, i32, i32
// CHECK:        } else {
// CHECK:          scf.yield %[[V1]], %[[V0]], %[[C1_I32]], %[[C0_I32]] : tensor<f32>, i32, i32, i32
// CHECK:        }
// CHECK:        %[[V15:.*]] = arith.trunci %[[V14]]#3 : i32 to i1
// CHECK:        %[[V16:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:        %[[V17:.*]] = scf.if %[[V13]] -> (tensor<f32>) {
// CHECK:          %[[V18:.*]] = dlvm.sin %[[V12]] : tensor<f32>
// CHECK:          %[[V19:.*]] = arith.addi %[[EXTRACTED]], %[[C1_I32_1]] : i32
// CHECK:          %[[V20:.*]] = dlvm.cos %[[V12]] : tensor<f32>
// CHECK:          %[[V21:.*]] = dlvm.mul %[[ARG4]], %[[V20]] : tensor<f32>, tensor<f32>
// CHECK:          %[[V22:.*]] = dlvm.add %[[V16]], %[[V21]] : tensor<f32>, tensor<f32>
// CHECK:          scf.yield %[[V22]] : tensor<f32>
// CHECK:        } else {
// CHECK:          scf.yield %[[V16]] : tensor<f32>
// CHECK:        }
// CHECK:        scf.yield %[[V17]] : tensor<f32>
// CHECK:      }
// CHECK:      return %[[V9]] : tensor<f32>
func.func @cfg(%x: tensor<f32>, %n: i32) -> tensor<f32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  cf.br ^head(%x, %c0 : tensor<f32>, i32)
^head(%v: tensor<f32>, %i: i32):
  %c = arith.cmpi slt, %i, %n : i32
  cf.cond_br %c, ^body, ^exit
^body:
  %w = dlvm.sin %v : tensor<f32>
  %i2 = arith.addi %i, %c1 : i32
  cf.br ^head(%w, %i2 : tensor<f32>, i32)
^exit:
  return %v : tensor<f32>
}
func.func private @cfg_grad(tensor<f32>, i32, tensor<f32>) -> tensor<f32>
    attributes {dlvm.gradient = #dlvm.gradient<of @cfg wrt [0] seedable>}
