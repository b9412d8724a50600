// Unary dlvm ops: math/arith inside a linalg.generic.
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-LABEL: func.func @math_ops
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.tanh
// CHECK: math.sqrt
// CHECK: math.rsqrt
// CHECK: math.absf
// CHECK: math.sin
// CHECK: math.cos
// CHECK: math.tan
// CHECK: math.asin
// CHECK: math.acos
// CHECK: math.atan
// CHECK: math.sinh
// CHECK: math.cosh
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: math.round
// CHECK: math.roundeven
// CHECK: math.erf
// CHECK: math.erfc
// CHECK: math.log1p
// CHECK: math.expm1
// CHECK-NOT: dlvm.
func.func @math_ops(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dlvm.neg %x : tensor<2x3xf32>
  %1 = dlvm.exp %0 : tensor<2x3xf32>
  %2 = dlvm.log %1 : tensor<2x3xf32>
  %3 = dlvm.tanh %2 : tensor<2x3xf32>
  %4 = dlvm.sqrt %3 : tensor<2x3xf32>
  %5 = dlvm.rsqrt %4 : tensor<2x3xf32>
  %6 = dlvm.abs %5 : tensor<2x3xf32>
  %7 = dlvm.sin %6 : tensor<2x3xf32>
  %8 = dlvm.cos %7 : tensor<2x3xf32>
  %9 = dlvm.tan %8 : tensor<2x3xf32>
  %10 = dlvm.asin %9 : tensor<2x3xf32>
  %11 = dlvm.acos %10 : tensor<2x3xf32>
  %12 = dlvm.atan %11 : tensor<2x3xf32>
  %13 = dlvm.sinh %12 : tensor<2x3xf32>
  %14 = dlvm.cosh %13 : tensor<2x3xf32>
  %15 = dlvm.floor %14 : tensor<2x3xf32>
  %16 = dlvm.ceil %15 : tensor<2x3xf32>
  %17 = dlvm.round %16 : tensor<2x3xf32>
  %18 = dlvm.rint %17 : tensor<2x3xf32>
  %19 = dlvm.erf %18 : tensor<2x3xf32>
  %20 = dlvm.erfc %19 : tensor<2x3xf32>
  %21 = dlvm.log1p %20 : tensor<2x3xf32>
  %22 = dlvm.expm1 %21 : tensor<2x3xf32>
  return %22 : tensor<2x3xf32>
}

// sigmoid = (x >= 0 ? 1 : e) / (1 + e), e = e^-|x| (no overflow, denormal
// results kept), divided by the exact 1 + e with one FMA correction step.
// CHECK-LABEL: func.func @sigmoid
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[A:.*]] = math.absf %[[X]]
// CHECK: %[[N:.*]] = arith.negf %[[A]]
// CHECK: %[[E:.*]] = math.exp %[[N]]
// CHECK: %[[P:.*]] = arith.cmpf oge, %[[X]]
// CHECK: %[[NUM:.*]] = arith.select %[[P]], %{{.*}}, %[[E]]
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %[[E]]
// CHECK: %[[Q:.*]] = arith.divf %[[NUM]], %[[D]]
// CHECK: math.fma %{{.*}}, %[[D]], %[[NUM]]
// CHECK: %[[R:.*]] = arith.addf %[[Q]], %{{.*}}
// CHECK: linalg.yield %[[R]]
func.func @sigmoid(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = dlvm.sigmoid %x : tensor<3xf32>
  return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f16
// CHECK: arith.maximumf %{{.*}}, %[[Z]] : f16
// CHECK-LABEL: func.func @relu_int
// CHECK: arith.maxsi
func.func @relu(%x: tensor<3xf16>) -> tensor<3xf16> {
  %r = dlvm.relu %x : tensor<3xf16>
  return %r : tensor<3xf16>
}
func.func @relu_int(%x: tensor<3xi64>) -> tensor<3xi64> {
  %r = dlvm.relu %x : tensor<3xi64>
  return %r : tensor<3xi64>
}

// sign keeps +-0 and NaN: select(x > 0, 1, select(x < 0, -1, x)).
// CHECK-LABEL: func.func @sign
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[POS:.*]] = arith.cmpf ogt, %[[X]]
// CHECK-DAG: %[[NEG:.*]] = arith.cmpf olt, %[[X]]
// CHECK: %[[INNER:.*]] = arith.select %[[NEG]], %{{.*}}, %[[X]] : f32
// CHECK: arith.select %[[POS]], %{{.*}}, %[[INNER]] : f32
func.func @sign(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = dlvm.sign %x : tensor<3xf32>
  return %r : tensor<3xf32>
}

// Integer variants.
// CHECK-LABEL: func.func @int_ops
// CHECK: arith.subi
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: arith.muli
// CHECK: arith.cmpi sgt
func.func @int_ops(%x: tensor<3xi32>) -> tensor<3xi32> {
  %0 = dlvm.neg %x : tensor<3xi32>
  %1 = dlvm.abs %0 : tensor<3xi32>
  %2 = dlvm.square %1 : tensor<3xi32>
  %3 = dlvm.sign %2 : tensor<3xi32>
  return %3 : tensor<3xi32>
}

// lgamma: a series around 2 (with log1p and the recurrence) below 3.5,
// Lanczos above; ln(pi) - ln|sin(pi x)| - lg(1 - x) for x < -1/2, where sin
// is evaluated at x - rint(x).
// CHECK-LABEL: func.func @lgamma_f64
// CHECK: ^bb0(%[[X:.*]]: f64, %{{.*}}: f64):
// CHECK: %[[REFL:.*]] = arith.cmpf olt, %[[X]]
// CHECK: arith.constant 0.42278433509846713 : f64
// CHECK: math.log1p
// CHECK: arith.constant 676.5203681218851 : f64
// CHECK: %[[RINT:.*]] = math.roundeven %[[X]] : f64
// CHECK: arith.subf %[[X]], %[[RINT]]
// CHECK: math.sin
// CHECK: arith.select %[[REFL]]
// CHECK: math.absf %[[X]]
// CHECK: linalg.yield
func.func @lgamma_f64(%x: tensor<3xf64>) -> tensor<3xf64> {
  %r = dlvm.lgamma %x : tensor<3xf64>
  return %r : tensor<3xf64>
}

// Every float type is computed in f64 (f16 through f32: a JIT without
// compiler-rt lacks __truncdfhf2).
// CHECK-LABEL: func.func @lgamma_f16
// CHECK: ^bb0(%[[X:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[W:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK: arith.extf %[[W]] : f32 to f64
// CHECK: arith.constant 676.5203681218851 : f64
// CHECK: %[[N:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: %[[R:.*]] = arith.truncf %[[N]] : f32 to f16
// CHECK: linalg.yield %[[R]] : f16
func.func @lgamma_f16(%x: tensor<3xf16>) -> tensor<3xf16> {
  %r = dlvm.lgamma %x : tensor<3xf16>
  return %r : tensor<3xf16>
}

// digamma: an unrolled recurrence, the asymptotic series, a Taylor series at
// the positive root, reflection for x < 0, NaN at poles.
// CHECK-LABEL: func.func @digamma
// CHECK: arith.constant 1.4616321449683622 : f64
// CHECK: math.tan
// CHECK: arith.constant 0x7FF8000000000000 : f64
// CHECK: linalg.yield
func.func @digamma(%x: tensor<3xf64>) -> tensor<3xf64> {
  %r = dlvm.digamma %x : tensor<3xf64>
  return %r : tensor<3xf64>
}
