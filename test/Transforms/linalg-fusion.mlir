// Sums of dots fused into one dot over concatenated operands; transposes absorbed into dots.
// RUN: dlvm-opt %s --dlvm-linalg-fusion | FileCheck %s --check-prefixes=CHECK,COST
// RUN: dlvm-opt %s --dlvm-linalg-fusion=policy=always | FileCheck %s --check-prefixes=CHECK,ALWAYS

// W.x + U.h + b with short contractions (K = 2 and 3) and a 64x64 output: fusing saves traffic.
// CHECK-LABEL: func.func @rnn_gate
// CHECK-SAME: (%[[W:.*]]: tensor<64x2xf32>, %[[X:.*]]: tensor<2x64xf32>, %[[U:.*]]: tensor<64x3xf32>, %[[H:.*]]: tensor<3x64xf32>, %[[B:.*]]: tensor<1x64xf32>)
// CHECK-DAG: %[[L:.*]] = dlvm.concatenate %[[W]], %[[U]] axis 1 : tensor<64x2xf32>, tensor<64x3xf32>
// CHECK-DAG: %[[R:.*]] = dlvm.concatenate %[[X]], %[[H]] axis 0 : tensor<2x64xf32>, tensor<3x64xf32>
// CHECK: %[[D:.*]] = dlvm.dot %[[L]], %[[R]] : tensor<64x5xf32>, tensor<5x64xf32>
// CHECK: %[[S:.*]] = dlvm.add %[[D]], %[[B]] : tensor<64x64xf32>, tensor<1x64xf32>
// CHECK: return %[[S]]
func.func @rnn_gate(%w: tensor<64x2xf32>, %x: tensor<2x64xf32>, %u: tensor<64x3xf32>, %h: tensor<3x64xf32>,
                    %b: tensor<1x64xf32>) -> tensor<64x64xf32> {
  %wx = dlvm.dot %w, %x : tensor<64x2xf32>, tensor<2x64xf32>
  %uh = dlvm.dot %u, %h : tensor<64x3xf32>, tensor<3x64xf32>
  %s = dlvm.add %wx, %uh : tensor<64x64xf32>, tensor<64x64xf32>
  %r = dlvm.add %s, %b : tensor<64x64xf32>, tensor<1x64xf32>
  return %r : tensor<64x64xf32>
}

