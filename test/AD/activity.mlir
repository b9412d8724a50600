// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Activity analysis: adjoint code only for values that depend on a differentiated argument (varied)
// and that the differentiated result depends on (useful).
// - %a = exp(y): y is not differentiated, so %a gets no adjoint (no cos/exp/mul for it);
// - %c = sin(x), %d: they do not reach the result: no cos(x) is emitted;
// - %e = floor(%b) is inactive: the path through it contributes nothing.
// So d/dx = g * e^y, from the mul alone (the forward copy is left for DCE).

// CHECK-LABEL: func.func @act_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[V0:.*]] = dlvm.exp %[[ARG1]] : tensor<3xf32>
// CHECK-NEXT: %[[V1:.*]] = dlvm.mul %[[ARG0]], %[[V0]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: %[[V2:.*]] = dlvm.sin %[[ARG0]] : tensor<3xf32>
// CHECK-NEXT: %[[V3:.*]] = dlvm.add %[[V2]], %[[V0]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: %[[V4:.*]] = dlvm.floor %[[V1]] : tensor<3xf32>
// CHECK-NEXT: %[[V5:.*]] = dlvm.add %[[V1]], %[[V4]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: %[[V6:.*]] = dlvm.mul %[[ARG2]], %[[V0]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: return %[[V6]] : tensor<3xf32>
func.func @act(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %a = dlvm.exp %y : tensor<3xf32>
  %b = dlvm.mul %x, %a : tensor<3xf32>, tensor<3xf32>
  %c = dlvm.sin %x : tensor<3xf32>
  %d = dlvm.add %c, %a : tensor<3xf32>, tensor<3xf32>
  %e = dlvm.floor %b : tensor<3xf32>
  %f = dlvm.add %b, %e : tensor<3xf32>, tensor<3xf32>
  return %f : tensor<3xf32>
}
func.func private @act_grad(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @act wrt [0] seedable>}
