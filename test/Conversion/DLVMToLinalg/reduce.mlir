// Reductions (linalg.reduce), scans (scf.for over slices), window reductions
// (linalg.generic over output x window) and softmax.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-DAG: #[[ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[S1:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[WIN_IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 * 2 + d2, d1 * 2 + d3)>
// CHECK-DAG: #[[DIL_IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 + d2 * 3, d1 + d3 * 3)>
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[WIN_OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>

// The accumulator starts at the combinator's identity.
// CHECK-LABEL: func.func @reduce_add
// CHECK-SAME: (%[[X:.*]]: tensor<3x4x5xf32>)
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]] : tensor<3x4x5xf32>) outs(%[[F]] : tensor<4xf32>) dimensions = [0, 2]
// CHECK: (%[[IN:.*]]: f32, %[[ACC:.*]]: f32) {
// CHECK: %[[S:.*]] = arith.addf %[[IN]], %[[ACC]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @reduce_add(%x: tensor<3x4x5xf32>) -> tensor<4xf32> {
  %r = dlvm.reduce add %x dims [2, 0] : tensor<3x4x5xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @reduce_identities
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.mulf
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: arith.minimumf
// CHECK: arith.constant -1 : i32
// CHECK: arith.andi
// CHECK: arith.constant 0 : i32
// CHECK: arith.ori
// CHECK: arith.constant -2147483648 : i32
// CHECK: arith.maxsi
// CHECK: arith.constant 2147483647 : i32
// CHECK: arith.minsi
func.func @reduce_identities(%x: tensor<3x4xf32>, %i: tensor<3x4xi32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  %0 = dlvm.reduce mul %x dims [1] : tensor<3x4xf32>
  %1 = dlvm.reduce max %x dims [1] : tensor<3x4xf32>
  %2 = dlvm.reduce min %x dims [1] : tensor<3x4xf32>
  %3 = dlvm.reduce and %i dims [1] : tensor<3x4xi32>
  %4 = dlvm.reduce or %i dims [1] : tensor<3x4xi32>
  %5 = dlvm.reduce max %i dims [1] : tensor<3x4xi32>
  %6 = dlvm.reduce min %i dims [1] : tensor<3x4xi32>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}

// With `init`, the accumulator starts at the init value.
// CHECK-LABEL: func.func @reduce_init
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<f32>)
// CHECK: %[[V:.*]] = tensor.extract %[[I]][] : tensor<f32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[F]] : tensor<4xf32>) dimensions = [1]
// CHECK: arith.maximumf
func.func @reduce_init(%x: tensor<4x8xf32>, %init: tensor<f32>) -> tensor<4xf32> {
  %r = dlvm.reduce max %x init %init dims [1] : tensor<4x8xf32>, tensor<f32>
  return %r : tensor<4xf32>
}

