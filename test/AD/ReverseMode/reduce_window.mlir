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
// the windows tile the padded input: the positions' parts are interleaved (each split to
// [2, 1] and chosen by a one-hot mask of the window positions that broadcasts against it),
// not inserted into zeros with strides and added up
// CHECK:      %[[R0:.*]] = dlvm.reshape %[[V2]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[M1:.*]] = dlvm.constant dense<{{\[}}[false, true]]> : tensor<1x2xi1>
// CHECK:      %[[R1:.*]] = dlvm.reshape %[[V2]] to [2, 1] : tensor<2xf32>
// CHECK:      %[[C:.*]] = dlvm.select %[[M1]], %[[R1]], %[[R0]] : tensor<1x2xi1>, tensor<2x1xf32>, tensor<2x1xf32>
// CHECK:      %[[V5:.*]] = dlvm.reshape %[[C]] to [4] : tensor<2x2xf32>
// CHECK-NOT:  tensor.insert_slice
// CHECK:      %[[V6:.*]] = dlvm.slice %[[V5]] offsets [0] sizes [3] : tensor<4xf32>
// CHECK:      return %[[V6]] : tensor<3xf32>
func.func @avg_pool(%x: tensor<3xf32>) -> tensor<2xf32> {
  %y = dlvm.reduce_window mean %x window [2] strides [2] padding half : tensor<3xf32>
  return %y : tensor<2xf32>
}
func.func private @avg_pool_grad(tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @avg_pool seedable>}

// -----

