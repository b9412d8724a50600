// Elementwise dlvm ops become one linalg.generic each; DLVM broadcasting is
// explicit in the indexing maps.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s
// The Python driver reaches the same pass as a flag.
// RUN: dlvm-opt %s --dlvm-to-linalg | FileCheck %s

// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[SCALAR2:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR1:.*]] = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<1x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<4x8xf32>, tensor<1x8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: return %[[G]]
func.func @add_broadcast(%x: tensor<4x8xf32>, %y: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %r = dlvm.add %x, %y : tensor<4x8xf32>, tensor<1x8xf32>
  return %r : tensor<4x8xf32>
}

// A rank-0 operand has the empty map.
// CHECK-LABEL: func.func @mul_scalar
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR2]], #[[ID2]], #[[ID2]]]
// CHECK: arith.mulf
func.func @mul_scalar(%s: tensor<f32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = dlvm.mul %s, %x : tensor<f32>, tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @sub_both_broadcast
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ROW]], #[[ID2]]]
// CHECK-SAME: outs(%{{.*}} : tensor<4x8xf64>)
// CHECK: arith.subf
func.func @sub_both_broadcast(%x: tensor<4x1xf64>, %y: tensor<1x8xf64>) -> tensor<4x8xf64> {
  %r = dlvm.sub %x, %y : tensor<4x1xf64>, tensor<1x8xf64>
  return %r : tensor<4x8xf64>
}

