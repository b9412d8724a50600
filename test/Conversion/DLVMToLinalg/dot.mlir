// dlvm.dot becomes the matching named linalg contraction, accumulating into zeros.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// Indexing maps of the transposed contractions below (printed first).
// CHECK-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BKM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[BKN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[BNK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[BMN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x5xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<3x5xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[F]] : tensor<3x5xf32>)
// CHECK: return %[[M]]
func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %r = dlvm.dot %a, %b : tensor<3x4xf32>, tensor<4x5xf32>
  return %r : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @matvec
// CHECK: linalg.matvec ins(%{{.*}}, %{{.*}} : tensor<3x4xf64>, tensor<4xf64>) outs(%{{.*}} : tensor<3xf64>)
func.func @matvec(%a: tensor<3x4xf64>, %v: tensor<4xf64>) -> tensor<3xf64> {
  %r = dlvm.dot %a, %v : tensor<3x4xf64>, tensor<4xf64>
  return %r : tensor<3xf64>
}

// CHECK-LABEL: func.func @vecmat
// CHECK: linalg.vecmat ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4x5xf32>) outs(%{{.*}} : tensor<5xf32>)
func.func @vecmat(%v: tensor<4xf32>, %b: tensor<4x5xf32>) -> tensor<5xf32> {
  %r = dlvm.dot %v, %b : tensor<4xf32>, tensor<4x5xf32>
  return %r : tensor<5xf32>
}

// CHECK-LABEL: func.func @inner
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>) -> tensor<f32>
// CHECK: linalg.dot ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%[[F]] : tensor<f32>)
func.func @inner(%v: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %r = dlvm.dot %v, %w : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<f32>
}

// CHECK-LABEL: func.func @batch_matmul
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%{{.*}} : tensor<2x3x5xf32>)
func.func @batch_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %r = dlvm.dot %a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>
  return %r : tensor<2x3x5xf32>
}

// Several batch dimensions are collapsed into one around linalg.batch_matmul.
// CHECK-LABEL: func.func @batch2_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x3x4xf32>, %[[B:.*]]: tensor<2x3x4x5xf32>)
// CHECK-DAG: %[[CA:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x3x4xf32> into tensor<6x3x4xf32>
// CHECK-DAG: %[[CB:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
// CHECK: %[[M:.*]] = linalg.batch_matmul ins(%[[CA]], %[[CB]] : tensor<6x3x4xf32>, tensor<6x4x5xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 3, 5] : tensor<6x3x5xf32> into tensor<2x3x3x5xf32>
// CHECK: return %[[R]]
func.func @batch2_matmul(%a: tensor<2x3x3x4xf32>, %b: tensor<2x3x4x5xf32>) -> tensor<2x3x3x5xf32> {
  %r = dlvm.dot %a, %b : tensor<2x3x3x4xf32>, tensor<2x3x4x5xf32>
  return %r : tensor<2x3x3x5xf32>
}

// CHECK-LABEL: func.func @matmul_i32
// CHECK: arith.constant 0 : i32
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xi32>, tensor<4x5xi32>)
func.func @matmul_i32(%a: tensor<3x4xi32>, %b: tensor<4x5xi32>) -> tensor<3x5xi32> {
  %r = dlvm.dot %a, %b : tensor<3x4xi32>, tensor<4x5xi32>
  return %r : tensor<3x5xi32>
}

