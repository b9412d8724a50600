// Unsigned integers (ui8 ... ui64): unsigned arith ops, then every type is
// signless and the function keeps its original type in dlvm.source_type.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-LABEL: func.func @ops
// CHECK-SAME: (%{{.*}}: tensor<5xi8>, %{{.*}}: tensor<5xi8>) -> (tensor<5xi8>, tensor<5xi1>, tensor<5xi8>, tensor<5xf32>, tensor<i8>, tensor<5xi8>)
// CHECK-SAME: attributes {dlvm.source_type = (tensor<5xui8>, tensor<5xui8>) -> (tensor<5xui8>, tensor<5xi1>, tensor<5xui8>, tensor<5xf32>, tensor<ui8>, tensor<5xui8>)}
// CHECK-NOT: ui8
// CHECK: arith.cmpi eq
// CHECK: arith.divui
// CHECK: arith.constant -1 : i8
// CHECK: arith.cmpi ult
// CHECK: arith.maxui
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// the identity of an unsigned min: every bit set
// CHECK: linalg.fill ins(%c-1_i8 : i8)
// CHECK: linalg.reduce
// CHECK: arith.minui
// CHECK: arith.remui
func.func @ops(%x: tensor<5xui8>, %y: tensor<5xui8>) -> (tensor<5xui8>, tensor<5xi1>, tensor<5xui8>, tensor<5xf32>, tensor<ui8>, tensor<5xui8>) {
  %d = dlvm.div %x, %y : tensor<5xui8>, tensor<5xui8>
  %c = dlvm.cmp lt, %x, %y : tensor<5xui8>, tensor<5xui8>
  %m = dlvm.max %x, %y : tensor<5xui8>, tensor<5xui8>
  %f = dlvm.cast %x to f32 : tensor<5xui8>
  %r = dlvm.reduce min %x dims [0] : tensor<5xui8>
  %o = dlvm.mod %x, %y : tensor<5xui8>, tensor<5xui8>
  return %d, %c, %m, %f, %r, %o : tensor<5xui8>, tensor<5xi1>, tensor<5xui8>, tensor<5xf32>, tensor<ui8>, tensor<5xui8>
}

// Casts: zero-extension from unsigned, saturation to [0, MAX] from floats,
// the same bits between i16 and ui16.
// CHECK-LABEL: func.func @casts
// CHECK: arith.extui %{{.*}} : i16 to i64
// CHECK: arith.fptoui
// CHECK: arith.cmpf oge
// CHECK: arith.cmpf ule
// CHECK-NOT: arith.extsi
// CHECK: arith.bitcast %{{.*}} : i16 to i16
func.func @casts(%u: tensor<3xui16>, %f: tensor<3xf32>, %s: tensor<3xi16>) -> (tensor<3xi64>, tensor<3xui32>, tensor<3xui16>) {
  %0 = dlvm.cast %u to i64 : tensor<3xui16>
  %1 = dlvm.cast %f to ui32 : tensor<3xf32>
  %2 = dlvm.cast %s to ui16 : tensor<3xi16>
  return %0, %1, %2 : tensor<3xi64>, tensor<3xui32>, tensor<3xui16>
}

// Signless programs are left as they were: no dlvm.source_type.
// CHECK-LABEL: func.func @signless
// CHECK-NOT: dlvm.source_type
// CHECK: arith.maxsi
func.func @signless(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %m = dlvm.max %x, %y : tensor<4xi32>, tensor<4xi32>
  return %m : tensor<4xi32>
}
