// The whole pipeline: kernels as PTX for sm_90 (dlvm-translate), and the host module in
// the LLVM dialect with the kernels embedded as a gpu.binary (dlvm-opt).
// RUN: %python -m dlvm_mlir.tools.translate %s --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: dlvm-opt %s --dlvm-gpu-pipeline | FileCheck %s --check-prefix=HOST
// RUN: %python -m dlvm_mlir.tools.translate %s --emit=llvm | FileCheck %s --check-prefix=NVVM
// RUN: dlvm-opt %s --dlvm-gpu-pipeline --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING
// RUN: dlvm-opt %s --dlvm-gpu-pipeline=stop-at=outline --mlir-print-ir-after-all -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PRINT

// dlvm-opt's instrumentation sees each step of the pipeline (GpuPipeline.<stage>[/<step>])
// and each upstream pass
// TIMING: Execution time report
// TIMING-NOT: {{  GpuPipeline$}}
// TIMING: GpuPipeline.linalg
// TIMING: GpuPipeline.entry-points
// TIMING: GpuPipeline.fuse/generalize
// TIMING: OneShotBufferizePass
// TIMING: GpuPipeline.map
// TIMING: GpuPipeline.host
// TIMING: GpuKernelOutliningPass
// TIMING: GpuPipeline.outline/merge-kernel-modules
// TIMING: ConvertGpuOpsToNVVMOps
// TIMING: GpuToLLVMConversionPass
// TIMING: GpuModuleToBinaryPass
// TIMING: Total
// PRINT: IR Dump After GpuPipeline.map (dlvm-gpu-pipeline)
// PRINT: gpu.launch blocks
// PRINT: IR Dump After GpuKernelOutliningPass (gpu-kernel-outlining)
// PRINT: gpu.func
// PRINT: IR Dump After GpuNVVMAttachTarget (nvvm-attach-target)
// PRINT-NOT: IR Dump After ConvertGpuOpsToNVVMOps

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
