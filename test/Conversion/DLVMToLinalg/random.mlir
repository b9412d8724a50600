// dlvm.random: a counter-based hash (SplitMix64) of the seed and each
// element's linear index, mapped to [low, high).
// RUN: %mlir_opt --load-pass-plugin=%dlvm_plugin %s --pass-pipeline='builtin.module(dlvm-to-linalg)' | FileCheck %s

// CHECK-LABEL: func.func @random_f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x5xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<3x5xf32>)
// CHECK: %[[I0:.*]] = linalg.index 0 : index
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: arith.muli %[[I0]], %[[C5]] : index
// CHECK: linalg.index 1 : index
// CHECK: %[[LIN:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[CTR:.*]] = arith.addi %[[LIN]], %[[ONE]] : i64
// CHECK: %[[KEY:.*]] = arith.constant 7191089600892374487 : i64
// CHECK: %[[GOLDEN:.*]] = arith.constant -7046029254386353131 : i64
// CHECK: %[[W:.*]] = arith.muli %[[CTR]], %[[GOLDEN]] : i64
// CHECK: %[[Z0:.*]] = arith.addi %[[KEY]], %[[W]] : i64
// CHECK: %[[S30:.*]] = arith.constant 30 : i64
// CHECK: %[[SH:.*]] = arith.shrui %[[Z0]], %[[S30]] : i64
// CHECK: %[[X:.*]] = arith.xori %[[Z0]], %[[SH]] : i64
// CHECK: %[[M1:.*]] = arith.constant -4658895280553007687 : i64
// CHECK: arith.muli %[[X]], %[[M1]] : i64
// CHECK: arith.constant -7723592293110705685 : i64
// CHECK: %[[S40:.*]] = arith.constant 40 : i64
// CHECK: %[[TOP:.*]] = arith.shrui %{{.*}}, %[[S40]] : i64
// CHECK: %[[TOPF:.*]] = arith.uitofp %[[TOP]] : i64 to f32
// CHECK: %[[ULP:.*]] = arith.constant 5.96046448E-8 : f32
// CHECK: %[[U:.*]] = arith.mulf %[[TOPF]], %[[ULP]] : f32
// CHECK: %[[OMU:.*]] = arith.subf %{{.*}}, %[[U]] : f32
// CHECK: %[[LP:.*]] = arith.mulf %{{.*}}, %[[OMU]] : f32
// CHECK: %[[HP:.*]] = arith.mulf %{{.*}}, %[[U]] : f32
// CHECK: arith.addf %[[LP]], %[[HP]] : f32
// CHECK-DAG: %[[LOW:.*]] = arith.constant -2.000000e+00 : f32
// CHECK-DAG: %[[HIGH:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[BELOW:.*]] = arith.constant 2.99999976 : f32
// CHECK: %[[CL:.*]] = arith.maximumf %{{.*}}, %[[LOW]] : f32
// CHECK: %[[HI:.*]] = arith.cmpf oge, %[[CL]], %[[HIGH]] : f32
// CHECK: %[[R:.*]] = arith.select %[[HI]], %[[BELOW]], %[[CL]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @random_f32() -> tensor<3x5xf32> {
  %r = dlvm.random [3, 5] from -2.0 upto 3.0 seed 7 : f32
  return %r : tensor<3x5xf32>
}

// f64 uses 53 random bits; f16 is computed in f32 and rounded.
// CHECK-LABEL: func.func @random_f64
// CHECK: arith.uitofp %{{.*}} : i64 to f64
// CHECK: arith.constant 1.1102230246251565E-16 : f64
// CHECK-LABEL: func.func @random_f16
// CHECK: arith.uitofp %{{.*}} : i64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @random_f64() -> tensor<4xf64> {
  %r = dlvm.random [4] from 0.0 upto 1.0 seed 0 : f64
  return %r : tensor<4xf64>
}
func.func @random_f16() -> tensor<4xf16> {
  %r = dlvm.random [4] from 0.0 upto 1.0 seed 0 : f16
  return %r : tensor<4xf16>
}
