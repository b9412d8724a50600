// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of math ops on scalars.

// math.exp: dx = g * y
// CHECK-LABEL: func.func @exp_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.exp %[[ARG0]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[ARG1]], %[[V0]] : f32
// CHECK:      return %[[V1]] : f32
func.func @exp(%x: f32) -> f32 {
  %z = math.exp %x : f32
  return %z : f32
}
func.func private @exp_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @exp seedable>}

// -----

// math.log: dx = g / x
// CHECK-LABEL: func.func @log_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.log %[[ARG0]] : f32
// CHECK:      %[[V1:.*]] = arith.divf %[[ARG1]], %[[ARG0]] : f32
// CHECK:      return %[[V1]] : f32
func.func @log(%x: f32) -> f32 {
  %z = math.log %x : f32
  return %z : f32
}
func.func private @log_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @log seedable>}

// -----

// math.sqrt: dx = g / (2y)
// CHECK-LABEL: func.func @sqrt_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.sqrt %[[ARG0]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[V0]], %[[CST]] : f32
// CHECK:      %[[V2:.*]] = arith.divf %[[ARG1]], %[[V1]] : f32
// CHECK:      return %[[V2]] : f32
func.func @sqrt(%x: f32) -> f32 {
  %z = math.sqrt %x : f32
  return %z : f32
}
func.func private @sqrt_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @sqrt seedable>}

// -----

// math.tanh: dx = g * (1 - y^2)
// CHECK-LABEL: func.func @tanh_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.tanh %[[ARG0]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[V0]], %[[V0]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:      %[[V2:.*]] = arith.subf %[[CST]], %[[V1]] : f32
// CHECK:      %[[V3:.*]] = arith.mulf %[[ARG1]], %[[V2]] : f32
// CHECK:      return %[[V3]] : f32
func.func @tanh(%x: f32) -> f32 {
  %z = math.tanh %x : f32
  return %z : f32
}
func.func private @tanh_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @tanh seedable>}

// -----

// math.sin: dx = g * cos(x)
// CHECK-LABEL: func.func @sin_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.sin %[[ARG0]] : f32
// CHECK:      %[[V1:.*]] = math.cos %[[ARG0]] : f32
// CHECK:      %[[V2:.*]] = arith.mulf %[[ARG1]], %[[V1]] : f32
// CHECK:      return %[[V2]] : f32
func.func @sin(%x: f32) -> f32 {
  %z = math.sin %x : f32
  return %z : f32
}
func.func private @sin_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @sin seedable>}

// -----

// math.cos: dx = -g * sin(x)
// CHECK-LABEL: func.func @cos_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.cos %[[ARG0]] : f32
// CHECK:      %[[V1:.*]] = math.sin %[[ARG0]] : f32
// CHECK:      %[[V2:.*]] = arith.mulf %[[ARG1]], %[[V1]] : f32
// CHECK:      %[[V3:.*]] = arith.negf %[[V2]] : f32
// CHECK:      return %[[V3]] : f32
func.func @cos(%x: f32) -> f32 {
  %z = math.cos %x : f32
  return %z : f32
}
func.func private @cos_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @cos seedable>}

// -----

// math.atan: dx = g / (1 + x^2)
// CHECK-LABEL: func.func @atan_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.atan %[[ARG0]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[ARG0]], %[[ARG0]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:      %[[V2:.*]] = arith.addf %[[CST]], %[[V1]] : f32
// CHECK:      %[[V3:.*]] = arith.divf %[[ARG1]], %[[V2]] : f32
// CHECK:      return %[[V3]] : f32
func.func @atan(%x: f32) -> f32 {
  %z = math.atan %x : f32
  return %z : f32
}
func.func private @atan_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @atan seedable>}

// -----

// math.erf: dx = g * 2/sqrt(pi) * e^(-x^2)
// CHECK-LABEL: func.func @erf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.erf %[[ARG0]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[ARG0]], %[[ARG0]] : f32
// CHECK:      %[[V2:.*]] = arith.negf %[[V1]] : f32
// CHECK:      %[[V3:.*]] = math.exp %[[V2]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 1.12837923 : f32
// CHECK:      %[[V4:.*]] = arith.mulf %[[V3]], %[[CST]] : f32
// CHECK:      %[[V5:.*]] = arith.mulf %[[ARG1]], %[[V4]] : f32
// CHECK:      return %[[V5]] : f32
func.func @erf(%x: f32) -> f32 {
  %z = math.erf %x : f32
  return %z : f32
}
func.func private @erf_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @erf seedable>}

// -----

// math.absf (as dlvm.abs, JAX's choice at 0): dx = g where x >= 0, else -g
// CHECK-LABEL: func.func @absf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.absf %[[ARG0]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V1:.*]] = arith.cmpf oge, %[[ARG0]], %[[CST]] : f32
// CHECK:      %[[V2:.*]] = arith.negf %[[ARG1]] : f32
// CHECK:      %[[V3:.*]] = arith.select %[[V1]], %[[ARG1]], %[[V2]] : f32
// CHECK:      return %[[V3]] : f32
func.func @absf(%x: f32) -> f32 {
  %z = math.absf %x : f32
  return %z : f32
}
func.func private @absf_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @absf seedable>}

// -----

// math.log2: dx = g / (x ln 2)
// CHECK-LABEL: func.func @log2_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.log2 %[[ARG0]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 0.693147182 : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[ARG0]], %[[CST]] : f32
// CHECK:      %[[V2:.*]] = arith.divf %[[ARG1]], %[[V1]] : f32
// CHECK:      return %[[V2]] : f32
func.func @log2(%x: f32) -> f32 {
  %z = math.log2 %x : f32
  return %z : f32
}
func.func private @log2_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @log2 seedable>}

// -----

