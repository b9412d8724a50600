// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.reduce_window (pooling): for each offset in the window,
// the output-shaped adjoint is inserted (strided) into a padded zeros tensor,
// the parts are summed and the padding is sliced off.

// add: dx = unpad(sum over window offsets o of insert(g at o, strides))
// CHECK-LABEL: func.func @sum_pool_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3x3xf32>, %[[ARG1:.*]]: tensor<2x2xf32>) -> tensor<3x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce_window add %[[ARG0]] window [2, 2] strides [1, 1] padding none : tensor<3x3xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<0.000000e+00> : tensor<3x3xf32>
// CHECK:      %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[ARG1]] into %[[V1]][0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<3x3xf32>
// CHECK:      %[[V2:.*]] = dlvm.constant dense<0.000000e+00> : tensor<3x3xf32>
// CHECK:      %[[INSERTED_SLICE_0:.*]] = tensor.insert_slice %[[ARG1]] into %[[V2]][0, 1] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<3x3xf32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<0.000000e+00> : tensor<3x3xf32>
// CHECK:      %[[INSERTED_SLICE_1:.*]] = tensor.insert_slice %[[ARG1]] into %[[V3]][1, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<3x3xf32>
// CHECK:      %[[V4:.*]] = dlvm.constant dense<0.000000e+00> : tensor<3x3xf32>
// CHECK:      %[[INSERTED_SLICE_2:.*]] = tensor.insert_slice %[[ARG1]] into %[[V4]][1, 1] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<3x3xf32>
// CHECK:      %[[V5:.*]] = dlvm.add %[[INSERTED_SLICE]], %[[INSERTED_SLICE_0]] : tensor<3x3xf32>, tensor<3x3xf32>
// CHECK:      %[[V6:.*]] = dlvm.add %[[V5]], %[[INSERTED_SLICE_1]] : tensor<3x3xf32>, tensor<3x3xf32>
// CHECK:      %[[V7:.*]] = dlvm.add %[[V6]], %[[INSERTED_SLICE_2]] : tensor<3x3xf32>, tensor<3x3xf32>
// CHECK:      return %[[V7]] : tensor<3x3xf32>
func.func @sum_pool(%x: tensor<3x3xf32>) -> tensor<2x2xf32> {
  %y = dlvm.reduce_window add %x window [2, 2] strides [1, 1] padding none : tensor<3x3xf32>
  return %y : tensor<2x2xf32>
}
func.func private @sum_pool_grad(tensor<3x3xf32>, tensor<2x2xf32>) -> tensor<3x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sum_pool seedable>}

// -----

// mean with padding half: g divided by the count of in-bounds elements of each window (a constant)
// CHECK-LABEL: func.func @avg_pool_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<2xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce_window mean %[[ARG0]] window [2] strides [2] padding half : tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<{{.*}}> : tensor<2xf32>
// CHECK:      %[[V2:.*]] = dlvm.div %[[ARG1]], %[[V1]] : tensor<2xf32>, tensor<2xf32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK:      %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[V2]] into %[[V3]][0] [2] [2] : tensor<2xf32> into tensor<4xf32>
// CHECK:      %[[V4:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK:      %[[INSERTED_SLICE_0:.*]] = tensor.insert_slice %[[V2]] into %[[V4]][1] [2] [2] : tensor<2xf32> into tensor<4xf32>
// CHECK:      %[[V5:.*]] = dlvm.add %[[INSERTED_SLICE]], %[[INSERTED_SLICE_0]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V6:.*]] = dlvm.slice %[[V5]] offsets [0] sizes [3] : tensor<4xf32>
// CHECK:      return %[[V6]] : tensor<3xf32>
func.func @avg_pool(%x: tensor<3xf32>) -> tensor<2xf32> {
  %y = dlvm.reduce_window mean %x window [2] strides [2] padding half : tensor<3xf32>
  return %y : tensor<2xf32>
}
func.func private @avg_pool_grad(tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @avg_pool seedable>}

// -----

