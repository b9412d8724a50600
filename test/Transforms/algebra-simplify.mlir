// DLVM's AlgebraSimplification rules and the AD cleanup rules.
// Default: exact, signed-zero and refining rules; fast-math adds the unsafe ones; strict keeps exact ones only.
// RUN: dlvm-opt %s --dlvm-algebra-simplify | FileCheck %s --check-prefixes=CHECK,SAFE
// RUN: dlvm-opt %s --dlvm-algebra-simplify=fast-math | FileCheck %s --check-prefixes=CHECK,FAST
// RUN: dlvm-opt %s --dlvm-algebra-simplify=strict | FileCheck %s --check-prefix=STRICT
// RUN: not dlvm-opt %s --dlvm-algebra-simplify="strict fast-math" 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: options 'strict' and 'fast-math' exclude each other

// x + 0.0 -> x keeps the broadcast the zero caused; 0.0 + x likewise; -0.0 is exact.
// CHECK-LABEL: func.func @add_zeros
// CHECK-SAME: (%[[X:.*]]: tensor<1x4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK: %[[B:.*]] = dlvm.broadcast_to %[[X]] to [3, 4] : tensor<1x4xf32>
// CHECK: return %[[B]], %[[Y]], %[[Y]]
// STRICT-LABEL: func.func @add_zeros
// STRICT-SAME: (%[[X:.*]]: tensor<1x4xf32>, %[[Y:.*]]: tensor<4xf32>)
// STRICT: %[[A:.*]] = dlvm.add
// STRICT: %[[C:.*]] = dlvm.add
// STRICT: return %[[A]], %[[C]], %[[Y]]
func.func @add_zeros(%x: tensor<1x4xf32>, %y: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %z = dlvm.constant dense<0.0> : tensor<3x4xf32>
  %0 = dlvm.add %x, %z : tensor<1x4xf32>, tensor<3x4xf32>
  %s = dlvm.constant dense<0.0> : tensor<f32>
  %1 = dlvm.add %s, %y : tensor<f32>, tensor<4xf32>
  %n = dlvm.constant dense<-0.0> : tensor<4xf32>
  %2 = dlvm.add %n, %y : tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2 : tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @subtract_zeros
// CHECK-SAME: (%[[X:.*]]: tensor<f32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK-DAG: %[[B:.*]] = dlvm.broadcast_to %[[X]] to [2, 3] : tensor<f32>
// CHECK-DAG: %[[N:.*]] = dlvm.neg %[[Y]] : tensor<4xi32>
// CHECK: return %[[B]], %[[N]]
func.func @subtract_zeros(%x: tensor<f32>, %y: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  %z = dlvm.constant dense<0.0> : tensor<2x3xf32>
  %0 = dlvm.sub %x, %z : tensor<f32>, tensor<2x3xf32>
  %i = dlvm.constant dense<0> : tensor<4xi32>
  %1 = dlvm.sub %i, %y : tensor<4xi32>, tensor<4xi32>
  return %0, %1 : tensor<2x3xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @multiplicative_identities
// CHECK-SAME: (%[[X:.*]]: tensor<4x1xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[ONE:.*]] = dlvm.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[B0:.*]] = dlvm.broadcast_to %[[X]] to [4, 3] : tensor<4x1xf32>
// CHECK-DAG: %[[B1:.*]] = dlvm.broadcast_to %[[X]] to [4, 3] : tensor<4x1xf32>
// CHECK-DAG: %[[B2:.*]] = dlvm.broadcast_to %[[X]] to [4, 3] : tensor<4x1xf32>
// CHECK-DAG: %[[N:.*]] = dlvm.neg %[[Y]] : tensor<4xf32>
// CHECK: return %[[B0]], %[[B1]], %[[B2]], %[[N]], %[[ONE]]
func.func @multiplicative_identities(%x: tensor<4x1xf32>, %y: tensor<4xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = dlvm.constant dense<1.0> : tensor<4x3xf32>
  %0 = dlvm.mul %one, %x : tensor<4x3xf32>, tensor<4x1xf32>
  %1 = dlvm.div %x, %one : tensor<4x1xf32>, tensor<4x3xf32>
  %2 = dlvm.pow %x, %one : tensor<4x1xf32>, tensor<4x3xf32>
  %m = dlvm.constant dense<-1.0> : tensor<f32>
  %3 = dlvm.mul %y, %m : tensor<4xf32>, tensor<f32>
  %z = dlvm.constant dense<0.0> : tensor<f32>
  %4 = dlvm.pow %y, %z : tensor<4xf32>, tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// x * 0, x - x and x / x change results on inf/NaN: fast-math only; integers are exact.
// CHECK-LABEL: func.func @annihilators
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-DAG: %[[IZERO:.*]] = dlvm.constant dense<0> : tensor<4xi32>
// SAFE-DAG: %[[M:.*]] = dlvm.mul %[[X]]
// SAFE-DAG: %[[S:.*]] = dlvm.sub %[[X]], %[[X]]
// SAFE-DAG: %[[D:.*]] = dlvm.div %[[X]], %[[X]]
// SAFE: return %[[M]], %[[S]], %[[D]], %[[IZERO]], %[[IZERO]]
// FAST-DAG: %[[ZERO:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4xf32>
// FAST-DAG: %[[ONE:.*]] = dlvm.constant dense<1.000000e+00> : tensor<4xf32>
// FAST: return %[[ZERO]], %[[ZERO]], %[[ONE]], %[[IZERO]], %[[IZERO]]
func.func @annihilators(%x: tensor<4xf32>, %i: tensor<4xi32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %z = dlvm.constant dense<0.0> : tensor<f32>
  %0 = dlvm.mul %x, %z : tensor<4xf32>, tensor<f32>
  %1 = dlvm.sub %x, %x : tensor<4xf32>, tensor<4xf32>
  %2 = dlvm.div %x, %x : tensor<4xf32>, tensor<4xf32>
  %iz = dlvm.constant dense<0> : tensor<i32>
  %3 = dlvm.mul %iz, %i : tensor<i32>, tensor<4xi32>
  %4 = dlvm.sub %i, %i : tensor<4xi32>, tensor<4xi32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @powers
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[R:.*]]: tensor<1x4xf32>)
// CHECK-DAG: %[[ONE:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[INV:.*]] = dlvm.div %[[ONE]], %[[X]] : tensor<f32>, tensor<4xf32>
// CHECK-DAG: %[[SQ:.*]] = dlvm.mul %[[R]], %[[R]] : tensor<1x4xf32>, tensor<1x4xf32>
// CHECK-DAG: %[[B:.*]] = dlvm.broadcast_to %[[SQ]] to [3, 4] : tensor<1x4xf32>
// CHECK: return %[[INV]], %[[B]]
// STRICT-LABEL: func.func @powers
// STRICT-COUNT-2: dlvm.pow
func.func @powers(%x: tensor<4xf32>, %r: tensor<1x4xf32>) -> (tensor<4xf32>, tensor<3x4xf32>) {
  %m = dlvm.constant dense<-1.0> : tensor<f32>
  %0 = dlvm.pow %x, %m : tensor<4xf32>, tensor<f32>
  %two = dlvm.constant dense<2.0> : tensor<3x4xf32>
  %1 = dlvm.pow %r, %two : tensor<1x4xf32>, tensor<3x4xf32>
  return %0, %1 : tensor<4xf32>, tensor<3x4xf32>
}

// CHECK-LABEL: func.func @hyperbolic
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[S:.*]] = dlvm.sinh %[[X]]
// CHECK-DAG: %[[C:.*]] = dlvm.cosh %[[X]]
// CHECK: return %[[S]], %[[C]]
func.func @hyperbolic(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = dlvm.exp %x : tensor<4xf32>
  %n = dlvm.neg %x : tensor<4xf32>
  %en = dlvm.exp %n : tensor<4xf32>
  %d = dlvm.sub %e, %en : tensor<4xf32>, tensor<4xf32>
  %s = dlvm.add %en, %e : tensor<4xf32>, tensor<4xf32>
  %two = dlvm.constant dense<2.0> : tensor<f32>
  %half = dlvm.constant dense<0.5> : tensor<f32>
  %0 = dlvm.div %d, %two : tensor<4xf32>, tensor<f32>
  %1 = dlvm.mul %half, %s : tensor<f32>, tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// The trigonometric and hyperbolic rules at 0 come from the dialect's folders.
// CHECK-LABEL: func.func @functions_at_zero
// CHECK-DAG: %[[ZERO:.*]] = dlvm.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ONE:.*]] = dlvm.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: return %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ONE]], %[[ONE]]
func.func @functions_at_zero() -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %z = dlvm.constant dense<0.0> : tensor<8xf32>
  %0 = dlvm.sin %z : tensor<8xf32>
  %1 = dlvm.sinh %z : tensor<8xf32>
  %2 = dlvm.tan %z : tensor<8xf32>
  %3 = dlvm.tanh %z : tensor<8xf32>
  %4 = dlvm.cos %z : tensor<8xf32>
  %5 = dlvm.cosh %z : tensor<8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Exponentials and powers: fast-math only.
// CHECK-LABEL: func.func @exponentials
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>)
// SAFE-COUNT-2: dlvm.pow
// SAFE: return
// FAST-DAG: %[[XY:.*]] = dlvm.mul %[[X]], %[[Y]]
// FAST-DAG: %[[E0:.*]] = dlvm.exp %[[XY]]
// FAST-DAG: %[[XMY:.*]] = dlvm.sub %[[X]], %[[Y]]
// FAST-DAG: %[[E1:.*]] = dlvm.exp %[[XMY]]
// FAST-DAG: %[[NY:.*]] = dlvm.neg %[[Y]]
// FAST-DAG: %[[ENY:.*]] = dlvm.exp %[[NY]]
// FAST-DAG: %[[Q:.*]] = dlvm.mul %[[Z]], %[[ENY]]
// FAST-DAG: %[[NZ:.*]] = dlvm.neg %[[Z]]
// FAST-DAG: %[[P:.*]] = dlvm.pow %[[Y]], %[[NZ]]
// FAST-DAG: %[[R:.*]] = dlvm.mul %[[X]], %[[P]]
// FAST: return %[[E0]], %[[E1]], %[[Q]], %[[R]]
func.func @exponentials(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %ex = dlvm.exp %x : tensor<4xf32>
  %ey = dlvm.exp %y : tensor<4xf32>
  %0 = dlvm.pow %ex, %y : tensor<4xf32>, tensor<4xf32>
  %1 = dlvm.div %ex, %ey : tensor<4xf32>, tensor<4xf32>
  %2 = dlvm.div %z, %ey : tensor<4xf32>, tensor<4xf32>
  %p = dlvm.pow %y, %z : tensor<4xf32>, tensor<4xf32>
  %3 = dlvm.div %x, %p : tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Quotients: reassociation is fast-math only; x * (1/y) -> x / y is refining.
// CHECK-LABEL: func.func @quotients
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>, %[[A:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[R3:.*]] = dlvm.div %[[A]], %[[Y]]
// FAST-DAG: %[[XA:.*]] = dlvm.mul %[[X]], %[[A]]
// FAST-DAG: %[[YZ:.*]] = dlvm.mul %[[Y]], %[[Z]]
// FAST-DAG: %[[R0:.*]] = dlvm.div %[[XA]], %[[YZ]]
// FAST-DAG: %[[YZ2:.*]] = dlvm.mul %[[Y]], %[[Z]]
// FAST-DAG: %[[R1:.*]] = dlvm.div %[[X]], %[[YZ2]]
// FAST-DAG: %[[XZ:.*]] = dlvm.mul %[[X]], %[[Z]]
// FAST-DAG: %[[R2:.*]] = dlvm.div %[[XZ]], %[[Y]]
// FAST: return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
// SAFE-NOT: dlvm.mul
// SAFE: return
func.func @quotients(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %a: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %xy = dlvm.div %x, %y : tensor<4xf32>, tensor<4xf32>
  %za = dlvm.div %z, %a : tensor<4xf32>, tensor<4xf32>
  %0 = dlvm.div %xy, %za : tensor<4xf32>, tensor<4xf32>
  %1 = dlvm.div %xy, %z : tensor<4xf32>, tensor<4xf32>
  %yz = dlvm.div %y, %z : tensor<4xf32>, tensor<4xf32>
  %2 = dlvm.div %x, %yz : tensor<4xf32>, tensor<4xf32>
  %one = dlvm.constant dense<1.0> : tensor<f32>
  %inv = dlvm.div %one, %y : tensor<f32>, tensor<4xf32>
  %3 = dlvm.mul %a, %inv : tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Negation chains (exact).
// CHECK-LABEL: func.func @negations
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[R0:.*]] = dlvm.add %[[A]], %[[B]]
// CHECK-DAG: %[[R1:.*]] = dlvm.sub %[[A]], %[[B]]
// CHECK-DAG: %[[R2:.*]] = dlvm.sub %[[B]], %[[A]]
// CHECK-DAG: %[[R3:.*]] = dlvm.mul %[[A]], %[[B]]
// CHECK-DAG: %[[R4:.*]] = dlvm.div %[[A]], %[[B]]
// CHECK-NOT: dlvm.neg
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[A]]
func.func @negations(%a: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %na = dlvm.neg %a : tensor<4xf32>
  %nb = dlvm.neg %b : tensor<4xf32>
  %0 = dlvm.sub %a, %nb : tensor<4xf32>, tensor<4xf32>
  %1 = dlvm.add %a, %nb : tensor<4xf32>, tensor<4xf32>
  %2 = dlvm.add %na, %b : tensor<4xf32>, tensor<4xf32>
  %3 = dlvm.mul %na, %nb : tensor<4xf32>, tensor<4xf32>
  %4 = dlvm.div %na, %nb : tensor<4xf32>, tensor<4xf32>
  %5 = dlvm.neg %na : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// log(exp x) -> x always; exp(log x) -> x with fast-math only (NaN for x < 0).
// CHECK-LABEL: func.func @exp_log
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// SAFE: %[[L:.*]] = dlvm.log %[[X]]
// SAFE: %[[E:.*]] = dlvm.exp %[[L]]
// SAFE: return %[[X]], %[[E]]
// FAST: return %[[X]], %[[X]]
func.func @exp_log(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = dlvm.exp %x : tensor<4xf32>
  %0 = dlvm.log %e : tensor<4xf32>
  %l = dlvm.log %x : tensor<4xf32>
  %1 = dlvm.exp %l : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<1x1xf32>)
// CHECK-DAG: %[[T:.*]] = dlvm.transpose %[[X]] perm [2, 0, 1] : tensor<2x3x4xf32>
// CHECK-DAG: %[[B:.*]] = dlvm.broadcast_to %[[S]] to [3, 4] : tensor<1x1xf32>
// CHECK: return %[[T]], %[[Y]], %[[B]]
func.func @shapes(%x: tensor<2x3x4xf32>, %y: tensor<2x3xf32>, %s: tensor<1x1xf32>)
    -> (tensor<4x2x3xf32>, tensor<2x3xf32>, tensor<3x4xf32>) {
  %t = dlvm.transpose %x perm [1, 2, 0] : tensor<2x3x4xf32>
  %0 = dlvm.transpose %t perm [1, 2, 0] : tensor<3x4x2xf32>
  %ty = dlvm.transpose %y : tensor<2x3xf32>
  %1 = dlvm.transpose %ty : tensor<3x2xf32>
  %b = dlvm.broadcast_to %s to [1, 4] : tensor<1x1xf32>
  %2 = dlvm.broadcast_to %b to [3, 4] : tensor<1x4xf32>
  return %0, %1, %2 : tensor<4x2x3xf32>, tensor<2x3xf32>, tensor<3x4xf32>
}

// Sums over a broadcast (the gradient of a broadcast bias): a scaled reduction of the operand.
// CHECK-LABEL: func.func @sums_of_broadcasts
// CHECK-SAME: (%[[B:.*]]: tensor<1x10xf32>, %[[S:.*]]: tensor<f32>, %[[M:.*]]: tensor<4x1xf32>)
// CHECK-DAG: %[[C32:.*]] = dlvm.constant dense<3.200000e+01> : tensor<f32>
// CHECK-DAG: %[[C60:.*]] = dlvm.constant dense<6.000000e+01> : tensor<f32>
// CHECK-DAG: %[[C5:.*]] = dlvm.constant dense<5.000000e+00> : tensor<f32>
// CHECK-DAG: %[[V:.*]] = dlvm.reshape %[[B]] to [10] : tensor<1x10xf32>
// CHECK-DAG: %[[R0:.*]] = dlvm.mul %[[V]], %[[C32]] : tensor<10xf32>, tensor<f32>
// CHECK-DAG: %[[R1:.*]] = dlvm.mul %[[S]], %[[C60]] : tensor<f32>, tensor<f32>
// CHECK-DAG: %[[SUM:.*]] = dlvm.reduce add %[[M]] dims [0, 1] : tensor<4x1xf32>
// CHECK-DAG: %[[R2:.*]] = dlvm.mul %[[SUM]], %[[C5]] : tensor<f32>, tensor<f32>
// CHECK-DAG: %[[MAX:.*]] = dlvm.reshape %[[M]] to [4] : tensor<4x1xf32>
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[MAX]]
func.func @sums_of_broadcasts(%b: tensor<1x10xf32>, %s: tensor<f32>, %m: tensor<4x1xf32>)
    -> (tensor<10xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>) {
  %bb = dlvm.broadcast_to %b to [32, 10] : tensor<1x10xf32>
  %0 = dlvm.reduce add %bb dims [0] : tensor<32x10xf32>
  %sb = dlvm.broadcast_to %s to [6, 10] : tensor<f32>
  %1 = dlvm.reduce add %sb dims [0, 1] : tensor<6x10xf32>
  %mb = dlvm.broadcast_to %m to [4, 5] : tensor<4x1xf32>
  %2 = dlvm.reduce add %mb dims [0, 1] : tensor<4x5xf32>
  %3 = dlvm.reduce max %mb dims [1] : tensor<4x5xf32>
  return %0, %1, %2, %3 : tensor<10xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>
}

// Transposes around dots: a transpose of a product becomes a product of transposed
// operands, which dlvm-to-linalg reads in place; dots of transposes stay.
// CHECK-LABEL: func.func @transposed_dots
// CHECK-SAME: (%[[A:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<3x4xf32>, %[[C:.*]]: tensor<4x3xf32>, %[[D:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[BT:.*]] = dlvm.transpose %[[B]] : tensor<3x4xf32>
// CHECK-DAG: %[[R0:.*]] = dlvm.dot %[[BT]], %[[A]] : tensor<4x3xf32>, tensor<3x2xf32>
// CHECK-DAG: %[[AT:.*]] = dlvm.transpose %[[A]] : tensor<3x2xf32>
// CHECK-DAG: %[[CT:.*]] = dlvm.transpose %[[C]] : tensor<4x3xf32>
// CHECK-DAG: %[[R1:.*]] = dlvm.dot %[[AT]], %[[CT]] : tensor<2x3xf32>, tensor<3x4xf32>
// CHECK-DAG: %[[BT2:.*]] = dlvm.transpose %[[B]] : tensor<3x4xf32>
// CHECK-DAG: %[[DT:.*]] = dlvm.transpose %[[D]] : tensor<2x3xf32>
// CHECK-DAG: %[[R2:.*]] = dlvm.dot %[[BT2]], %[[DT]] : tensor<4x3xf32>, tensor<3x2xf32>
// CHECK: return %[[R0]], %[[R1]], %[[R2]]
func.func @transposed_dots(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>, %c: tensor<4x3xf32>, %d: tensor<2x3xf32>)
    -> (tensor<4x2xf32>, tensor<2x4xf32>, tensor<4x2xf32>) {
  // transpose(dot(aT, b)) -> dot(bT, a): two transposes become one.
  %at = dlvm.transpose %a : tensor<3x2xf32>
  %d0 = dlvm.dot %at, %b : tensor<2x3xf32>, tensor<3x4xf32>
  %0 = dlvm.transpose %d0 : tensor<2x4xf32>
  // dot(aT, cT) stays: both transposes are read in place.
  %at2 = dlvm.transpose %a : tensor<3x2xf32>
  %ct = dlvm.transpose %c : tensor<4x3xf32>
  %1 = dlvm.dot %at2, %ct : tensor<2x3xf32>, tensor<3x4xf32>
  // transpose(dot(d, b)) -> dot(bT, dT): no transpose left to materialize.
  %d2 = dlvm.dot %d, %b : tensor<2x3xf32>, tensor<3x4xf32>
  %2 = dlvm.transpose %d2 : tensor<2x4xf32>
  return %0, %1, %2 : tensor<4x2xf32>, tensor<2x4xf32>, tensor<4x2xf32>
}

// The rules see through arith.constant splats as well as dlvm.constant ones
// (x + 0, 1 * x, x ^ 2, x / 1, 0 - i); a non-splat constant is left alone.
// CHECK-LABEL: func.func @arith_constants
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-DAG: %[[MIXED:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00
// CHECK-DAG: %[[SQ:.*]] = dlvm.mul %[[X]], %[[X]]
// CHECK-DAG: %[[N:.*]] = dlvm.neg %[[I]]
// CHECK-DAG: %[[A:.*]] = dlvm.add %[[X]], %[[MIXED]]
// CHECK: return %[[X]], %[[X]], %[[SQ]], %[[X]], %[[N]], %[[A]]
// STRICT-LABEL: func.func @arith_constants
// STRICT-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<4xi32>)
// STRICT: %[[N:.*]] = dlvm.neg %[[I]]
// STRICT: return %{{.*}}, %[[X]], %{{.*}}, %[[X]], %[[N]], %{{.*}}
func.func @arith_constants(%x: tensor<2x3xf32>, %i: tensor<4xi32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>, tensor<2x3xf32>) {
  %zero = arith.constant dense<0.0> : tensor<2x3xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<2x3xf32>
  %izero = arith.constant dense<0> : tensor<4xi32>
  %mixed = arith.constant dense<[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]> : tensor<2x3xf32>
  %0 = dlvm.add %x, %zero : tensor<2x3xf32>, tensor<2x3xf32>
  %1 = dlvm.mul %one, %x : tensor<f32>, tensor<2x3xf32>
  %2 = dlvm.pow %x, %two : tensor<2x3xf32>, tensor<2x3xf32>
  %3 = dlvm.div %x, %one : tensor<2x3xf32>, tensor<f32>
  %4 = dlvm.sub %izero, %i : tensor<4xi32>, tensor<4xi32>
  %5 = dlvm.add %x, %mixed : tensor<2x3xf32>, tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5
      : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>, tensor<2x3xf32>
}
