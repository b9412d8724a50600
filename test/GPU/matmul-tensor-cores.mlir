// f16 matmuls run on tensor cores (nvgpu.mma.sync m16n8k16, f32 accumulators); f32 ones
// only with mma=tf32 (TF32 precision), and never with mma=none.
// RUN: dlvm-opt %s --dlvm-gpu-pipeline=stop-at=map | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: dlvm-opt %s --dlvm-gpu-pipeline="stop-at=map mma=tf32" | FileCheck %s --check-prefixes=CHECK,TF32
// RUN: dlvm-opt %s --dlvm-gpu-pipeline="stop-at=map mma=none" | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @dlvm_f16
// CHECK: threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup({{.*}} : memref<32x40xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<32x40xf16, #gpu.address_space<workgroup>>)
// CHECK: gpu.barrier
// CHECK: vector.from_elements {{.*}} : vector<4x2xf16>
// CHECK: vector.from_elements {{.*}} : vector<2x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: arith.truncf {{.*}} : f32 to f16
// NONE-LABEL: func.func @dlvm_f16
// NONE-NOT: nvgpu.mma.sync
// NONE: math.fma
func.func @f16(%a: tensor<128x64xf16>, %b: tensor<64x96xf16>) -> tensor<128x96xf16> {
  %r = dlvm.dot %a, %b : tensor<128x64xf16>, tensor<64x96xf16>
  return %r : tensor<128x96xf16>
}

// CHECK-LABEL: func.func @dlvm_f32
// AUTO-NOT: nvgpu.mma.sync
// AUTO: math.fma
// TF32: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// NONE-LABEL: func.func @dlvm_f32
// NONE-NOT: nvgpu.mma.sync
func.func @f32(%a: tensor<70x40xf32>, %b: tensor<40x50xf32>) -> tensor<70x50xf32> {
  %r = dlvm.dot %a, %b : tensor<70x40xf32>, tensor<40x50xf32>
  return %r : tensor<70x50xf32>
}
