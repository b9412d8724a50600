// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Forward mode of nonlinear reductions and softmax.

// softmax: dy = y * (t - sum(t * y)) (its Jacobian is symmetric)
// CHECK-LABEL: func.func @softmax_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.softmax %[[ARG0]] axis 1 : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.mul %[[ARG1]], %[[V0]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.reduce add %[[V1]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.reshape %[[V2]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V4:.*]] = dlvm.sub %[[ARG1]], %[[V3]] : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[V0]], %[[V4]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      return %[[V5]] : tensor<2x3xf32>
func.func @softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = dlvm.softmax %x axis 1 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @softmax_jvp(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @softmax>}

// -----

// log_softmax: dy = t - sum(softmax(x) * t)
// CHECK-LABEL: func.func @log_softmax_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.log_softmax %[[ARG0]] axis 1 : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.exp %[[V0]] : tensor<2x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.mul %[[V1]], %[[ARG1]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.reduce add %[[V2]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.reshape %[[V3]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V5:.*]] = dlvm.sub %[[ARG1]], %[[V4]] : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:      return %[[V5]] : tensor<2x3xf32>
func.func @log_softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = dlvm.log_softmax %x axis 1 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @log_softmax_jvp(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @log_softmax>}

// -----

// reduce max: dy = sum(t * (x == y)) / count(x == y)
// CHECK-LABEL: func.func @max_jvp(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2x3xf32>) -> tensor<2xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce max %[[ARG0]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[V0]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V2:.*]] = dlvm.cmp eq, %[[ARG0]], %[[V1]] : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V5:.*]] = dlvm.select %[[V2]], %[[V3]], %[[V4]] : tensor<2x3xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V6:.*]] = dlvm.reduce add %[[V5]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V7:.*]] = dlvm.mul %[[ARG1]], %[[V5]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V8:.*]] = dlvm.reduce add %[[V7]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V9:.*]] = dlvm.div %[[V8]], %[[V6]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      return %[[V9]] : tensor<2xf32>
func.func @max(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = dlvm.reduce max %x dims [1] : tensor<2x3xf32>
  return %y : tensor<2xf32>
}
func.func private @max_jvp(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @max>}
