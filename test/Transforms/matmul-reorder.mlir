// Matrix-chain reordering of single-use dot chains, by dynamic programming over multiply-adds.
// RUN: dlvm-opt %s --dlvm-matmul-reorder | FileCheck %s

// A(BC) with A 10x100, B 100x5, C 5x50 costs 75000; (AB)C costs 7500.
// CHECK-LABEL: func.func @three_matrices
// CHECK-SAME: (%[[A:.*]]: tensor<10x100xf32>, %[[B:.*]]: tensor<100x5xf32>, %[[C:.*]]: tensor<5x50xf32>)
// CHECK: %[[AB:.*]] = dlvm.dot %[[A]], %[[B]] : tensor<10x100xf32>, tensor<100x5xf32>
// CHECK: %[[ABC:.*]] = dlvm.dot %[[AB]], %[[C]] : tensor<10x5xf32>, tensor<5x50xf32>
// CHECK: return %[[ABC]]
func.func @three_matrices(%a: tensor<10x100xf32>, %b: tensor<100x5xf32>, %c: tensor<5x50xf32>) -> tensor<10x50xf32> {
  %bc = dlvm.dot %b, %c : tensor<100x5xf32>, tensor<5x50xf32>
  %r = dlvm.dot %a, %bc : tensor<10x100xf32>, tensor<100x50xf32>
  return %r : tensor<10x50xf32>
}

// The textbook chain 30x35, 35x15, 15x5, 5x10, 10x20, 20x25: optimum ((A1(A2A3))((A4A5)A6)), 15125.
// CHECK-LABEL: func.func @six_matrices
// CHECK-SAME: (%[[A1:[^:]*]]: {{[^,]*}}, %[[A2:[^:]*]]: {{[^,]*}}, %[[A3:[^:]*]]: {{[^,]*}}, %[[A4:[^:]*]]: {{[^,]*}}, %[[A5:[^:]*]]: {{[^,]*}}, %[[A6:[^:]*]]: {{[^,]*}})
// CHECK-DAG: %[[A23:.*]] = dlvm.dot %[[A2]], %[[A3]] :
// CHECK-DAG: %[[A123:.*]] = dlvm.dot %[[A1]], %[[A23]] :
// CHECK-DAG: %[[A45:.*]] = dlvm.dot %[[A4]], %[[A5]] :
// CHECK-DAG: %[[A456:.*]] = dlvm.dot %[[A45]], %[[A6]] :
// CHECK: %[[ALL:.*]] = dlvm.dot %[[A123]], %[[A456]] : tensor<30x5xf32>, tensor<5x25xf32>
// CHECK: return %[[ALL]]
func.func @six_matrices(%a1: tensor<30x35xf32>, %a2: tensor<35x15xf32>, %a3: tensor<15x5xf32>,
                        %a4: tensor<5x10xf32>, %a5: tensor<10x20xf32>, %a6: tensor<20x25xf32>) -> tensor<30x25xf32> {
  %0 = dlvm.dot %a1, %a2 : tensor<30x35xf32>, tensor<35x15xf32>
  %1 = dlvm.dot %0, %a3 : tensor<30x15xf32>, tensor<15x5xf32>
  %2 = dlvm.dot %1, %a4 : tensor<30x5xf32>, tensor<5x10xf32>
  %3 = dlvm.dot %2, %a5 : tensor<30x10xf32>, tensor<10x20xf32>
  %4 = dlvm.dot %3, %a6 : tensor<30x20xf32>, tensor<20x25xf32>
  return %4 : tensor<30x25xf32>
}

