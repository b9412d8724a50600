// dlvm-check-bounds: tensor accesses at run-time indices run only when every
// index is in bounds; otherwise the check's number goes to the error global
// and the access is skipped (an extract yields 0, an insert keeps the tensor).
// RUN: dlvm-opt %s --dlvm-check-bounds | FileCheck %s

// CHECK: module attributes {dlvm.bounds_checks = ["'tensor.extract' at {{.*}}check-bounds.mlir:[[@LINE+16]]:8", "'tensor.insert' at {{.*}}check-bounds.mlir:[[@LINE+33]]:10", "'tensor.extract' at {{.*}}check-bounds.mlir:[[@LINE+54]]:8", "'tensor.extract_slice' at {{.*}}check-bounds.mlir:{{[0-9]+}}:8"]}
// CHECK: memref.global @_mlir___dlvm_error : memref<i64> = dense<0>

// CHECK-LABEL: func.func @extract
// CHECK-SAME: (%[[T:.*]]: tensor<10xf32>, %[[I:.*]]: index)
// CHECK: %[[N:.*]] = arith.constant 10 : index
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[I]], %[[N]] : index
// CHECK: %[[R:.*]] = scf.if %[[OK]] -> (f32) {
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[T]][%[[I]]] : tensor<10xf32>
// CHECK-NEXT: scf.yield %[[V]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[G:.*]] = memref.get_global @_mlir___dlvm_error : memref<i64>
// CHECK-NEXT: %[[ID:.*]] = arith.constant 1 : i64
// CHECK-NEXT: memref.store %[[ID]], %[[G]][] : memref<i64>
// CHECK: return %[[R]] : f32
func.func @extract(%t: tensor<10xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<10xf32>
  return %v : f32
}

// Constant indices in range and accesses inside linalg bodies are not checked.
// CHECK-LABEL: func.func @insert_in_loop
// CHECK: scf.for
// CHECK: %[[D:.*]] = tensor.dim
// CHECK: arith.cmpi ult
// CHECK: arith.andi
// CHECK: scf.if
// CHECK: tensor.insert
// CHECK: arith.constant 2 : i64
func.func @insert_in_loop(%t: tensor<4x?xf32>, %n: index, %v: f32) -> tensor<4x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %t) -> tensor<4x?xf32> {
    %u = tensor.insert %v into %acc[%c1, %j] : tensor<4x?xf32>
    scf.yield %u : tensor<4x?xf32>
  }
  return %r : tensor<4x?xf32>
}

// CHECK-LABEL: func.func @constant_index
// CHECK-NOT: scf.if
// CHECK: return
func.func @constant_index(%t: tensor<10xf32>) -> f32 {
  %c3 = arith.constant 3 : index
  %v = tensor.extract %t[%c3] : tensor<10xf32>
  return %v : f32
}

// A constant index out of range is checked (found by dlvm-fuzz: 4294967296).
// CHECK-LABEL: func.func @constant_out_of_range
// CHECK: scf.if
// CHECK: arith.constant 3 : i64
func.func @constant_out_of_range(%t: tensor<10xf32>) -> f32 {
  %big = arith.constant 4294967296 : index
  %v = tensor.extract %t[%big] : tensor<10xf32>
  return %v : f32
}

// A slice at a run-time offset with a negative stride: its first and last index
// along each dimension are checked (offset and offset + (size - 1) * stride).
// CHECK-LABEL: func.func @backwards
// CHECK: %[[LAST:.*]] = arith.addi
// CHECK: arith.cmpi ult, %[[LAST]]
// CHECK: scf.if %{{.*}} -> (tensor<3xi1>) {
// CHECK-NEXT: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [1, 3] [1, -1]
// CHECK: } else {
// CHECK: memref.store
// CHECK: tensor.empty() : tensor<3xi1>
func.func @backwards(%t: tensor<4x3xi1>, %i: index) -> tensor<3xi1> {
  %s = tensor.extract_slice %t[%i, 0] [1, 3] [1, -1] : tensor<4x3xi1> to tensor<3xi1>
  return %s : tensor<3xi1>
}