// mean = sum / count, plus init.
// CHECK-LABEL: func.func @reduce_mean
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<f32>)
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<8xf32>) dimensions = [0]
// CHECK: linalg.generic {indexing_maps = [#[[ID1]], #[[S1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[SUM]], %[[I]] : tensor<8xf32>, tensor<f32>)
// CHECK: ^bb0(%[[S:.*]]: f32, %[[IV:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[N:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[M:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK: arith.addf %[[M]], %[[IV]] : f32
func.func @reduce_mean(%x: tensor<4x8xf32>, %init: tensor<f32>) -> tensor<8xf32> {
  %r = dlvm.reduce mean %x init %init dims [0] : tensor<4x8xf32>, tensor<f32>
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @reduce_all_to_scalar
// CHECK: linalg.reduce ins(%{{.*}} : tensor<4x8xf64>) outs(%{{.*}} : tensor<f64>) dimensions = [0, 1]
func.func @reduce_all_to_scalar(%x: tensor<4x8xf64>) -> tensor<f64> {
  %r = dlvm.reduce add %x dims [0, 1] : tensor<4x8xf64>
  return %r : tensor<f64>
}

// Inclusive scan: the running slice is combined in place with each next slice.
// CHECK-LABEL: func.func @scan
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 1] [1, 1] : tensor<4x8xf32> to tensor<4x1xf32>
// CHECK: %[[INIT:.*]] = tensor.insert_slice %[[FIRST]] into %{{.*}}[0, 0] [4, 1] [1, 1]
// CHECK: %[[CUR0:.*]] = linalg.generic
// CHECK-SAME: ins(%[[FIRST]] : tensor<4x1xf32>)
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CUR:.*]] = %[[CUR0]], %[[RES:.*]] = %[[INIT]]) -> (tensor<4x1xf32>, tensor<4x8xf32>)
// CHECK: %[[NEXT:.*]] = tensor.extract_slice %[[X]][0, %[[IV]]] [4, 1] [1, 1]
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[NEXT]] : tensor<4x1xf32>) outs(%[[CUR]] : tensor<4x1xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK: arith.addf %[[OUT]], %[[IN]] : f32
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[ACC]] into %[[RES]][0, %[[IV]]] [4, 1] [1, 1]
// CHECK: scf.yield %[[ACC]], %[[INS]]
// CHECK: return %[[LOOP]]#1
func.func @scan(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = dlvm.scan add %x dim 1 : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Exclusive and reversed: the first result (the last position) is the
// identity; each step inserts the running value at n - 1 - i, then combines.
// CHECK-LABEL: func.func @scan_exclusive_reverse
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, 7] [4, 1] [1, 1]
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[HEAD:.*]] = linalg.fill ins(%[[ONE]] : f32) outs(%{{.*}} : tensor<4x1xf32>)
// CHECK: %[[INIT:.*]] = tensor.insert_slice %[[HEAD]] into %{{.*}}[0, 7] [4, 1] [1, 1]
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CUR:.*]] = %{{.*}}, %[[RES:.*]] = %[[INIT]])
// CHECK: %[[AT:.*]] = arith.subi %{{.*}}, %[[IV]] : index
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[CUR]] into %[[RES]][0, %[[AT]]] [4, 1] [1, 1]
// CHECK: tensor.extract_slice %[[X]][0, %[[AT]]] [4, 1] [1, 1]
// CHECK: arith.mulf
// CHECK: scf.yield %{{.*}}, %[[INS]]
func.func @scan_exclusive_reverse(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = dlvm.scan mul %x dim 1 exclusive reverse : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Pad: a fill with the value, then the window of the operand that lands in
// the result inserted with stride interior + 1 (here: element 1 of dim 0 at
// row 0 after cropping one row and one gap).
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[V:.*]]: tensor<f32>)
// CHECK: %[[S:.*]] = tensor.extract %[[V]][] : tensor<f32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[S]] : f32) outs(%{{.*}} : tensor<7x9xf32>)
// CHECK: %[[W:.*]] = tensor.extract_slice %[[X]][1, 0] [3, 3] [1, 1] : tensor<4x3xf32> to tensor<3x3xf32>
// CHECK: tensor.insert_slice %[[W]] into %[[F]][0, 2] [3, 3] [2, 3] : tensor<3x3xf32> into tensor<7x9xf32>
func.func @pad(%x: tensor<4x3xf32>, %v: tensor<f32>) -> tensor<7x9xf32> {
  %r = dlvm.pad %x, %v low [-2, 2] high [2, 0] interior [1, 2] : tensor<4x3xf32>, tensor<f32>
  return %r : tensor<7x9xf32>
}

