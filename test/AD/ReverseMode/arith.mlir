// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of arith float ops. Scalars get arith/math adjoint code.

// arith.addf: dx = g, dy = g
// CHECK-LABEL: func.func @addf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[V0:.*]] = arith.addf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      return %[[ARG2]], %[[ARG2]] : f32, f32
func.func @addf(%x: f32, %y: f32) -> f32 {
  %z = arith.addf %x, %y : f32
  return %z : f32
}
func.func private @addf_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @addf seedable>}

// -----

// arith.subf: dx = g, dy = -g
// CHECK-LABEL: func.func @subf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[V0:.*]] = arith.subf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[V1:.*]] = arith.negf %[[ARG2]] : f32
// CHECK:      return %[[ARG2]], %[[V1]] : f32, f32
func.func @subf(%x: f32, %y: f32) -> f32 {
  %z = arith.subf %x, %y : f32
  return %z : f32
}
func.func private @subf_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @subf seedable>}

// -----

// arith.mulf: dx = g * y, dy = g * x
// CHECK-LABEL: func.func @mulf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[V0:.*]] = arith.mulf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[ARG2]], %[[ARG1]] : f32
// CHECK:      %[[V2:.*]] = arith.mulf %[[ARG2]], %[[ARG0]] : f32
// CHECK:      return %[[V1]], %[[V2]] : f32, f32
func.func @mulf(%x: f32, %y: f32) -> f32 {
  %z = arith.mulf %x, %y : f32
  return %z : f32
}
func.func private @mulf_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @mulf seedable>}

// -----

// arith.divf: z = x / y: dx = g / y, dy = -g * z / y
// CHECK-LABEL: func.func @divf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[V0:.*]] = arith.divf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[V1:.*]] = arith.divf %[[ARG2]], %[[ARG1]] : f32
// CHECK:      %[[V2:.*]] = arith.mulf %[[ARG2]], %[[V0]] : f32
// CHECK:      %[[V3:.*]] = arith.divf %[[V2]], %[[ARG1]] : f32
// CHECK:      %[[V4:.*]] = arith.negf %[[V3]] : f32
// CHECK:      return %[[V1]], %[[V4]] : f32, f32
func.func @divf(%x: f32, %y: f32) -> f32 {
  %z = arith.divf %x, %y : f32
  return %z : f32
}
func.func private @divf_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @divf seedable>}

// -----

// arith.maximumf (as dlvm.max, JAX's rule): dx = select(x == z, select(y == z, g / 2, g), 0),
// dy likewise
// CHECK-LABEL: func.func @maximumf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[Z:.*]] = arith.maximumf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[XZ:.*]] = arith.cmpf oeq, %[[ARG0]], %[[Z]] : f32
// CHECK:      %[[YZ:.*]] = arith.cmpf oeq, %[[ARG1]], %[[Z]] : f32
// CHECK:      %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:      %[[HG:.*]] = arith.mulf %[[ARG2]], %[[H]] : f32
// CHECK:      %[[T:.*]] = arith.select %[[YZ]], %[[HG]], %[[ARG2]] : f32
// CHECK:      %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[DX:.*]] = arith.select %[[XZ]], %[[T]], %[[C0]] : f32
// CHECK:      %[[YZ2:.*]] = arith.cmpf oeq, %[[ARG1]], %[[Z]] : f32
// CHECK:      %[[XZ2:.*]] = arith.cmpf oeq, %[[ARG0]], %[[Z]] : f32
// CHECK:      %[[H2:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:      %[[HG2:.*]] = arith.mulf %[[ARG2]], %[[H2]] : f32
// CHECK:      %[[T2:.*]] = arith.select %[[XZ2]], %[[HG2]], %[[ARG2]] : f32
// CHECK:      %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[DY:.*]] = arith.select %[[YZ2]], %[[T2]], %[[C1]] : f32
// CHECK:      return %[[DX]], %[[DY]] : f32, f32
func.func @maximumf(%x: f32, %y: f32) -> f32 {
  %z = arith.maximumf %x, %y : f32
  return %z : f32
}
func.func private @maximumf_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @maximumf seedable>}

// -----

// arith.minimumf (as dlvm.min, JAX's rule): dx = select(x == z, select(y == z, g / 2, g), 0),
// dy likewise
// CHECK-LABEL: func.func @minimumf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[Z:.*]] = arith.minimumf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[XZ:.*]] = arith.cmpf oeq, %[[ARG0]], %[[Z]] : f32
// CHECK:      %[[YZ:.*]] = arith.cmpf oeq, %[[ARG1]], %[[Z]] : f32
// CHECK:      %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:      %[[HG:.*]] = arith.mulf %[[ARG2]], %[[H]] : f32
// CHECK:      %[[T:.*]] = arith.select %[[YZ]], %[[HG]], %[[ARG2]] : f32
// CHECK:      %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[DX:.*]] = arith.select %[[XZ]], %[[T]], %[[C0]] : f32
// CHECK:      %[[YZ2:.*]] = arith.cmpf oeq, %[[ARG1]], %[[Z]] : f32
// CHECK:      %[[XZ2:.*]] = arith.cmpf oeq, %[[ARG0]], %[[Z]] : f32
// CHECK:      %[[H2:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:      %[[HG2:.*]] = arith.mulf %[[ARG2]], %[[H2]] : f32
// CHECK:      %[[T2:.*]] = arith.select %[[XZ2]], %[[HG2]], %[[ARG2]] : f32
// CHECK:      %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[DY:.*]] = arith.select %[[YZ2]], %[[T2]], %[[C1]] : f32
// CHECK:      return %[[DX]], %[[DY]] : f32, f32
func.func @minimumf(%x: f32, %y: f32) -> f32 {
  %z = arith.minimumf %x, %y : f32
  return %z : f32
}
func.func private @minimumf_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @minimumf seedable>}