// Vectors end chains: (AB)v -> A(Bv); v(AB) -> (vA)B; v((BC)w) -> ((vB)C)w, a scalar.
// CHECK-LABEL: func.func @vectors
// CHECK-SAME: (%[[A:.*]]: tensor<64x64xf32>, %[[B:.*]]: tensor<64x64xf32>, %[[V:.*]]: tensor<64xf32>, %[[W:.*]]: tensor<8xf32>, %[[C:.*]]: tensor<64x8xf32>)
// CHECK-DAG: %[[BV:.*]] = dlvm.dot %[[B]], %[[V]] : tensor<64x64xf32>, tensor<64xf32>
// CHECK-DAG: %[[R0:.*]] = dlvm.dot %[[A]], %[[BV]] : tensor<64x64xf32>, tensor<64xf32>
// CHECK-DAG: %[[VA:.*]] = dlvm.dot %[[V]], %[[A]] : tensor<64xf32>, tensor<64x64xf32>
// CHECK-DAG: %[[R1:.*]] = dlvm.dot %[[VA]], %[[B]] : tensor<64xf32>, tensor<64x64xf32>
// CHECK-DAG: %[[VB:.*]] = dlvm.dot %[[V]], %[[B]] : tensor<64xf32>, tensor<64x64xf32>
// CHECK-DAG: %[[VBC:.*]] = dlvm.dot %[[VB]], %[[C]] : tensor<64xf32>, tensor<64x8xf32>
// CHECK-DAG: %[[R2:.*]] = dlvm.dot %[[VBC]], %[[W]] : tensor<8xf32>, tensor<8xf32>
// CHECK: return %[[R0]], %[[R1]], %[[R2]]
func.func @vectors(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %v: tensor<64xf32>, %w: tensor<8xf32>, %c: tensor<64x8xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<f32>) {
  %ab = dlvm.dot %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
  %0 = dlvm.dot %ab, %v : tensor<64x64xf32>, tensor<64xf32>
  %ab2 = dlvm.dot %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
  %1 = dlvm.dot %v, %ab2 : tensor<64xf32>, tensor<64x64xf32>
  %bc = dlvm.dot %b, %c : tensor<64x64xf32>, tensor<64x8xf32>
  %bcw = dlvm.dot %bc, %w : tensor<64x8xf32>, tensor<8xf32>
  %2 = dlvm.dot %v, %bcw : tensor<64xf32>, tensor<64xf32>
  return %0, %1, %2 : tensor<64xf32>, tensor<64xf32>, tensor<f32>
}

// An already optimal chain and a chain broken by a second use stay as written.
// CHECK-LABEL: func.func @unchanged
// CHECK-SAME: (%[[A:.*]]: tensor<10x100xf32>, %[[B:.*]]: tensor<100x5xf32>, %[[C:.*]]: tensor<5x50xf32>)
// CHECK: %[[AB:.*]] = dlvm.dot %[[A]], %[[B]]
// CHECK: %[[R0:.*]] = dlvm.dot %[[AB]], %[[C]]
// CHECK: %[[BC:.*]] = dlvm.dot %[[B]], %[[C]]
// CHECK: %[[R1:.*]] = dlvm.dot %[[A]], %[[BC]]
// CHECK: return %[[R0]], %[[R1]], %[[BC]]
func.func @unchanged(%a: tensor<10x100xf32>, %b: tensor<100x5xf32>, %c: tensor<5x50xf32>)
    -> (tensor<10x50xf32>, tensor<10x50xf32>, tensor<100x50xf32>) {
  %ab = dlvm.dot %a, %b : tensor<10x100xf32>, tensor<100x5xf32>
  %0 = dlvm.dot %ab, %c : tensor<10x5xf32>, tensor<5x50xf32>
  %bc = dlvm.dot %b, %c : tensor<100x5xf32>, tensor<5x50xf32>
  %1 = dlvm.dot %a, %bc : tensor<10x100xf32>, tensor<100x50xf32>
  return %0, %1, %bc : tensor<10x50xf32>, tensor<10x50xf32>, tensor<100x50xf32>
}

// Batched dots are not chain links.
// CHECK-LABEL: func.func @batched
// CHECK: %[[AB:.*]] = dlvm.dot %{{.*}}, %{{.*}} : tensor<2x10x100xf32>, tensor<2x100x5xf32>
// CHECK: dlvm.dot %[[AB]], %{{.*}} : tensor<2x10x5xf32>, tensor<2x5x50xf32>
func.func @batched(%a: tensor<2x10x100xf32>, %b: tensor<2x100x5xf32>, %c: tensor<2x5x50xf32>) -> tensor<2x10x50xf32> {
  %ab = dlvm.dot %a, %b : tensor<2x10x100xf32>, tensor<2x100x5xf32>
  %r = dlvm.dot %ab, %c : tensor<2x10x5xf32>, tensor<2x5x50xf32>
  return %r : tensor<2x10x50xf32>
}
