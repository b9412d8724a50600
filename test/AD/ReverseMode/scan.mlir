// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.scan.

// add: dx = scan add g reverse  (a suffix sum)
// CHECK-LABEL: func.func @cumsum_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x4xf32>, %[[ARG1:.*]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.scan add %[[ARG1]] dim 1 reverse : tensor<2x4xf32>
// CHECK:      return %[[V1]] : tensor<2x4xf32>
func.func @cumsum(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = dlvm.scan add %x dim 1 : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
func.func private @cumsum_grad(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @cumsum seedable>}

// -----

// the transpose of an exclusive suffix sum is the exclusive prefix sum
// CHECK-LABEL: func.func @suffix_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<5xf64>, %[[ARG1:.*]]: tensor<5xf64>) -> tensor<5xf64>
// CHECK:      %[[V1:.*]] = dlvm.scan add %[[ARG1]] dim 0 exclusive : tensor<5xf64>
// CHECK:      return %[[V1]] : tensor<5xf64>
func.func @suffix(%x: tensor<5xf64>) -> tensor<5xf64> {
  %y = dlvm.scan add %x dim 0 exclusive reverse : tensor<5xf64>
  return %y : tensor<5xf64>
}
func.func private @suffix_grad(tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @suffix seedable>}

// -----

// max: dx_j = sum_i g_i J[i, j], J[i, j] = [j <= i][x_j == y_i] / #ties (the scanned dim moved last)
// CHECK-LABEL: func.func @cummax_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.scan max %[[ARG0]] dim 0 : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<{{.*}}> : tensor<4x4xf32>
// CHECK:      %[[V2:.*]] = dlvm.pad_shape %[[ARG0]] at 0 : tensor<4xf32>
// CHECK:      %[[V3:.*]] = dlvm.pad_shape %[[V0]] at 1 : tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.cmp eq, %[[V2]], %[[V3]] : tensor<1x4xf32>, tensor<4x1xf32>
// CHECK:      %[[V5:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V6:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V7:.*]] = dlvm.select %[[V4]], %[[V5]], %[[V6]] : tensor<4x4xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V8:.*]] = dlvm.mul %[[V7]], %[[V1]] : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK:      %[[V9:.*]] = dlvm.reduce add %[[V8]] dims [1] : tensor<4x4xf32>
// CHECK:      %[[V10:.*]] = dlvm.pad_shape %[[V9]] at 1 : tensor<4xf32>
// CHECK:      %[[V11:.*]] = dlvm.div %[[V8]], %[[V10]] : tensor<4x4xf32>, tensor<4x1xf32>
// CHECK:      %[[V12:.*]] = dlvm.pad_shape %[[ARG1]] at 1 : tensor<4xf32>
// CHECK:      %[[V13:.*]] = dlvm.mul %[[V12]], %[[V11]] : tensor<4x1xf32>, tensor<4x4xf32>
// CHECK:      %[[V14:.*]] = dlvm.reduce add %[[V13]] dims [0] : tensor<4x4xf32>
// CHECK:      return %[[V14]] : tensor<4xf32>
func.func @cummax(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.scan max %x dim 0 : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @cummax_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @cummax seedable>}

// -----

// mul: J[i, j] = [j <= i] prod_{k <= i, k != j} x_k, exact with zeros
// CHECK-LABEL: func.func @cumprod_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.scan mul %[[ARG0]] dim 0 : tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<{{.*}}> : tensor<3x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<{{.*}}> : tensor<3x3xi1>
// CHECK:      %[[V3:.*]] = dlvm.pad_shape %[[ARG0]] at 0 : tensor<3xf32>
// CHECK:      %[[V4:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V5:.*]] = dlvm.select %[[V2]], %[[V4]], %[[V3]] : tensor<3x3xi1>, tensor<f32>, tensor<1x3xf32>
// CHECK:      %[[V6:.*]] = dlvm.scan mul %[[V5]] dim 1 : tensor<3x3xf32>
// CHECK:      %[[V7:.*]] = dlvm.transpose %[[V6]] : tensor<3x3xf32>
// CHECK:      %[[V8:.*]] = dlvm.mul %[[V7]], %[[V1]] : tensor<3x3xf32>, tensor<3x3xf32>
// CHECK:      %[[V9:.*]] = dlvm.pad_shape %[[ARG1]] at 1 : tensor<3xf32>
// CHECK:      %[[V10:.*]] = dlvm.mul %[[V9]], %[[V8]] : tensor<3x1xf32>, tensor<3x3xf32>
// CHECK:      %[[V11:.*]] = dlvm.reduce add %[[V10]] dims [0] : tensor<3x3xf32>
// CHECK:      return %[[V11]] : tensor<3xf32>
func.func @cumprod(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = dlvm.scan mul %x dim 0 : tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func private @cumprod_grad(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @cumprod seedable>}