// -----

// arith.remf: x - trunc(x / y) * y: dx = g, dy = -g * trunc(x / y)
// CHECK-LABEL: func.func @remf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[V0:.*]] = arith.remf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[V1:.*]] = arith.divf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V2:.*]] = arith.cmpf ogt, %[[V1]], %[[CST]] : f32
// CHECK:      %[[CST_0:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:      %[[CST_1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V3:.*]] = arith.select %[[V2]], %[[CST_0]], %[[CST_1]] : f32
// CHECK:      %[[CST_2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V4:.*]] = arith.cmpf olt, %[[V1]], %[[CST_2]] : f32
// CHECK:      %[[CST_3:.*]] = arith.constant -1.000000e+00 : f32
// CHECK:      %[[V5:.*]] = arith.select %[[V4]], %[[CST_3]], %[[V3]] : f32
// CHECK:      %[[V6:.*]] = math.absf %[[V1]] : f32
// CHECK:      %[[V7:.*]] = math.floor %[[V6]] : f32
// CHECK:      %[[V8:.*]] = arith.mulf %[[V5]], %[[V7]] : f32
// CHECK:      %[[V9:.*]] = arith.mulf %[[ARG2]], %[[V8]] : f32
// CHECK:      %[[V10:.*]] = arith.negf %[[V9]] : f32
// CHECK:      return %[[ARG2]], %[[V10]] : f32, f32
func.func @remf(%x: f32, %y: f32) -> f32 {
  %z = arith.remf %x, %y : f32
  return %z : f32
}
func.func private @remf_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @remf seedable>}

// -----

// arith.negf on a tensor: dx = -g (tensors get dlvm ops)
// CHECK-LABEL: func.func @negf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<3xf32>) -> tensor<3xf32>
// CHECK:      %[[V0:.*]] = arith.negf %[[ARG0]] : tensor<3xf32>
// CHECK:      %[[V1:.*]] = dlvm.neg %[[ARG1]] : tensor<3xf32>
// CHECK:      return %[[V1]] : tensor<3xf32>
func.func @negf(%x: tensor<3xf32>) -> tensor<3xf32> {
  %z = arith.negf %x : tensor<3xf32>
  return %z : tensor<3xf32>
}
func.func private @negf_grad(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @negf seedable>}

// -----

// arith.select: d on_true = select(c, g, 0), d on_false = select(c, 0, g)
// CHECK-LABEL: func.func @sel_grad(
// CHECK-SAME:    %[[ARG0:.*]]: i1, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32, %[[ARG3:.*]]: f32) -> (f32, f32)
// CHECK:      %[[V0:.*]] = arith.select %[[ARG0]], %[[ARG1]], %[[ARG2]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V1:.*]] = arith.select %[[ARG0]], %[[ARG3]], %[[CST]] : f32
// CHECK:      %[[CST_0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V2:.*]] = arith.select %[[ARG0]], %[[CST_0]], %[[ARG3]] : f32
// CHECK:      return %[[V1]], %[[V2]] : f32, f32
func.func @sel(%c: i1, %x: f32, %y: f32) -> f32 {
  %z = arith.select %c, %x, %y : f32
  return %z : f32
}
func.func private @sel_grad(i1, f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @sel wrt [1, 2] seedable>}

// -----

// arith.extf / truncf: the adjoint is converted back; constants and comparisons are inactive
// CHECK-LABEL: func.func @ext_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f64) -> f32
// CHECK:      %[[CST:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:      %[[V0:.*]] = arith.cmpf olt, %[[ARG0]], %[[CST]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[ARG0]], %[[CST]] : f32
// CHECK:      %[[V2:.*]] = arith.select %[[V0]], %[[V1]], %[[ARG0]] : f32
// CHECK:      %[[V3:.*]] = arith.extf %[[V2]] : f32 to f64
// CHECK:      %[[V4:.*]] = arith.truncf %[[ARG1]] : f64 to f32
// CHECK:      %[[CST_0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V5:.*]] = arith.select %[[V0]], %[[V4]], %[[CST_0]] : f32
// CHECK:      %[[CST_1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V6:.*]] = arith.select %[[V0]], %[[CST_1]], %[[V4]] : f32
// CHECK:      %[[V7:.*]] = arith.mulf %[[V5]], %[[CST]] : f32
// CHECK:      %[[V8:.*]] = arith.addf %[[V6]], %[[V7]] : f32
// CHECK:      return %[[V8]] : f32
func.func @ext(%x: f32) -> f64 {
  %c = arith.constant 2.0 : f32
  %b = arith.cmpf olt, %x, %c : f32
  %m = arith.mulf %x, %c : f32
  %s = arith.select %b, %m, %x : f32
  %z = arith.extf %s : f32 to f64
  return %z : f64
}
func.func private @ext_grad(f32, f64) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @ext seedable>}