// max: the padded input (identity -inf) compared with the output per offset; as JAX
// (select_and_scatter), g goes to the first offset (row-major) equal to the output:
// w_o = hit_o * (1 - taken), taken += w_o.
// CHECK-LABEL: func.func @max_pool_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<1x1x4x4xf32>, %[[ARG1:.*]]: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
// CHECK:      %[[Y:.*]] = dlvm.reduce_window max %[[ARG0]] window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : tensor<1x1x4x4xf32>
// CHECK:      %[[NEGINF:.*]] = dlvm.constant dense<0xFF800000> : tensor<1x1x4x4xf32>
// CHECK:      %[[P:.*]] = tensor.insert_slice %[[ARG0]] into %[[NEGINF]][0, 0, 0, 0] [1, 1, 4, 4] [1, 1, 1, 1] : tensor<1x1x4x4xf32> into tensor<1x1x4x4xf32>
// CHECK:      %[[X0:.*]] = dlvm.slice %[[P]] offsets [0, 0, 0, 0] sizes [1, 1, 2, 2] strides [1, 1, 2, 2] : tensor<1x1x4x4xf32>
// CHECK:      %[[X1:.*]] = dlvm.slice %[[P]] offsets [0, 0, 0, 1] sizes [1, 1, 2, 2] strides [1, 1, 2, 2] : tensor<1x1x4x4xf32>
// CHECK:      %[[X2:.*]] = dlvm.slice %[[P]] offsets [0, 0, 1, 0] sizes [1, 1, 2, 2] strides [1, 1, 2, 2] : tensor<1x1x4x4xf32>
// CHECK:      %[[X3:.*]] = dlvm.slice %[[P]] offsets [0, 0, 1, 1] sizes [1, 1, 2, 2] strides [1, 1, 2, 2] : tensor<1x1x4x4xf32>
// CHECK:      %[[E0:.*]] = dlvm.cmp eq, %[[X0]], %[[Y]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[W0:.*]] = dlvm.select %[[E0]], %{{.*}}, %{{.*}} : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[E1:.*]] = dlvm.cmp eq, %[[X1]], %[[Y]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[H1:.*]] = dlvm.select %[[E1]], %{{.*}}, %{{.*}} : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[N1:.*]] = dlvm.sub %{{.*}}, %[[W0]] : tensor<f32>, tensor<1x1x2x2xf32>
// CHECK:      %[[W1:.*]] = dlvm.mul %[[H1]], %[[N1]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[T1:.*]] = dlvm.add %[[W0]], %[[W1]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[E2:.*]] = dlvm.cmp eq, %[[X2]], %[[Y]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[H2:.*]] = dlvm.select %[[E2]], %{{.*}}, %{{.*}} : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[N2:.*]] = dlvm.sub %{{.*}}, %[[T1]] : tensor<f32>, tensor<1x1x2x2xf32>
// CHECK:      %[[W2:.*]] = dlvm.mul %[[H2]], %[[N2]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[T2:.*]] = dlvm.add %[[T1]], %[[W2]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[E3:.*]] = dlvm.cmp eq, %[[X3]], %[[Y]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[H3:.*]] = dlvm.select %[[E3]], %{{.*}}, %{{.*}} : tensor<1x1x2x2xi1>, tensor<f32>, tensor<f32>
// CHECK:      %[[N3:.*]] = dlvm.sub %{{.*}}, %[[T2]] : tensor<f32>, tensor<1x1x2x2xf32>
// CHECK:      %[[W3:.*]] = dlvm.mul %[[H3]], %[[N3]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK-NOT:  dlvm.add %[[T2]]
// CHECK:      %[[G0:.*]] = dlvm.mul %[[ARG1]], %[[W0]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[G1:.*]] = dlvm.mul %[[ARG1]], %[[W1]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[G2:.*]] = dlvm.mul %[[ARG1]], %[[W2]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// CHECK:      %[[G3:.*]] = dlvm.mul %[[ARG1]], %[[W3]] : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
// the 2x2/2 windows tile the input: the four positions' parts interleaved, each chosen
// by its one-hot mask of the window positions (one elementwise pass once fused)
// CHECK:      %[[S0:.*]] = dlvm.reshape %[[G0]] to [1, 1, 1, 1, 2, 1, 2, 1]
// CHECK:      %[[M1:.*]] = dlvm.constant dense<{{\[+}}false, true]], {{\[+}}false, false]]]]]]]]> : tensor<1x1x1x1x1x2x1x2xi1>
// CHECK:      %[[S1:.*]] = dlvm.reshape %[[G1]] to [1, 1, 1, 1, 2, 1, 2, 1]
// CHECK:      %[[A1:.*]] = dlvm.select %[[M1]], %[[S1]], %[[S0]]
// CHECK:      %[[M2:.*]] = dlvm.constant dense<{{\[+}}false, false]], {{\[+}}true, false]]]]]]]]>
// CHECK:      %[[S2:.*]] = dlvm.reshape %[[G2]] to [1, 1, 1, 1, 2, 1, 2, 1]
// CHECK:      %[[A2:.*]] = dlvm.select %[[M2]], %[[S2]], %[[A1]]
// CHECK:      %[[M3:.*]] = dlvm.constant dense<{{\[+}}false, false]], {{\[+}}false, true]]]]]]]]>
// CHECK:      %[[S3:.*]] = dlvm.reshape %[[G3]] to [1, 1, 1, 1, 2, 1, 2, 1]
// CHECK:      %[[ALL:.*]] = dlvm.select %[[M3]], %[[S3]], %[[A2]] : tensor<1x1x1x1x1x2x1x2xi1>, tensor<1x1x1x1x2x1x2x1xf32>, tensor<1x1x1x1x2x2x2x2xf32>
// CHECK:      %[[A3:.*]] = dlvm.reshape %[[ALL]] to [1, 1, 4, 4] : tensor<1x1x1x1x2x2x2x2xf32>
// CHECK:      return %[[A3]] : tensor<1x1x4x4xf32>
func.func @max_pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %y = dlvm.reduce_window max %x window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : tensor<1x1x4x4xf32>
  return %y : tensor<1x1x2x2xf32>
}
func.func private @max_pool_grad(tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @max_pool seedable>}