// Long contractions into a small output: copying the operands costs more than it saves.
// CHECK-LABEL: func.func @wide_contraction
// COST: dlvm.dot
// COST: dlvm.dot
// COST: dlvm.add
// ALWAYS: %[[L:.*]] = dlvm.concatenate %{{.*}}, %{{.*}} axis 1 : tensor<4x256xf32>, tensor<4x256xf32>
// ALWAYS: %[[R:.*]] = dlvm.concatenate %{{.*}}, %{{.*}} axis 0 : tensor<256x4xf32>, tensor<256x4xf32>
// ALWAYS: %[[D:.*]] = dlvm.dot %[[L]], %[[R]] : tensor<4x512xf32>, tensor<512x4xf32>
// ALWAYS: return %[[D]]
func.func @wide_contraction(%w: tensor<4x256xf32>, %x: tensor<256x4xf32>, %u: tensor<4x256xf32>, %h: tensor<256x4xf32>)
    -> tensor<4x4xf32> {
  %wx = dlvm.dot %w, %x : tensor<4x256xf32>, tensor<256x4xf32>
  %uh = dlvm.dot %u, %h : tensor<4x256xf32>, tensor<256x4xf32>
  %r = dlvm.add %wx, %uh : tensor<4x4xf32>, tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// Three matrix-vector terms with the bias in the middle of the sum (K = 1: cheaper fused);
// the terms are taken in the order of the add tree.
// CHECK-LABEL: func.func @three_terms
// CHECK-SAME: (%[[A:.*]]: tensor<512x1xf32>, %[[P:.*]]: tensor<1xf32>, %[[B:.*]]: tensor<512x1xf32>, %[[Q:.*]]: tensor<1xf32>, %[[C:.*]]: tensor<512x1xf32>, %[[R:.*]]: tensor<1xf32>, %[[BIAS:.*]]: tensor<512xf32>)
// CHECK-DAG: %[[L:.*]] = dlvm.concatenate %[[B]], %[[A]], %[[C]] axis 1 : tensor<512x1xf32>, tensor<512x1xf32>, tensor<512x1xf32>
// CHECK-DAG: %[[V:.*]] = dlvm.concatenate %[[Q]], %[[P]], %[[R]] axis 0 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
// CHECK: %[[D:.*]] = dlvm.dot %[[L]], %[[V]] : tensor<512x3xf32>, tensor<3xf32>
// CHECK: %[[S:.*]] = dlvm.add %[[D]], %[[BIAS]]
// CHECK: return %[[S]]
func.func @three_terms(%a: tensor<512x1xf32>, %p: tensor<1xf32>, %b: tensor<512x1xf32>, %q: tensor<1xf32>,
                       %c: tensor<512x1xf32>, %r: tensor<1xf32>, %bias: tensor<512xf32>) -> tensor<512xf32> {
  %ap = dlvm.dot %a, %p : tensor<512x1xf32>, tensor<1xf32>
  %bq = dlvm.dot %b, %q : tensor<512x1xf32>, tensor<1xf32>
  %cr = dlvm.dot %c, %r : tensor<512x1xf32>, tensor<1xf32>
  %0 = dlvm.add %ap, %bias : tensor<512xf32>, tensor<512xf32>
  %1 = dlvm.add %bq, %0 : tensor<512xf32>, tensor<512xf32>
  %2 = dlvm.add %1, %cr : tensor<512xf32>, tensor<512xf32>
  return %2 : tensor<512xf32>
}

// Transposed weights: the concatenation of transposes becomes a transpose of a concatenation.
// CHECK-LABEL: func.func @transposed_weights
// CHECK-SAME: (%[[W:.*]]: tensor<2x64xf32>, %[[X:.*]]: tensor<2x64xf32>, %[[U:.*]]: tensor<3x64xf32>, %[[H:.*]]: tensor<3x64xf32>)
// CHECK-DAG: %[[WU:.*]] = dlvm.concatenate %[[W]], %[[U]] axis 0 : tensor<2x64xf32>, tensor<3x64xf32>
// CHECK-DAG: %[[T:.*]] = dlvm.transpose %[[WU]] : tensor<5x64xf32>
// CHECK-DAG: %[[XH:.*]] = dlvm.concatenate %[[X]], %[[H]] axis 0
// CHECK: %[[D:.*]] = dlvm.dot %[[T]], %[[XH]] : tensor<64x5xf32>, tensor<5x64xf32>
// CHECK: return %[[D]]
func.func @transposed_weights(%w: tensor<2x64xf32>, %x: tensor<2x64xf32>, %u: tensor<3x64xf32>, %h: tensor<3x64xf32>)
    -> tensor<64x64xf32> {
  %wt = dlvm.transpose %w : tensor<2x64xf32>
  %ut = dlvm.transpose %u : tensor<3x64xf32>
  %wx = dlvm.dot %wt, %x : tensor<64x2xf32>, tensor<2x64xf32>
  %uh = dlvm.dot %ut, %h : tensor<64x3xf32>, tensor<3x64xf32>
  %r = dlvm.add %wx, %uh : tensor<64x64xf32>, tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// A transposed matrix times a vector needs no transpose; a dot with another use is not fused.
// CHECK-LABEL: func.func @absorbed
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[V:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK-NOT: dlvm.transpose
// CHECK-DAG: %[[R0:.*]] = dlvm.dot %[[V]], %[[A]] : tensor<3xf32>, tensor<3x4xf32>
// CHECK-DAG: %[[R1:.*]] = dlvm.dot %[[A]], %[[W]] : tensor<3x4xf32>, tensor<4xf32>
// CHECK: %[[S:.*]] = dlvm.add %[[R0]], %[[R0]]
// CHECK: return %[[S]], %[[R1]], %[[R0]]
func.func @absorbed(%a: tensor<3x4xf32>, %v: tensor<3xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) {
  %t = dlvm.transpose %a : tensor<3x4xf32>
  %0 = dlvm.dot %t, %v : tensor<4x3xf32>, tensor<3xf32>
  %1 = dlvm.dot %w, %t : tensor<4xf32>, tensor<4x3xf32>
  %2 = dlvm.add %0, %0 : tensor<4xf32>, tensor<4xf32>
  return %2, %1, %0 : tensor<4xf32>, tensor<3xf32>, tensor<4xf32>
}

// i1 dots sum with OR while add is XOR: a sum of i1 dots is never fused (dlvm-fuzz).
// CHECK-LABEL: func.func @boolean_dots
// CHECK-NOT: dlvm.concatenate
// CHECK: return
func.func @boolean_dots(%w: tensor<64x2xi1>, %x: tensor<2x64xi1>, %u: tensor<64x3xi1>, %h: tensor<3x64xi1>) -> tensor<64x64xi1> {
  %wx = dlvm.dot %w, %x : tensor<64x2xi1>, tensor<2x64xi1>
  %uh = dlvm.dot %u, %h : tensor<64x3xi1>, tensor<3x64xi1>
  %r = dlvm.add %wx, %uh : tensor<64x64xi1>, tensor<64x64xi1>
  return %r : tensor<64x64xi1>
}
