// Inputs whose upstream parser or verifier would fail an assertion are
// rejected with a located error before MLIR sees them (dlvm_mlir/parsing.py).
// RUN: not dlvm-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: parsing.mlir:[[@LINE+2]]:8: error: 'tensor.collapse_shape' reassociation index -1 is out of range
func.func @collapse_minus_one(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %y = tensor.collapse_shape %x [[0, -1]] : tensor<4x4xf32> into tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// CHECK: parsing.mlir:[[@LINE+2]]:8: error: 'tensor.expand_shape' reassociation index 9223372036854775807 is out of range
func.func @expand_huge(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  %y = tensor.expand_shape %x [[0, 9223372036854775807]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// CHECK: parsing.mlir:[[@LINE+2]]:9: error: 'memref.collapse_shape' reassociation index -3 is out of range
func.func @collapse_generic(%x: memref<4x4xf32>) -> memref<16xf32> {
  %y = "memref.collapse_shape"(%x) <{reassociation = [[0, -3]]}> : (memref<4x4xf32>) -> memref<16xf32>
  return %y : memref<16xf32>
}

// -----

// CHECK: parsing.mlir:[[@LINE+3]]:8: error: 'tensor.pad' static padding 9223372036854775807 is out of range [0, 2^40)
func.func @pad_huge(%x: tensor<4x4xf32>, %n: index) -> tensor<?x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %y = tensor.pad %x low[%n, 0] high[9223372036854775807, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<4x4xf32> to tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// CHECK: parsing.mlir:[[@LINE+3]]:9: error: 'tensor.pad' static padding -1 is out of range [0, 2^40)
func.func @pad_negative_generic(%x: tensor<4x4xf32>) -> tensor<3x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %y = "tensor.pad"(%x, %c0) <{static_low = array<i64: -1, 0>, static_high = array<i64: 0, 0>, operandSegmentSizes = array<i32: 1, 0, 0>}> ({
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  }) : (tensor<4x4xf32>, f32) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// MLIR's "dynamic" marker (-2^63) written as a literal amount (dlvm-fuzz seed 1616).
// CHECK: parsing.mlir:[[@LINE+3]]:8: error: 'tensor.pad' static padding -9223372036854775808 is out of range [0, 2^40)
func.func @pad_marker_literal(%x: tensor<4x4xf32>, %n: index) -> tensor<?x5xf32> {
  %c0 = arith.constant 0.0 : f32
  %y = tensor.pad %x low[%n, -9223372036854775808] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<4x4xf32> to tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// CHECK: parsing.mlir:[[@LINE+3]]:9: error: 'tensor.pad' has 1 + 0 dynamic padding amounts but 0 + 0 padding operands
func.func @pad_marker_without_operand(%x: tensor<4x4xf32>) -> tensor<?x5xf32> {
  %c0 = arith.constant 0.0 : f32
  %y = "tensor.pad"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>, static_low = array<i64: -9223372036854775808, 0>, static_high = array<i64: 2, 1>}> ({
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  }) : (tensor<4x4xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// Dynamic entries, comments and valid values pass.
// CHECK: func.func @fine
// CHECK: tensor.pad %{{.*}} low[%{{.*}}, 0] high[2, 1]
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]]
func.func @fine(%x: tensor<4x4xf32>, %n: index) -> (tensor<?x5xf32>, tensor<16xf32>) {
  // tensor.pad low[-1] and tensor.collapse_shape [[-1]] in a comment
  %c0 = arith.constant 0.0 : f32
  %y = tensor.pad %x low[%n, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c0 : f32
  } : tensor<4x4xf32> to tensor<?x5xf32>
  %z = tensor.collapse_shape %x [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  return %y, %z : tensor<?x5xf32>, tensor<16xf32>
}