// CHECK-LABEL: func.func @scan_max_i32
// CHECK: scf.for
// CHECK: arith.maxsi
func.func @scan_max_i32(%x: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = dlvm.scan max %x dim 0 : tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// Padding with the identity, then a generic over (output, window) dims; the
// window-shaped tensor.empty gives the window loops their bounds.
// CHECK-LABEL: func.func @reduce_window_max
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0] high[0, 1]
// CHECK: tensor.yield %[[NEG_INF]] : f32
// CHECK: } : tensor<4x8xf32> to tensor<4x9xf32>
// CHECK: %[[W:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[WIN_IN]], #[[WIN]], #[[WIN_OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[P]], %[[W]] : tensor<4x9xf32>, tensor<2x3xf32>) outs(%[[F]] : tensor<2x4xf32>)
// CHECK: arith.maximumf
func.func @reduce_window_max(%x: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %r = dlvm.reduce_window max %x window [2, 3] strides [2, 2] padding half : tensor<4x8xf32>
  return %r : tensor<2x4xf32>
}

// mean divides by the number of in-bounds elements of each window: per
// dimension a constant vector of counts, multiplied, one division.
// CHECK-LABEL: func.func @reduce_window_mean
// CHECK: tensor.pad %{{.*}} low[1, 2] high[1, 2]
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-DAG: %[[C0:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<5xf32>
// CHECK-DAG: %[[C1:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 3.000000e+00, 3.000000e+00, 3.000000e+00, 3.000000e+00, 3.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<10xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[C0]], %[[C1]] : tensor<5x10xf32>, tensor<5xf32>, tensor<10xf32>)
// CHECK: %[[N:.*]] = arith.mulf
// CHECK: arith.divf %{{.*}}, %[[N]] : f32
func.func @reduce_window_mean(%x: tensor<4x8xf32>) -> tensor<5x10xf32> {
  %r = dlvm.reduce_window mean %x window [2, 3] strides [1, 1] padding full : tensor<4x8xf32>
  return %r : tensor<5x10xf32>
}

// Explicit padding, window and base dilation: the operand inserted with
// stride 2 into the identity-filled padded tensor, the window read with
// stride 3 (o * 1 + w * 3).
// CHECK-LABEL: func.func @reduce_window_dilated
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<10x9xf32>)
// CHECK: %[[P:.*]] = tensor.insert_slice %{{.*}} into %[[F]][1, 0] [4, 8] [2, 1] : tensor<4x8xf32> into tensor<10x9xf32>
// CHECK: linalg.generic {indexing_maps = [#[[DIL_IN]]
// CHECK-SAME: ins(%[[P]], %{{.*}} : tensor<10x9xf32>, tensor<2x3xf32>)
func.func @reduce_window_dilated(%x: tensor<4x8xf32>) -> tensor<7x3xf32> {
  %r = dlvm.reduce_window max %x window [2, 3] strides [1, 1] padding none low [1, 0] high [2, 1]
      window_dilation [3, 3] base_dilation [2, 1] : tensor<4x8xf32>
  return %r : tensor<7x3xf32>
}

// CHECK-LABEL: func.func @reduce_window_valid
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic
// CHECK: arith.mulf
func.func @reduce_window_valid(%x: tensor<4x8xf32>) -> tensor<3x3xf32> {
  %r = dlvm.reduce_window mul %x window [2, 3] strides [1, 2] padding none : tensor<4x8xf32>
  return %r : tensor<3x3xf32>
}

// softmax subtracts the maximum before exponentiating.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[NEG_INF]] : f32)
// CHECK: %[[MAX:.*]] = linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[F]] : tensor<4xf32>) dimensions = [1]
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROWS]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: %[[D:.*]] = arith.subf
// CHECK: math.exp %[[D]]
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%[[E]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>) dimensions = [1]
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ROWS]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[E]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: arith.divf
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = dlvm.softmax %x axis 1 : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// log_softmax = (x - max) - log(sum(exp(x - max))).
// CHECK-LABEL: func.func @log_softmax
// CHECK: linalg.reduce
// CHECK: math.exp
// CHECK: linalg.reduce
// CHECK: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SH:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK: %[[L:.*]] = math.log %[[S]] : f32
// CHECK: arith.subf %[[SH]], %[[L]] : f32
func.func @log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = dlvm.log_softmax %x axis 0 : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
