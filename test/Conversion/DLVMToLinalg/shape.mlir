// Shape ops: linalg.transpose/broadcast, tensor slices and reshapes.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<3x4x5xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<5x4x3xf32>
// CHECK: linalg.transpose ins(%[[X]] : tensor<3x4x5xf32>) outs(%[[E]] : tensor<5x4x3xf32>) permutation = [2, 1, 0]
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4x5x3xf32>
// CHECK: linalg.transpose ins(%[[X]] : tensor<3x4x5xf32>) outs(%[[E2]] : tensor<4x5x3xf32>) permutation = [1, 2, 0]
func.func @transpose(%x: tensor<3x4x5xf32>) -> (tensor<5x4x3xf32>, tensor<4x5x3xf32>) {
  %0 = dlvm.transpose %x : tensor<3x4x5xf32>
  %1 = dlvm.transpose %x perm [1, 2, 0] : tensor<3x4x5xf32>
  return %0, %1 : tensor<5x4x3xf32>, tensor<4x5x3xf32>
}

// A gather through tensor.extract at (2 - i, j, 4 - k): no indexing map with a
// negative coefficient, which upstream tiling cannot handle.
// CHECK-LABEL: func.func @reverse
// CHECK-SAME: (%[[X:.*]]: tensor<3x4x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[RI:.*]] = arith.subi %[[C2]], %[[I]] : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[K:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[RK:.*]] = arith.subi %[[C4]], %[[K]] : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[X]][%[[RI]], %[[J]], %[[RK]]] : tensor<3x4x5xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @reverse(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %r = dlvm.reverse %x dims [0, 2] : tensor<3x4x5xf32>
  return %r : tensor<3x4x5xf32>
}

// CHECK-LABEL: func.func @concatenate
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<3x2xf32>, %[[C:.*]]: tensor<3x1xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x7xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [3, 4] [1, 1]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 4] [3, 2] [1, 1]
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[C]] into %[[I1]][0, 6] [3, 1] [1, 1]
// CHECK: return %[[I2]]
func.func @concatenate(%a: tensor<3x4xf32>, %b: tensor<3x2xf32>, %c: tensor<3x1xf32>) -> tensor<3x7xf32> {
  %r = dlvm.concatenate %a, %b, %c axis 1 : tensor<3x4xf32>, tensor<3x2xf32>, tensor<3x1xf32>
  return %r : tensor<3x7xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK: tensor.extract_slice %{{.*}}[1, 0, 1] [2, 2, 2] [1, 3, 2] : tensor<3x4x5xf32> to tensor<2x2x2xf32>
func.func @slice(%x: tensor<3x4x5xf32>) -> tensor<2x2x2xf32> {
  %r = dlvm.slice %x offsets [1, 0, 1] sizes [2, 2, 2] strides [1, 3, 2] : tensor<3x4x5xf32>
  return %r : tensor<2x2x2xf32>
}

// Merging or splitting adjacent dimensions is one collapse/expand; other
// reshapes go through 1-D.
// CHECK-LABEL: func.func @reshape
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<3x4x5xf32> into tensor<12x5xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3]] output_shape [3, 2, 2, 5] : tensor<3x4x5xf32> into tensor<3x2x2x5xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<3x4x5xf32> into tensor<60xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [6, 10] : tensor<60xf32> into tensor<6x10xf32>
func.func @reshape(%x: tensor<3x4x5xf32>) -> (tensor<12x5xf32>, tensor<3x2x2x5xf32>, tensor<6x10xf32>) {
  %0 = dlvm.reshape %x to [12, 5] : tensor<3x4x5xf32>
  %1 = dlvm.reshape %x to [3, 2, 2, 5] : tensor<3x4x5xf32>
  %2 = dlvm.reshape %x to [6, 10] : tensor<3x4x5xf32>
  return %0, %1, %2 : tensor<12x5xf32>, tensor<3x2x2x5xf32>, tensor<6x10xf32>
}