// max: the padded input (identity -inf) compared with the output per offset; ties share g
// CHECK-LABEL: func.func @max_pool_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<1x1x4x4xf32>, %[[ARG1:.*]]: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce_window max %[[ARG0]] window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : tensor<1x1x4x4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<0xFF800000> : tensor<1x1x4x4xf32>
// CHECK:      %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[ARG0]] into %[[V1]][0, 0, 0, 0] [1, 1, 4, 4] [1, 1, 1, 1] : tensor<1x1x4x4xf32> into tensor<1x1x4x4xf32>
// CHECK:      %[[V2:.*]] = dlvm.slice %[[INSERTED_SLICE]] offsets [0, 0, 0, 0] sizes [1, 1, 2, 2] strides [1, 1, 2, 2] : tensor<1x1x4x4xf32>
// CHECK:      %[[V3:.*]] = dlvm.slice %[[INSERTED_SLICE]] offsets [0, 0, 0, 1] sizes [1, 1, 2, 2] strides [1, 1, 2, 2] : tensor<1x1x4x4xf32>
// CHECK:      %[[V4:.*]] = dlvm.slice %[[INSERTED_SLICE]] offsets [0, 0, 1, 0] sizes [1, 1, 2, 2] strides [1, 1, 2, 2] : tensor<1x1x4x4xf32>
// CHECK:      %[[V5:.*]] = dlvm.slice %[[INSERTED_SLICE]] offsets [0, 0, 1, 1] sizes [1, 1, 2, 2] strides [1, 1, 2, 2] : tensor<1x1x4x4xf32>
// CHECK:      %[[V6:.*]] = dlvm.cmp eq, %[[V2]], %[[V0]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V7:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V8:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V9:.*]] = dlvm.select %[[V6]], %[[V7]], %[[V8]] : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V10:.*]] = dlvm.cmp eq, %[[V3]], %[[V0]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V11:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V12:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V13:.*]] = dlvm.select %[[V10]], %[[V11]], %[[V12]] : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V14:.*]] = dlvm.cmp eq, %[[V4]], %[[V0]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V15:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V16:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V17:.*]] = dlvm.select %[[V14]], %[[V15]], %[[V16]] : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V18:.*]] = dlvm.cmp eq, %[[V5]], %[[V0]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V19:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V20:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V21:.*]] = dlvm.select %[[V18]], %[[V19]], %[[V20]] : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[V22:.*]] = dlvm.add %[[V9]], %[[V13]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V23:.*]] = dlvm.add %[[V22]], %[[V17]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V24:.*]] = dlvm.add %[[V23]], %[[V21]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V25:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V26:.*]] = dlvm.div %[[V25]], %[[V24]] : tensor<f32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V27:.*]] = dlvm.mul %[[V9]], %[[V26]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V28:.*]] = dlvm.mul %[[V13]], %[[V26]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V29:.*]] = dlvm.mul %[[V17]], %[[V26]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V30:.*]] = dlvm.mul %[[V21]], %[[V26]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V31:.*]] = dlvm.mul %[[ARG1]], %[[V27]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V32:.*]] = dlvm.constant dense<0.000000e+00> : tensor<1x1x4x4xf32>
// CHECK:      %[[INSERTED_SLICE_0:.*]] = tensor.insert_slice %[[V31]] into %[[V32]][0, 0, 0, 0] [1, 1, 2, 2] [1, 1, 2, 2] : tensor<1x1x2x2xf32> into tensor<1x1x4x4xf32>
// CHECK:      %[[V33:.*]] = dlvm.mul %[[ARG1]], %[[V28]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V34:.*]] = dlvm.constant dense<0.000000e+00> : tensor<1x1x4x4xf32>
// CHECK:      %[[INSERTED_SLICE_1:.*]] = tensor.insert_slice %[[V33]] into %[[V34]][0, 0, 0, 1] [1, 1, 2, 2] [1, 1, 2, 2] : tensor<1x1x2x2xf32> into tensor<1x1x4x4xf32>
// CHECK:      %[[V35:.*]] = dlvm.mul %[[ARG1]], %[[V29]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V36:.*]] = dlvm.constant dense<0.000000e+00> : tensor<1x1x4x4xf32>
// CHECK:      %[[INSERTED_SLICE_2:.*]] = tensor.insert_slice %[[V35]] into %[[V36]][0, 0, 1, 0] [1, 1, 2, 2] [1, 1, 2, 2] : tensor<1x1x2x2xf32> into tensor<1x1x4x4xf32>
// CHECK:      %[[V37:.*]] = dlvm.mul %[[ARG1]], %[[V30]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[V38:.*]] = dlvm.constant dense<0.000000e+00> : tensor<1x1x4x4xf32>
// CHECK:      %[[INSERTED_SLICE_3:.*]] = tensor.insert_slice %[[V37]] into %[[V38]][0, 0, 1, 1] [1, 1, 2, 2] [1, 1, 2, 2] : tensor<1x1x2x2xf32> into tensor<1x1x4x4xf32>
// CHECK:      %[[V39:.*]] = dlvm.add %[[INSERTED_SLICE_0]], %[[INSERTED_SLICE_1]] : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
// CHECK:      %[[V40:.*]] = dlvm.add %[[V39]], %[[INSERTED_SLICE_2]] : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
// CHECK:      %[[V41:.*]] = dlvm.add %[[V40]], %[[INSERTED_SLICE_3]] : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
// CHECK:      return %[[V41]] : tensor<1x1x4x4xf32>
func.func @max_pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %y = dlvm.reduce_window max %x window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : tensor<1x1x4x4xf32>
  return %y : tensor<1x1x2x2xf32>
}
func.func private @max_pool_grad(tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @max_pool seedable>}
