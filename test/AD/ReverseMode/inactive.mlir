// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Non-differentiable ops (rounding, sign, comparisons, random numbers) are inactive:
// no adjoint code is generated for them and the gradient is zero.

// dlvm.floor is piecewise constant: no adjoint code, the gradient is zero.
// CHECK-LABEL: func.func @floor_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V0:.*]] = dlvm.floor %[[ARG0]] : tensor<4xf32>
// CHECK-NEXT: %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
func.func @floor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.floor %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @floor_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @floor seedable>}

// -----

// dlvm.ceil is piecewise constant: no adjoint code, the gradient is zero.
// CHECK-LABEL: func.func @ceil_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V0:.*]] = dlvm.ceil %[[ARG0]] : tensor<4xf32>
// CHECK-NEXT: %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
func.func @ceil(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.ceil %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @ceil_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @ceil seedable>}

// -----

// dlvm.round is piecewise constant: no adjoint code, the gradient is zero.
// CHECK-LABEL: func.func @round_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V0:.*]] = dlvm.round %[[ARG0]] : tensor<4xf32>
// CHECK-NEXT: %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
func.func @round(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.round %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @round_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @round seedable>}

// -----

// dlvm.rint is piecewise constant: no adjoint code, the gradient is zero.
// CHECK-LABEL: func.func @rint_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V0:.*]] = dlvm.rint %[[ARG0]] : tensor<4xf32>
// CHECK-NEXT: %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
func.func @rint(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.rint %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @rint_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @rint seedable>}

// -----

// dlvm.sign is piecewise constant: no adjoint code, the gradient is zero.
// CHECK-LABEL: func.func @sign_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V0:.*]] = dlvm.sign %[[ARG0]] : tensor<4xf32>
// CHECK-NEXT: %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[V1]] : tensor<4xf32>
func.func @sign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.sign %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @sign_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sign seedable>}
