// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of scf.index_switch: a switch on the same index reverses the taken case.
// case 0: dx = g * cos(x); default: dx = g * 2x.

// CHECK-LABEL: func.func @sw_grad(
// CHECK-SAME:    %[[ARG0:.*]]: index, %[[ARG1:.*]]: tensor<2xf32>, %[[ARG2:.*]]: tensor<2xf32>) -> tensor<2xf32>
// CHECK:      %[[V0:.*]] = scf.index_switch %[[ARG0]] -> tensor<2xf32>
// CHECK:      case 0 {
// CHECK:        %[[V3:.*]] = dlvm.sin %[[ARG1]] : tensor<2xf32>
// CHECK:        scf.yield %[[V3]] : tensor<2xf32>
// CHECK:      }
// CHECK:      default {
// CHECK:        %[[V3:.*]] = dlvm.square %[[ARG1]] : tensor<2xf32>
// CHECK:        scf.yield %[[V3]] : tensor<2xf32>
// CHECK:      }
// CHECK:      %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK:      %[[V2:.*]] = scf.index_switch %[[ARG0]] -> tensor<2xf32>
// CHECK:      case 0 {
// CHECK:        %[[V3:.*]] = dlvm.sin %[[ARG1]] : tensor<2xf32>
// CHECK:        %[[V4:.*]] = dlvm.cos %[[ARG1]] : tensor<2xf32>
// CHECK:        %[[V5:.*]] = dlvm.mul %[[ARG2]], %[[V4]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[V6:.*]] = dlvm.add %[[V1]], %[[V5]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        scf.yield %[[V6]] : tensor<2xf32>
// CHECK:      }
// CHECK:      default {
// CHECK:        %[[V3:.*]] = dlvm.square %[[ARG1]] : tensor<2xf32>
// CHECK:        %[[V4:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CHECK:        %[[V5:.*]] = dlvm.mul %[[ARG1]], %[[V4]] : tensor<2xf32>, tensor<f32>
// CHECK:        %[[V6:.*]] = dlvm.mul %[[ARG2]], %[[V5]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        %[[V7:.*]] = dlvm.add %[[V1]], %[[V6]] : tensor<2xf32>, tensor<2xf32>
// CHECK:        scf.yield %[[V7]] : tensor<2xf32>
// CHECK:      }
// CHECK:      return %[[V2]] : tensor<2xf32>
func.func @sw(%i: index, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = scf.index_switch %i -> tensor<2xf32>
  case 0 {
    %s = dlvm.sin %x : tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  }
  default {
    %e = dlvm.square %x : tensor<2xf32>
    scf.yield %e : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
func.func private @sw_grad(index, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sw wrt [1] seedable>}
