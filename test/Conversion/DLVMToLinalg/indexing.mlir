// dynamic_slice / dynamic_update_slice clamp their starts as XLA does; iota counts with
// linalg.index; argmax/argmin reduce (value, index) pairs, ties to the first, NaN wins.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-LABEL: func.func @window
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>, %[[T:.*]]: tensor<i32>, %[[U:.*]]: tensor<1x128xf32>)
// CHECK: %[[E:.*]] = tensor.extract %[[T]][] : tensor<i32>
// CHECK: %[[I:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK: %[[HI:.*]] = arith.constant 63 : index
// CHECK: %[[M:.*]] = arith.minsi %[[I]], %[[HI]] : index
// CHECK: %[[S:.*]] = arith.maxsi %[[M]], %{{.*}} : index
// CHECK: tensor.extract_slice %[[X]][%[[S]], %{{.*}}] [1, 128] [1, 1] : tensor<64x128xf32> to tensor<1x128xf32>
// CHECK: tensor.insert_slice %[[U]] into %[[X]][%{{.*}}, %{{.*}}] [1, 128] [1, 1] : tensor<1x128xf32> into tensor<64x128xf32>
func.func @window(%x: tensor<64x128xf32>, %t: tensor<i32>, %u: tensor<1x128xf32>) -> (tensor<1x128xf32>, tensor<64x128xf32>) {
  %s = dlvm.dynamic_slice %x at [%t, %t] sizes [1, 128] : tensor<64x128xf32>, tensor<i32>, tensor<i32>
  %y = dlvm.dynamic_update_slice %x, %u at [%t, %t] : tensor<64x128xf32>, tensor<1x128xf32>, tensor<i32>, tensor<i32>
  return %s, %y : tensor<1x128xf32>, tensor<64x128xf32>
}

// CHECK-LABEL: func.func @iota
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[W:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: arith.sitofp %[[W]] : i64 to f32
func.func @iota() -> tensor<4x8xf32> {
  %r = dlvm.iota dim 1 : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @argmax
// CHECK: %[[WORST:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: ^bb0(%[[V:.*]]: f32, %[[BEST:.*]]: f32, %[[AT:.*]]: i32):
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[BEST]] : f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK: %[[NUM:.*]] = arith.cmpf ord, %[[BEST]], %[[BEST]] : f32
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: linalg.yield
func.func @argmax(%x: tensor<4x8xf32>) -> tensor<4xi32> {
  %r = dlvm.argmax %x axis 1 : tensor<4x8xf32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// gather: one linalg.generic over the result, reading the start from the indices
// (clamped) in its body. scatter: a loop nest over the updates carrying the result.
// CHECK-LABEL: func.func @embed
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[W:.*]] = linalg.index 1 : index
// CHECK: %[[T:.*]] = tensor.extract %{{.*}}[%[[B]]] : tensor<8xi32>
// CHECK: arith.minsi
// CHECK: %[[S:.*]] = arith.maxsi
// CHECK: %[[C:.*]] = arith.addi %{{.*}}, %[[W]] : index
// CHECK: tensor.extract %{{.*}}[%[[S]], %[[C]]] : tensor<100x16xf32>
// CHECK-LABEL: func.func @unembed
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: %[[U:.*]] = tensor.extract %{{.*}} : tensor<8x16xf32>
// CHECK: %[[OLD:.*]] = tensor.extract %{{.*}} : tensor<100x16xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[U]] : f32
// CHECK: tensor.insert %[[NEW]]
func.func @embed(%table: tensor<100x16xf32>, %tokens: tensor<8xi32>) -> tensor<8x16xf32> {
  %e = dlvm.gather %table[%tokens] offset_dims [1] collapsed_slice_dims [0] start_index_map [0] index_vector_dim 1 slice_sizes [1, 16] : tensor<100x16xf32>, tensor<8xi32>
  return %e : tensor<8x16xf32>
}
func.func @unembed(%table: tensor<100x16xf32>, %tokens: tensor<8xi32>, %g: tensor<8x16xf32>) -> tensor<100x16xf32> {
  %t = dlvm.scatter add %table[%tokens], %g update_window_dims [1] inserted_window_dims [0] scatter_dims_to_operand_dims [0] index_vector_dim 1 : tensor<100x16xf32>, tensor<8xi32>, tensor<8x16xf32>
  return %t : tensor<100x16xf32>
}

// dlvm.sort: a merge sort of positions (passes, rows, runs, merge steps), then each
// operand read at the sorted positions; the dimension is moved last and the others
// collapsed into rows.
// CHECK-LABEL: func.func @sort
// CHECK: linalg.transpose
// CHECK: linalg.index 1 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<5x7xindex>)
// CHECK: scf.for {{.*}} -> (index, index, tensor<5x7xindex>)
// CHECK: arith.cmpf olt
// CHECK: tensor.insert
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<5x7xf32>
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<5x7xi32>
func.func @sort(%x: tensor<7x5xf32>, %y: tensor<7x5xi32>) -> (tensor<7x5xf32>, tensor<7x5xi32>) {
  %a, %b = dlvm.sort %x, %y dim 0 : tensor<7x5xf32>, tensor<7x5xi32>
  return %a, %b : tensor<7x5xf32>, tensor<7x5xi32>
}

// dlvm.top_k: the first k positions of a descending sort (NaN first)
// CHECK-LABEL: func.func @top_k
// CHECK: arith.cmpf ogt
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [4, 3] [1, 1] : tensor<4x10xindex> to tensor<4x3xindex>
// CHECK: arith.index_cast %{{.*}} : index to i32
func.func @top_k(%x: tensor<4x10xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %v, %i = dlvm.top_k %x k 3 : tensor<4x10xf32>
  return %v, %i : tensor<4x3xf32>, tensor<4x3xi32>
}
