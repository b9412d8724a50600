// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.reduce.

// add over dims [1]: dx = broadcast_to(reshape(g, [2, 1]), [2, 3])
// CHECK-LABEL: func.func @sum_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce add %[[ARG0]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[ARG1]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V2:.*]] = dlvm.broadcast_to %[[V1]] to [2, 3] : tensor<2x1xf32>
// CHECK:      return %[[V2]] : tensor<2x3xf32>
func.func @sum(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = dlvm.reduce add %x dims [1] : tensor<2x3xf32>
  return %y : tensor<2xf32>
}
func.func private @sum_grad(tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sum seedable>}

// -----

// add with init: dx as above, dinit = sum of g
// CHECK-LABEL: func.func @sum_init_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<f32>, %[[ARG2:.*]]: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<f32>)
// CHECK:      %[[V0:.*]] = dlvm.reduce add %[[ARG0]] init %[[ARG1]] dims [1] : tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[ARG2]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V2:.*]] = dlvm.broadcast_to %[[V1]] to [2, 3] : tensor<2x1xf32>
// CHECK:      %[[V3:.*]] = dlvm.reduce add %[[ARG2]] dims [0] : tensor<2xf32>
// CHECK:      return %[[V2]], %[[V3]] : tensor<2x3xf32>, tensor<f32>
func.func @sum_init(%x: tensor<2x3xf32>, %i: tensor<f32>) -> tensor<2xf32> {
  %y = dlvm.reduce add %x init %i dims [1] : tensor<2x3xf32>, tensor<f32>
  return %y : tensor<2xf32>
}
func.func private @sum_init_grad(tensor<2x3xf32>, tensor<f32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<f32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @sum_init seedable>}

// -----

// mean over dims [0]: dx = broadcast(g) * 1/2
// CHECK-LABEL: func.func @mean_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce mean %[[ARG0]] dims [0] : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[ARG1]] to [1, 3] : tensor<3xf32>
// CHECK:      %[[V2:.*]] = dlvm.broadcast_to %[[V1]] to [2, 3] : tensor<1x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<5.000000e-01> : tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[V2]], %[[V3]] : tensor<2x3xf32>, tensor<f32>
// CHECK:      return %[[V4]] : tensor<2x3xf32>
func.func @mean(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %y = dlvm.reduce mean %x dims [0] : tensor<2x3xf32>
  return %y : tensor<3xf32>
}
func.func private @mean_grad(tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @mean seedable>}

// -----

// max: the adjoint goes to the elements equal to the maximum; ties share it equally
// dx = (x == y) * g / count(x == y)
// CHECK-LABEL: func.func @max_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce max %[[ARG0]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[V0]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V2:.*]] = dlvm.cmp eq, %[[ARG0]], %[[V1]] : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V5:.*]] = dlvm.select %[[V2]], %[[V3]], %[[V4]] : tensor<2x3xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V6:.*]] = dlvm.reduce add %[[V5]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V7:.*]] = dlvm.div %[[ARG1]], %[[V6]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      %[[V8:.*]] = dlvm.reshape %[[V7]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V9:.*]] = dlvm.mul %[[V5]], %[[V8]] : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:      return %[[V9]] : tensor<2x3xf32>
func.func @max(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = dlvm.reduce max %x dims [1] : tensor<2x3xf32>
  return %y : tensor<2xf32>
}
func.func private @max_grad(tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @max seedable>}

// -----

// min with init: init takes part in ties too
// dx = (x == y) * g / c, dinit = sum((init == y) * g / c), c = count(x == y) + (init == y)
// CHECK-LABEL: func.func @min_init_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<f32>, %[[ARG2:.*]]: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<f32>)
// CHECK:      %[[V0:.*]] = dlvm.reduce min %[[ARG0]] init %[[ARG1]] dims [1] : tensor<2x3xf32>, tensor<f32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[V0]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V2:.*]] = dlvm.cmp eq, %[[ARG0]], %[[V1]] : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V5:.*]] = dlvm.select %[[V2]], %[[V3]], %[[V4]] : tensor<2x3xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V6:.*]] = dlvm.reduce add %[[V5]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V7:.*]] = dlvm.broadcast_to %[[ARG1]] to [2] : tensor<f32>
// CHECK:      %[[V8:.*]] = dlvm.cmp eq, %[[V7]], %[[V0]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      %[[V9:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V10:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V11:.*]] = dlvm.select %[[V8]], %[[V9]], %[[V10]] : tensor<2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V12:.*]] = dlvm.add %[[V6]], %[[V11]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      %[[V13:.*]] = dlvm.div %[[ARG2]], %[[V12]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      %[[V14:.*]] = dlvm.reshape %[[V13]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V15:.*]] = dlvm.mul %[[V5]], %[[V14]] : tensor<2x3xf32>, tensor<2x1xf32>
// CHECK:      %[[V16:.*]] = dlvm.mul %[[V13]], %[[V11]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      %[[V17:.*]] = dlvm.reduce add %[[V16]] dims [0] : tensor<2xf32>
// CHECK:      return %[[V15]], %[[V17]] : tensor<2x3xf32>, tensor<f32>
func.func @min_init(%x: tensor<2x3xf32>, %i: tensor<f32>) -> tensor<2xf32> {
  %y = dlvm.reduce min %x init %i dims [1] : tensor<2x3xf32>, tensor<f32>
  return %y : tensor<2xf32>
}
func.func private @min_init_grad(tensor<2x3xf32>, tensor<f32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<f32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @min_init seedable>}

// -----

// mul: dx_i = g * prod_{j != i} x_j, from exclusive prefix and suffix products (scan mul),
// so zeros are handled exactly (no division by x)
// CHECK-LABEL: func.func @prod_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<2xf32>) -> tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce mul %[[ARG0]] dims [1] : tensor<2x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.reshape %[[ARG1]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[V2:.*]] = dlvm.scan mul %[[ARG0]] dim 1 exclusive : tensor<2x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.scan mul %[[ARG0]] dim 1 exclusive reverse : tensor<2x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.mul %[[V2]], %[[V3]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK:      %[[V5:.*]] = dlvm.mul %[[V1]], %[[V4]] : tensor<2x1xf32>, tensor<2x3xf32>
// CHECK:      return %[[V5]] : tensor<2x3xf32>
func.func @prod(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = dlvm.reduce mul %x dims [1] : tensor<2x3xf32>
  return %y : tensor<2xf32>
}
func.func private @prod_grad(tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @prod seedable>}