// CHECK-LABEL: func.func @reshape_rank0
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1x1x1xf32> into tensor<f32>
func.func @reshape_rank0(%s: tensor<f32>, %t: tensor<1x1x1xf32>) -> (tensor<1x1xf32>, tensor<f32>) {
  %0 = dlvm.reshape %s to [1, 1] : tensor<f32>
  %1 = dlvm.reshape %t to [] : tensor<1x1x1xf32>
  return %0, %1 : tensor<1x1xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @pad_squeeze
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [3, 1, 4] : tensor<3x4xf32> into tensor<3x1x4xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [3, 4, 1] : tensor<3x4xf32> into tensor<3x4x1xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
func.func @pad_squeeze(%x: tensor<3x4xf32>, %y: tensor<1x4xf32>) -> (tensor<3x1x4xf32>, tensor<3x4x1xf32>, tensor<4xf32>) {
  %0 = dlvm.pad_shape %x at 1 : tensor<3x4xf32>
  %1 = dlvm.pad_shape %x at 2 : tensor<3x4xf32>
  %2 = dlvm.squeeze_shape %y at 0 : tensor<1x4xf32>
  return %0, %1, %2 : tensor<3x1x4xf32>, tensor<3x4x1xf32>, tensor<4xf32>
}

// The broadcast unit dimensions are collapsed away, then linalg.broadcast.
// CHECK-LABEL: func.func @broadcast_to
// CHECK-SAME: (%[[R:.*]]: tensor<1x4xf32>, %[[S:.*]]: tensor<f32>, %[[T:.*]]: tensor<3x1x1xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: linalg.broadcast ins(%[[C]] : tensor<4xf32>) outs(%{{.*}} : tensor<5x4xf32>) dimensions = [0]
// CHECK: linalg.broadcast ins(%[[S]] : tensor<f32>) outs(%{{.*}} : tensor<2x3xf32>) dimensions = [0, 1]
// CHECK: %[[C2:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0], [1, 2]] : tensor<3x1x1xf32> into tensor<3x1xf32>
// CHECK: linalg.broadcast ins(%[[C2]] : tensor<3x1xf32>) outs(%{{.*}} : tensor<3x2x1xf32>) dimensions = [1]
func.func @broadcast_to(%r: tensor<1x4xf32>, %s: tensor<f32>, %t: tensor<3x1x1xf32>)
    -> (tensor<5x4xf32>, tensor<2x3xf32>, tensor<3x2x1xf32>) {
  %0 = dlvm.broadcast_to %r to [5, 4] : tensor<1x4xf32>
  %1 = dlvm.broadcast_to %s to [2, 3] : tensor<f32>
  %2 = dlvm.broadcast_to %t to [3, 2, 1] : tensor<3x1x1xf32>
  return %0, %1, %2 : tensor<5x4xf32>, tensor<2x3xf32>, tensor<3x2x1xf32>
}

// Dense literals become arith.constant; splats a linalg.fill.
// CHECK-LABEL: func.func @constants
// CHECK-DAG: %[[D:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[V:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x5xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<3x5xf32>)
// CHECK: return %[[D]], %[[F]]
func.func @constants() -> (tensor<2x2xf32>, tensor<3x5xf32>) {
  %0 = dlvm.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %1 = dlvm.constant dense<0.5> : tensor<3x5xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<3x5xf32>
}

// CHECK-LABEL: func.func @casts
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.cmpi ne
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.cmpf une
// CHECK: arith.bitcast %{{.*}} : f32 to i32
func.func @casts(%x: tensor<4xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>)
    -> (tensor<4xi32>, tensor<4xf16>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi1>, tensor<4xi32>) {
  %0 = dlvm.cast %x to i32 : tensor<4xf32>
  %1 = dlvm.cast %x to f16 : tensor<4xf32>
  %2 = dlvm.cast %i to f32 : tensor<4xi32>
  %3 = dlvm.cast %i to i1 : tensor<4xi32>
  %4 = dlvm.cast %b to f32 : tensor<4xi1>
  %5 = dlvm.cast %x to i1 : tensor<4xf32>
  %6 = dlvm.bitcast %x to i32 : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<4xi32>, tensor<4xf16>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi1>, tensor<4xi32>
}
