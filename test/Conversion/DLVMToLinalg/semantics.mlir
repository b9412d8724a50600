// The decided semantics in the lowering (docs/dialect-rationale.md, "Semantics decided"):
// saturating float-to-int casts, integer division that never traps, i1 ordered false < true.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// fptosi is poison out of range: the result is selected over it, MAX for x >= 2^(w-1),
// MIN for x <= -2^(w-1), 0 for NaN.
// CHECK-LABEL: func.func @cast_saturates
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: i8):
// CHECK-DAG: %[[HI:.*]] = arith.constant 1.280000e+02 : f32
// CHECK-DAG: %[[LO:.*]] = arith.constant -1.280000e+02 : f32
// CHECK: %[[R:.*]] = arith.fptosi %[[X]] : f32 to i8
// CHECK: %[[MAX:.*]] = arith.constant 127 : i8
// CHECK: %[[GE:.*]] = arith.cmpf oge, %[[X]], %[[HI]] : f32
// CHECK: %[[R1:.*]] = arith.select %[[GE]], %[[MAX]], %[[R]] : i8
// CHECK: %[[MIN:.*]] = arith.constant -128 : i8
// CHECK: %[[LE:.*]] = arith.cmpf ole, %[[X]], %[[LO]] : f32
// CHECK: %[[R2:.*]] = arith.select %[[LE]], %[[MIN]], %[[R1]] : i8
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[R3:.*]] = arith.select %[[NAN]], %[[ZERO]], %[[R2]] : i8
// CHECK: linalg.yield %[[R3]] : i8
func.func @cast_saturates(%x: tensor<4xf32>) -> tensor<4xi8> {
  %r = dlvm.cast %x to i8 : tensor<4xf32>
  return %r : tensor<4xi8>
}

// f16 cannot hold 2^31: the bounds round to +-inf, so only +-inf saturate (every finite
// f16 fits in i32).
// CHECK-LABEL: func.func @cast_f16_i32
// CHECK: arith.constant 0x7C00 : f16
// CHECK: arith.constant 0xFC00 : f16
// CHECK: arith.fptosi %{{.*}} : f16 to i32
// CHECK: arith.constant 2147483647 : i32
func.func @cast_f16_i32(%x: tensor<4xf16>) -> tensor<4xi32> {
  %r = dlvm.cast %x to i32 : tensor<4xf16>
  return %r : tensor<4xi32>
}

// x / 0 = -1 and MIN / -1 = MIN: divsi by a safe divisor (1 where y == 0 or the pair is
// (MIN, -1)), then -1 where y == 0. mod: x where y == 0.
// CHECK-LABEL: func.func @division
// CHECK: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[Y0:.*]] = arith.cmpi eq, %[[Y]], %{{.*}} : i32
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[Y]] : i32
// CHECK: %[[Q:.*]] = arith.divsi %[[X]], %[[SAFE]] : i32
// CHECK: %[[M1:.*]] = arith.constant -1 : i32
// CHECK: %[[R:.*]] = arith.select %[[Y0]], %[[M1]], %[[Q]] : i32
// CHECK: linalg.yield %[[R]] : i32
// CHECK: ^bb0(%[[X2:.*]]: i32, %[[Y2:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[Z2:.*]] = arith.cmpi eq, %[[Y2]], %{{.*}} : i32
// CHECK: %[[SAFE2:.*]] = arith.select %{{.*}}, %{{.*}}, %[[Y2]] : i32
// CHECK: arith.remsi %[[X2]], %[[SAFE2]] : i32
// CHECK: %[[F:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: %[[R2:.*]] = arith.select %[[Z2]], %[[X2]], %[[F]] : i32
// CHECK: linalg.yield %[[R2]] : i32
func.func @division(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %q = dlvm.div %x, %y : tensor<4xi32>, tensor<4xi32>
  %r = dlvm.mod %x, %y : tensor<4xi32>, tensor<4xi32>
  return %q, %r : tensor<4xi32>, tensor<4xi32>
}

// i1: unsigned predicates (false < true); max is or; x / y is x | !y.
// CHECK-LABEL: func.func @bool_order
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : i1
// CHECK: ^bb0(%[[X:.*]]: i1, %[[Y:.*]]: i1, %{{.*}}: i1):
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: %[[NY:.*]] = arith.xori %[[Y]], %[[T]] : i1
// CHECK: %[[Q:.*]] = arith.ori %[[X]], %[[NY]] : i1
// CHECK: linalg.yield %[[Q]] : i1
// CHECK: ^bb0(%[[X3:.*]]: i1, %[[Y3:.*]]: i1, %{{.*}}: i1):
// CHECK: %[[M:.*]] = arith.ori %[[X3]], %[[Y3]] : i1
// CHECK: linalg.yield %[[M]] : i1
func.func @bool_order(%x: tensor<4xi1>, %y: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %c = dlvm.cmp ge, %x, %y : tensor<4xi1>, tensor<4xi1>
  %q = dlvm.div %x, %y : tensor<4xi1>, tensor<4xi1>
  %m = dlvm.max %x, %y : tensor<4xi1>, tensor<4xi1>
  return %c, %q, %m : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}