// Integer division never traps: the divisor is replaced by 1 where it is 0
// or where MIN / -1 would overflow, and x / 0 yields 0.
// CHECK-LABEL: func.func @div_i32
// CHECK: ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[Z:.*]] = arith.cmpi eq, %[[B]], %{{.*}} : i32
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[B]] : i32
// CHECK: %[[Q:.*]] = arith.divsi %[[A]], %[[SAFE]] : i32
// CHECK: %[[R:.*]] = arith.select %[[Z]], %{{.*}}, %[[Q]] : i32
// CHECK: linalg.yield %[[R]]
func.func @div_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %r = dlvm.div %x, %y : tensor<4xi32>, tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @div_f32
// CHECK: arith.divf
func.func @div_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = dlvm.div %x, %y : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// Floored modulo: fmod, then + y where the remainder's sign differs from y's.
// CHECK-LABEL: func.func @mod_f32
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[REM:.*]] = arith.remf %[[A]], %[[B]] : f32
// CHECK: %[[ADJ:.*]] = arith.addf %[[REM]], %[[B]] : f32
// CHECK: %[[NZ:.*]] = arith.cmpf one, %[[REM]]
// CHECK: %[[RN:.*]] = arith.cmpf olt, %[[REM]]
// CHECK: %[[YN:.*]] = arith.cmpf olt, %[[B]]
// CHECK: %[[DIFF:.*]] = arith.xori %[[RN]], %[[YN]] : i1
// CHECK: %[[FIX:.*]] = arith.andi %[[NZ]], %[[DIFF]] : i1
// CHECK: arith.select %[[FIX]], %[[ADJ]], %[[REM]] : f32
func.func @mod_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = dlvm.mod %x, %y : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @mod_i32
// CHECK: arith.remsi
// CHECK: arith.addi
// CHECK: arith.cmpi slt
func.func @mod_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %r = dlvm.mod %x, %y : tensor<4xi32>, tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @floor_div
// CHECK: %[[Q:.*]] = arith.divf
// CHECK: math.floor %[[Q]]
// CHECK-LABEL: func.func @floor_div_i32
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: arith.subi
// CHECK-NOT: arith.floordivsi
func.func @floor_div(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = dlvm.floor_div %x, %y : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @floor_div_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %r = dlvm.floor_div %x, %y : tensor<4xi32>, tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @trunc_div
// CHECK: %[[Q:.*]] = arith.divf
// CHECK: math.trunc %[[Q]]
func.func @trunc_div(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = dlvm.trunc_div %x, %y : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @pow
// CHECK: math.powf
func.func @pow(%x: tensor<4xf32>, %y: tensor<f32>) -> tensor<4xf32> {
  %r = dlvm.pow %x, %y : tensor<4xf32>, tensor<f32>
  return %r : tensor<4xf32>
}

// Float min/max propagate NaN; integers compare signed; i1 is a boolean.
// CHECK-LABEL: func.func @min_max
// CHECK: arith.minimumf
// CHECK: arith.maximumf
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: arith.andi
// CHECK: arith.ori
func.func @min_max(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>,
                   %b: tensor<4xi1>, %c: tensor<4xi1>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi1>) {
  %0 = dlvm.min %x, %y : tensor<4xf32>, tensor<4xf32>
  %1 = dlvm.max %x, %y : tensor<4xf32>, tensor<4xf32>
  %2 = dlvm.min %i, %j : tensor<4xi32>, tensor<4xi32>
  %3 = dlvm.max %i, %j : tensor<4xi32>, tensor<4xi32>
  %4 = dlvm.min %b, %c : tensor<4xi1>, tensor<4xi1>
  %5 = dlvm.max %b, %c : tensor<4xi1>, tensor<4xi1>
  return %0, %1, %2, %3, %4, %5
      : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi1>
}

// CHECK-LABEL: func.func @and_or_not
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: %[[ONES:.*]] = arith.constant -1 : i8
// CHECK: arith.xori %{{.*}}, %[[ONES]] : i8
func.func @and_or_not(%x: tensor<4xi8>, %y: tensor<4xi8>) -> tensor<4xi8> {
  %0 = dlvm.and %x, %y : tensor<4xi8>, tensor<4xi8>
  %1 = dlvm.or %0, %y : tensor<4xi8>, tensor<4xi8>
  %2 = dlvm.not %1 : tensor<4xi8>
  return %2 : tensor<4xi8>
}

// Floats compare ordered, except `ne` (unordered).
// CHECK-LABEL: func.func @cmp_f32
// CHECK: linalg.generic {indexing_maps = [#[[ID1]], #[[SCALAR1]], #[[ID1]]]
// CHECK-SAME: outs(%{{.*}} : tensor<4xi1>)
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oge
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf une
func.func @cmp_f32(%x: tensor<4xf32>, %y: tensor<f32>)
    -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = dlvm.cmp lt, %x, %y : tensor<4xf32>, tensor<f32>
  %1 = dlvm.cmp le, %x, %y : tensor<4xf32>, tensor<f32>
  %2 = dlvm.cmp gt, %x, %y : tensor<4xf32>, tensor<f32>
  %3 = dlvm.cmp ge, %x, %y : tensor<4xf32>, tensor<f32>
  %4 = dlvm.cmp eq, %x, %y : tensor<4xf32>, tensor<f32>
  %5 = dlvm.cmp ne, %x, %y : tensor<4xf32>, tensor<f32>
  return %0, %1, %2, %3, %4, %5
      : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// CHECK-LABEL: func.func @cmp_int
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi uge
func.func @cmp_int(%x: tensor<4xi32>, %y: tensor<4xi32>, %b: tensor<4xi1>, %c: tensor<4xi1>)
    -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = dlvm.cmp lt, %x, %y : tensor<4xi32>, tensor<4xi32>
  %1 = dlvm.cmp ge, %b, %c : tensor<4xi1>, tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[M:.*]]: tensor<4xi1>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<f32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]], #[[SCALAR1]], #[[ID1]]]
// CHECK-SAME: ins(%[[M]], %[[A]], %[[B]] : tensor<4xi1>, tensor<4xf32>, tensor<f32>)
// CHECK: ^bb0(%[[MI:.*]]: i1, %[[AI:.*]]: f32, %[[BI:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.select %[[MI]], %[[AI]], %[[BI]] : f32
func.func @select(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  %r = dlvm.select %m, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32>
  return %r : tensor<4xf32>
}
