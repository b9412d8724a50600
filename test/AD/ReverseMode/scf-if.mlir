// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of scf.if: an scf.if on the same condition recomputes the taken branch and reverses it;
// its results are the adjoints of the outside values the branches use (%x, %y).
// then: dx = g * y * cos(x), dy = g * sin(x); else: dx = g * e^x, dy = 0.

// CHECK-LABEL: func.func @branch_grad(
// CHECK-SAME:    %[[ARG0:.*]]: i1, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<3xf32>, %[[ARG3:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:      %[[V0:.*]] = scf.if %[[ARG0]] -> (tensor<3xf32>) {
// CHECK:        %[[V4:.*]] = dlvm.sin %[[ARG1]] : tensor<3xf32>
// CHECK:        %[[V5:.*]] = dlvm.mul %[[V4]], %[[ARG2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        scf.yield %[[V5]] : tensor<3xf32>
// CHECK:      } else {
// CHECK:        %[[V4:.*]] = dlvm.exp %[[ARG1]] : tensor<3xf32>
// CHECK:        scf.yield %[[V4]] : tensor<3xf32>
// CHECK:      }
// CHECK:      %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK:      %[[V3:.*]]:2 = scf.if %[[ARG0]] -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK:        %[[V4:.*]] = dlvm.sin %[[ARG1]] : tensor<3xf32>
// CHECK:        %[[V5:.*]] = dlvm.mul %[[V4]], %[[ARG2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        %[[V6:.*]] = dlvm.mul %[[ARG3]], %[[ARG2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        %[[V7:.*]] = dlvm.mul %[[ARG3]], %[[V4]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        %[[V8:.*]] = dlvm.add %[[V2]], %[[V7]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        %[[V9:.*]] = dlvm.cos %[[ARG1]] : tensor<3xf32>
// CHECK:        %[[V10:.*]] = dlvm.mul %[[V6]], %[[V9]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        %[[V11:.*]] = dlvm.add %[[V1]], %[[V10]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        scf.yield %[[V11]], %[[V8]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      } else {
// CHECK:        %[[V4:.*]] = dlvm.exp %[[ARG1]] : tensor<3xf32>
// CHECK:        %[[V5:.*]] = dlvm.mul %[[ARG3]], %[[V4]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        %[[V6:.*]] = dlvm.add %[[V1]], %[[V5]] : tensor<3xf32>, tensor<3xf32>
// CHECK:        scf.yield %[[V6]], %[[V2]] : tensor<3xf32>, tensor<3xf32>
// CHECK:      }
// CHECK:      return %[[V3]]#0, %[[V3]]#1 : tensor<3xf32>, tensor<3xf32>
func.func @branch(%c: i1, %x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %r = scf.if %c -> (tensor<3xf32>) {
    %s = dlvm.sin %x : tensor<3xf32>
    %m = dlvm.mul %s, %y : tensor<3xf32>, tensor<3xf32>
    scf.yield %m : tensor<3xf32>
  } else {
    %e = dlvm.exp %x : tensor<3xf32>
    scf.yield %e : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
func.func private @branch_grad(i1, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @branch wrt [1, 2] seedable>}
