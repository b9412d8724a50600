// The whole pipeline: kernels as PTX for sm_90 (dlvm-translate), and the host module in
// the LLVM dialect with the kernels embedded as a gpu.binary (dlvm-opt).
// RUN: %python -m dlvm_mlir.tools.translate %s --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: dlvm-opt %s --dlvm-gpu-pipeline | FileCheck %s --check-prefix=HOST
// RUN: %python -m dlvm_mlir.tools.translate %s --emit=llvm | FileCheck %s --check-prefix=NVVM

// PTX: .version 8.0
// PTX: .target sm_90
// PTX: .visible .entry dlvm_layer_kernel(
// PTX: .maxntid 96, 2, 1
// PTX: .visible .entry dlvm_layer_kernel_0(
// PTX: .maxntid 256, 1, 1
// PTX: .shared .align {{[0-9]+}} .b8
// PTX: bar.sync 0;
// PTX: ld.shared.b32
// PTX: fma.rn.f32
// PTX: .visible .entry dlvm_layer_kernel_1(

// HOST: llvm.func @dlvm_layer(
// HOST: llvm.call @mgpuStreamCreate
// HOST: llvm.call @mgpuMemAlloc
// HOST: llvm.call @mgpuMemcpy
// HOST: gpu.launch_func <%{{.*}} : !llvm.ptr> @dlvm_kernels::@dlvm_layer_kernel_0
// HOST: llvm.call @mgpuStreamSynchronize
// HOST: llvm.func @_mlir_ciface_dlvm_layer(
// HOST: gpu.binary @dlvm_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">

// NVVM: target triple = "nvptx64-nvidia-cuda"
// NVVM: define ptx_kernel void @dlvm_layer_kernel_0(
// NVVM: call void @llvm.nvvm.barrier
func.func @layer(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %h = dlvm.dot %x, %w : tensor<64x128xf32>, tensor<128x96xf32>
  %y = dlvm.tanh %h : tensor<64x96xf32>
  return %y : tensor<64x96xf32>
}