// A transposed matrix operand (what the AD emits for dz . transpose(w) and
// transpose(h) . dz) is read in place through transposed indexing maps: the
// transpose is not materialized.
// CHECK-LABEL: func.func @matmul_transposed_b
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<5x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[M:.*]] = linalg.matmul indexing_maps = [#[[MK]], #[[NK]], #[[MN]]] ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<5x4xf32>) outs(%[[F]] : tensor<3x5xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[M]]
func.func @matmul_transposed_b(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %bt = dlvm.transpose %b : tensor<5x4xf32>
  %r = dlvm.dot %a, %bt : tensor<3x4xf32>, tensor<4x5xf32>
  return %r : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @matmul_transposed_a
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf64>, %[[B:.*]]: tensor<4x5xf64>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[KM]], #[[KN]], #[[MN]]] ins(%[[A]], %[[B]] : tensor<4x3xf64>, tensor<4x5xf64>) outs(%{{.*}} : tensor<3x5xf64>)
func.func @matmul_transposed_a(%a: tensor<4x3xf64>, %b: tensor<4x5xf64>) -> tensor<3x5xf64> {
  %at = dlvm.transpose %a : tensor<4x3xf64>
  %r = dlvm.dot %at, %b : tensor<3x4xf64>, tensor<4x5xf64>
  return %r : tensor<3x5xf64>
}

// Both operands; the transpose of %b has another use, so it stays (once).
// A transposed matrix operand (what the AD emits for dz . transpose(w) and
// transpose(h) . dz) is read in place through transposed indexing maps: the
// transpose is not materialized.
// CHECK-LABEL: func.func @matmul_transposed_both
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xi32>, %[[B:.*]]: tensor<5x4xi32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[B]] : tensor<5x4xi32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[M:.*]] = linalg.matmul indexing_maps = [#[[KM]], #[[NK]], #[[MN]]] ins(%[[A]], %[[B]] : tensor<4x3xi32>, tensor<5x4xi32>)
// CHECK: return %[[M]], %[[T]]
func.func @matmul_transposed_both(%a: tensor<4x3xi32>, %b: tensor<5x4xi32>) -> (tensor<3x5xi32>, tensor<4x5xi32>) {
  %at = dlvm.transpose %a : tensor<4x3xi32>
  %bt = dlvm.transpose %b perm [1, 0] : tensor<5x4xi32>
  %r = dlvm.dot %at, %bt : tensor<3x4xi32>, tensor<4x5xi32>
  return %r, %bt : tensor<3x5xi32>, tensor<4x5xi32>
}

// Batched: only transposes of the two matrix dimensions are read in place.
// CHECK-LABEL: func.func @batch_matmul_transposed
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x3xf32>, %[[B:.*]]: tensor<2x5x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul indexing_maps = [#[[BKM]], #[[BNK]], #[[BMN]]] ins(%[[A]], %[[B]] : tensor<2x4x3xf32>, tensor<2x5x4xf32>) outs(%{{.*}} : tensor<2x3x5xf32>)
func.func @batch_matmul_transposed(%a: tensor<2x4x3xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %at = dlvm.transpose %a perm [0, 2, 1] : tensor<2x4x3xf32>
  %bt = dlvm.transpose %b perm [0, 2, 1] : tensor<2x5x4xf32>
  %r = dlvm.dot %at, %bt : tensor<2x3x4xf32>, tensor<2x4x5xf32>
  return %r : tensor<2x3x5xf32>
}

// A transpose that moves the batch dimension is materialized.
// CHECK-LABEL: func.func @batch_matmul_moved_batch
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<3x4x2xf32>) outs(%{{.*}} : tensor<2x4x3xf32>) permutation = [2, 1, 0]
// CHECK: linalg.batch_matmul ins(%[[T]], %{{.*}} : tensor<2x4x3xf32>, tensor<2x3x5xf32>)
func.func @batch_matmul_moved_batch(%a: tensor<3x4x2xf32>, %b: tensor<2x3x5xf32>) -> tensor<2x4x5xf32> {
  %at = dlvm.transpose %a : tensor<3x4x2xf32>
  %r = dlvm.dot %at, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>
  return %r : tensor<2x4x5xf32>
}

// Several batch dimensions: the untransposed operand is collapsed, then read transposed.
// CHECK-LABEL: func.func @batch2_matmul_transposed
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4x3xf32>, %[[B:.*]]: tensor<2x3x4x5xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-DAG: %[[CA:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x3xf32> into tensor<6x4x3xf32>
// CHECK-DAG: %[[CB:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
// CHECK: %[[M:.*]] = linalg.batch_matmul indexing_maps = [#[[BKM]], #[[BKN]], #[[BMN]]] ins(%[[CA]], %[[CB]] : tensor<6x4x3xf32>, tensor<6x4x5xf32>)
// CHECK: tensor.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 3, 5]
func.func @batch2_matmul_transposed(%a: tensor<2x3x4x3xf32>, %b: tensor<2x3x4x5xf32>) -> tensor<2x3x3x5xf32> {
  %at = dlvm.transpose %a perm [0, 1, 3, 2] : tensor<2x3x4x3xf32>
  %r = dlvm.dot %at, %b : tensor<2x3x3x4xf32>, tensor<2x3x4x5xf32>
  return %r : tensor<2x3x3x5xf32>
}

// transpose(A) . v is v . A, and v . transpose(A) is A . v (one transpose, two dots).
// CHECK-LABEL: func.func @vector_transposed
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>, %[[V:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<3xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.vecmat ins(%[[V]], %[[A]] : tensor<4xf32>, tensor<4x3xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK: linalg.matvec ins(%[[A]], %[[W]] : tensor<4x3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<4xf32>)
func.func @vector_transposed(%a: tensor<4x3xf32>, %v: tensor<4xf32>, %w: tensor<3xf32>) -> (tensor<3xf32>, tensor<4xf32>) {
  %at = dlvm.transpose %a : tensor<4x3xf32>
  %r = dlvm.dot %at, %v : tensor<3x4xf32>, tensor<4xf32>
  %s = dlvm.dot %w, %at : tensor<3xf32>, tensor<3x4xf32>
  return %r, %s : tensor<3xf32>, tensor<4xf32>
}

// A transpose already in the input (linalg) is left alone, even when unused.
// CHECK-LABEL: func.func @foreign_transpose
// CHECK: linalg.transpose
func.func @foreign_transpose(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%a : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  return %a : tensor<4x3xf32>
}

// dlvm.dot_general becomes a dot: attention scores read k transposed in place (the
// batch dimensions collapsed into one), a rank-3 activation times a matrix is one
// matmul, a full contraction is an inner product.
// CHECK-LABEL: func.func @dot_general_attention
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<8x16x32xf32>, tensor<8x9x32xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [2, 4, 16, 9]
func.func @dot_general_attention(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x9x32xf32>) -> tensor<2x4x16x9xf32> {
  %s = dlvm.dot_general %q, %k batch [0, 1] x [0, 1] contract [3] x [3] : tensor<2x4x16x32xf32>, tensor<2x4x9x32xf32>
  return %s : tensor<2x4x16x9xf32>
}

// CHECK-LABEL: func.func @dot_general_projection
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<80x64xf32>, tensor<64x32xf32>)
func.func @dot_general_projection(%x: tensor<8x10x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x10x32xf32> {
  %y = dlvm.dot_general %x, %w batch [] x [] contract [2] x [0] : tensor<8x10x64xf32>, tensor<64x32xf32>
  return %y : tensor<8x10x32xf32>
}

// CHECK-LABEL: func.func @dot_general_full
// CHECK: linalg.transpose
// CHECK: linalg.dot ins(%{{.*}}, %{{.*}} : tensor<15xf32>, tensor<15xf32>)
func.func @dot_general_full(%x: tensor<3x5xf32>, %w: tensor<5x3xf32>) -> tensor<f32> {
  %y = dlvm.dot_general %x, %w batch [] x [] contract [0, 1] x [1, 0] : tensor<3x5xf32>, tensor<5x3xf32>
  return %y : tensor<f32>
}
