// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// A recursive function's gradient: @rec__grad_0 (the seedable gradient the recursive call needs)
// calls itself recursively, and @rec_grad calls it.

// CHECK-LABEL: func.func private @rec__grad_0(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<f32>, %[[ARG1:.*]]: i32, %[[ARG2:.*]]: tensor<f32>) -> tensor<f32>
// CHECK:      %[[C0_I32:.*]] = arith.constant 0 : i32
// CHECK:      %[[C1_I32:.*]] = arith.constant 1 : i32
// CHECK:      %[[V0:.*]] = arith.cmpi eq, %[[ARG1]], %[[C0_I32]] : i32
// CHECK:      %[[V1:.*]] = scf.if %[[V0]] -> (tensor<f32>) {
// CHECK:        scf.yield %[[ARG0]] : tensor<f32>
// CHECK:      } else {
// CHECK:        %[[V4:.*]] = arith.subi %[[ARG1]], %[[C1_I32]] : i32
// CHECK:        %[[V5:.*]] = dlvm.sin %[[ARG0]] : tensor<f32>
// CHECK:        %[[V6:.*]] = func.call @rec(%[[V5]], %[[V4]]) : (tensor<f32>, i32) -> tensor<f32>
// CHECK:        scf.yield %[[V6]] : tensor<f32>
// CHECK:      }
// CHECK:      %[[V2:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = scf.if %[[V0]] -> (tensor<f32>) {
// CHECK:        %[[V4:.*]] = dlvm.add %[[V2]], %[[ARG2]] : tensor<f32>, tensor<f32>
// CHECK:        scf.yield %[[V4]] : tensor<f32>
// CHECK:      } else {
// CHECK:        %[[V4:.*]] = arith.subi %[[ARG1]], %[[C1_I32]] : i32
// CHECK:        %[[V5:.*]] = dlvm.sin %[[ARG0]] : tensor<f32>
// CHECK:        %[[V6:.*]] = func.call @rec(%[[V5]], %[[V4]]) : (tensor<f32>, i32) -> tensor<f32>
// CHECK:        %[[V7:.*]] = func.call @rec__grad_0(%[[V5]], %[[V4]], %[[ARG2]]) : (tensor<f32>, i32, tensor<f32>) -> tensor<f32>
// CHECK:        %[[V8:.*]] = dlvm.cos %[[ARG0]] : tensor<f32>
// CHECK:        %[[V9:.*]] = dlvm.mul %[[V7]], %[[V8]] : tensor<f32>, tensor<f32>
// CHECK:        %[[V10:.*]] = dlvm.add %[[V2]], %[[V9]] : tensor<f32>, tensor<f32>
// CHECK:        scf.yield %[[V10]] : tensor<f32>
// CHECK:      }
// CHECK:      return %[[V3]] : tensor<f32>
// CHECK-LABEL: func.func @rec_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<f32>, %[[ARG1:.*]]: i32) -> tensor<f32>
// CHECK:      %[[C0_I32:.*]] = arith.constant 0 : i32
// CHECK:      %[[C1_I32:.*]] = arith.constant 1 : i32
// CHECK:      %[[V0:.*]] = arith.cmpi eq, %[[ARG1]], %[[C0_I32]] : i32
// CHECK:      %[[V1:.*]] = scf.if %[[V0]] -> (tensor<f32>) {
// CHECK:        scf.yield %[[ARG0]] : tensor<f32>
// CHECK:      } else {
// CHECK:        %[[V5:.*]] = arith.subi %[[ARG1]], %[[C1_I32]] : i32
// CHECK:        %[[V6:.*]] = dlvm.sin %[[ARG0]] : tensor<f32>
// CHECK:        %[[V7:.*]] = func.call @rec(%[[V6]], %[[V5]]) : (tensor<f32>, i32) -> tensor<f32>
// CHECK:        scf.yield %[[V7]] : tensor<f32>
// CHECK:      }
// CHECK:      %[[V2:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V4:.*]] = scf.if %[[V0]] -> (tensor<f32>) {
// CHECK:        %[[V5:.*]] = dlvm.add %[[V3]], %[[V2]] : tensor<f32>, tensor<f32>
// CHECK:        scf.yield %[[V5]] : tensor<f32>
// CHECK:      } else {
// CHECK:        %[[V5:.*]] = arith.subi %[[ARG1]], %[[C1_I32]] : i32
// CHECK:        %[[V6:.*]] = dlvm.sin %[[ARG0]] : tensor<f32>
// CHECK:        %[[V7:.*]] = func.call @rec(%[[V6]], %[[V5]]) : (tensor<f32>, i32) -> tensor<f32>
// CHECK:        %[[V8:.*]] = func.call @rec__grad_0(%[[V6]], %[[V5]], %[[V2]]) : (tensor<f32>, i32, tensor<f32>) -> tensor<f32>
// CHECK:        %[[V9:.*]] = dlvm.cos %[[ARG0]] : tensor<f32>
// CHECK:        %[[V10:.*]] = dlvm.mul %[[V8]], %[[V9]] : tensor<f32>, tensor<f32>
// CHECK:        %[[V11:.*]] = dlvm.add %[[V3]], %[[V10]] : tensor<f32>, tensor<f32>
// CHECK:        scf.yield %[[V11]] : tensor<f32>
// CHECK:      }
// CHECK:      return %[[V4]] : tensor<f32>
func.func @rec(%x: tensor<f32>, %n: i32) -> tensor<f32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %done = arith.cmpi eq, %n, %c0 : i32
  %r = scf.if %done -> (tensor<f32>) {
    scf.yield %x : tensor<f32>
  } else {
    %m = arith.subi %n, %c1 : i32
    %s = dlvm.sin %x : tensor<f32>
    %t = func.call @rec(%s, %m) : (tensor<f32>, i32) -> tensor<f32>
    scf.yield %t : tensor<f32>
  }
  return %r : tensor<f32>
}
func.func private @rec_grad(tensor<f32>, i32) -> tensor<f32>
    attributes {dlvm.gradient = #dlvm.gradient<of @rec wrt [0]>}