// math.exp2: dx = g * y * ln 2
// CHECK-LABEL: func.func @exp2_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.exp2 %[[ARG0]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 0.693147182 : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[V0]], %[[CST]] : f32
// CHECK:      %[[V2:.*]] = arith.mulf %[[ARG1]], %[[V1]] : f32
// CHECK:      return %[[V2]] : f32
func.func @exp2(%x: f32) -> f32 {
  %z = math.exp2 %x : f32
  return %z : f32
}
func.func private @exp2_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @exp2 seedable>}

// -----

// math.cbrt: dx = g / (3 y^2)
// CHECK-LABEL: func.func @cbrt_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.cbrt %[[ARG0]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[V0]], %[[V0]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 3.000000e+00 : f32
// CHECK:      %[[V2:.*]] = arith.mulf %[[V1]], %[[CST]] : f32
// CHECK:      %[[V3:.*]] = arith.divf %[[ARG1]], %[[V2]] : f32
// CHECK:      return %[[V3]] : f32
func.func @cbrt(%x: f32) -> f32 {
  %z = math.cbrt %x : f32
  return %z : f32
}
func.func private @cbrt_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @cbrt seedable>}

// -----

// math.powf: z = x^y: dx = g * y * x^(y-1), dy = g * z * ln x (0 where x == 0)
// CHECK-LABEL: func.func @powf_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[V0:.*]] = math.powf %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:      %[[V1:.*]] = arith.subf %[[ARG1]], %[[CST]] : f32
// CHECK:      %[[V2:.*]] = math.powf %[[ARG0]], %[[V1]] : f32
// CHECK:      %[[V3:.*]] = arith.mulf %[[ARG1]], %[[V2]] : f32
// CHECK:      %[[V4:.*]] = arith.mulf %[[ARG2]], %[[V3]] : f32
// CHECK:      %[[CST_0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V5:.*]] = arith.cmpf oeq, %[[ARG0]], %[[CST_0]] : f32
// CHECK:      %[[V6:.*]] = math.log %[[ARG0]] : f32
// CHECK:      %[[CST_1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[V7:.*]] = arith.select %[[V5]], %[[CST_1]], %[[V6]] : f32
// CHECK:      %[[V8:.*]] = arith.mulf %[[V0]], %[[V7]] : f32
// CHECK:      %[[V9:.*]] = arith.mulf %[[ARG2]], %[[V8]] : f32
// CHECK:      return %[[V4]], %[[V9]] : f32, f32
func.func @powf(%x: f32, %y: f32) -> f32 {
  %z = math.powf %x, %y : f32
  return %z : f32
}
func.func private @powf_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @powf seedable>}

// -----

// math.atan2: z = atan2(a, b): da = g * b / (a^2 + b^2), db = -g * a / (a^2 + b^2)
// CHECK-LABEL: func.func @atan2_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32) -> (f32, f32)
// CHECK:      %[[V0:.*]] = math.atan2 %[[ARG0]], %[[ARG1]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[ARG2]], %[[ARG1]] : f32
// CHECK:      %[[V2:.*]] = arith.mulf %[[ARG0]], %[[ARG0]] : f32
// CHECK:      %[[V3:.*]] = arith.mulf %[[ARG1]], %[[ARG1]] : f32
// CHECK:      %[[V4:.*]] = arith.addf %[[V2]], %[[V3]] : f32
// CHECK:      %[[V5:.*]] = arith.divf %[[V1]], %[[V4]] : f32
// CHECK:      %[[V6:.*]] = arith.mulf %[[ARG2]], %[[ARG0]] : f32
// CHECK:      %[[V7:.*]] = arith.mulf %[[ARG0]], %[[ARG0]] : f32
// CHECK:      %[[V8:.*]] = arith.mulf %[[ARG1]], %[[ARG1]] : f32
// CHECK:      %[[V9:.*]] = arith.addf %[[V7]], %[[V8]] : f32
// CHECK:      %[[V10:.*]] = arith.divf %[[V6]], %[[V9]] : f32
// CHECK:      %[[V11:.*]] = arith.negf %[[V10]] : f32
// CHECK:      return %[[V5]], %[[V11]] : f32, f32
func.func @atan2(%x: f32, %y: f32) -> f32 {
  %z = math.atan2 %x, %y : f32
  return %z : f32
}
func.func private @atan2_grad(f32, f32, f32) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @atan2 seedable>}

// -----

// math.fma: z = a * b + c: da = g * b, db = g * a, dc = g
// CHECK-LABEL: func.func @fma_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: f32, %[[ARG3:.*]]: f32) -> (f32, f32, f32)
// CHECK:      %[[V0:.*]] = math.fma %[[ARG0]], %[[ARG1]], %[[ARG2]] : f32
// CHECK:      %[[V1:.*]] = arith.mulf %[[ARG3]], %[[ARG1]] : f32
// CHECK:      %[[V2:.*]] = arith.mulf %[[ARG3]], %[[ARG0]] : f32
// CHECK:      return %[[V1]], %[[V2]], %[[ARG3]] : f32, f32, f32
func.func @fma(%a: f32, %b: f32, %c: f32) -> f32 {
  %z = math.fma %a, %b, %c : f32
  return %z : f32
}
func.func private @fma_grad(f32, f32, f32, f32) -> (f32, f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @fma seedable>}

// -----

// math.floor is inactive: zero gradient, no adjoint code
// CHECK-LABEL: func.func @floor_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32) -> f32
// CHECK:      %[[V0:.*]] = math.floor %[[ARG0]] : f32
// CHECK:      %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      return %[[CST]] : f32
func.func @floor(%x: f32) -> f32 {
  %z = math.floor %x : f32
  return %z : f32
}
func.func private @floor_grad(f32, f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @floor seedable>}
