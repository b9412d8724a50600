// After outlining: one gpu.module with the NVVM target holds every kernel (gpu.func with
// known block sizes); the host entry point copies inputs to device buffers, launches,
// copies the result back and frees the device buffers.
// RUN: dlvm-opt %s --dlvm-gpu-pipeline=stop-at=outline | FileCheck %s
// RUN: dlvm-opt %s --dlvm-gpu-pipeline="stop-at=outline chip=sm_80 features=+ptx70 opt-level=1" | FileCheck %s --check-prefix=SM80

// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @dlvm_layer
// CHECK-SAME: (%[[X:[^:]*]]: memref<64x128xf32>, %[[W:[^:]*]]: memref<128x96xf32>, %[[OUT:[^:]*]]: memref<64x96xf32>) attributes {llvm.emit_c_interface}
// CHECK: %[[DX:.*]] = gpu.alloc () : memref<64x128xf32>
// CHECK: gpu.memcpy %[[DX]], %[[X]]
// CHECK: %[[DW:.*]] = gpu.alloc () : memref<128x96xf32>
// CHECK: gpu.memcpy %[[DW]], %[[W]]
// CHECK: %[[DOUT:.*]] = gpu.alloc () : memref<64x96xf32>
// CHECK: gpu.launch_func @dlvm_kernels::@dlvm_layer_kernel blocks in
// CHECK: gpu.launch_func @dlvm_kernels::@dlvm_layer_kernel_0 blocks in ({{.*}}) threads in (%c256, %c1, %c1) args(%[[DX]] : memref<64x128xf32>, %[[DW]] : memref<128x96xf32>, %[[DOUT]] : memref<64x96xf32>)
// CHECK: gpu.launch_func @dlvm_kernels::@dlvm_layer_kernel_1
// CHECK: gpu.memcpy %[[OUT]], %[[DOUT]]
// CHECK-DAG: gpu.dealloc %[[DX]]
// CHECK-DAG: gpu.dealloc %[[DW]]
// CHECK-DAG: gpu.dealloc %[[DOUT]]
// CHECK: return
// CHECK: gpu.module @dlvm_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CHECK: gpu.func @dlvm_layer_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 96, 2, 1>
// CHECK: gpu.func @dlvm_layer_kernel_0({{.*}}) workgroup({{.*}}#gpu.address_space<workgroup>{{.*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>
// CHECK: gpu.barrier
// CHECK: gpu.func @dlvm_layer_kernel_1({{.*}}) kernel attributes {known_block_size = array<i32: 96, 2, 1>
// CHECK: math.tanh
// SM80: gpu.module @dlvm_kernels [#nvvm.target<O = 1, chip = "sm_80", features = "+ptx70">]
func.func @layer(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %h = dlvm.dot %x, %w : tensor<64x128xf32>, tensor<128x96xf32>
  %y = dlvm.tanh %h : tensor<64x96xf32>
  return %y : tensor<64x96xf32>
}

// A scalar read on the host (a loop bound, a returned f32) goes through a one-thread
// kernel copying the element into a one-element device buffer and a gpu.memcpy to a
// one-element host buffer, in a helper that is not inlined (its stack slot is released
// on return, also in loops).
// CHECK-LABEL: func.func @dlvm_scalar
// CHECK: gpu.launch_func
// CHECK: %[[V:.*]] = call @__dlvm_host_load_{{.*}}(%{{.*}}, %c3) : (memref<16xf32>, index) -> f32
// CHECK: call @__dlvm_host_store_{{.*}}(%[[V]], %{{.*}}) : (f32, memref<f32>) -> ()
// CHECK: func.func private @__dlvm_host_load_{{.*}}(%{{.*}}: memref<16xf32>, %{{.*}}: index) -> f32 attributes {no_inline}
// CHECK: %[[DEV:.*]] = gpu.alloc () : memref<1xf32>
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<1xf32>
// CHECK: gpu.launch_func @dlvm_kernels::@__dlvm_host_load_{{.*}}_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
// CHECK: gpu.memcpy %[[HOST]], %[[DEV]]
// CHECK: memref.load %[[HOST]]
func.func @scalar(%x: tensor<16xf32>) -> f32 {
  %c3 = arith.constant 3 : index
  %y = dlvm.exp %x : tensor<16xf32>
  %r = tensor.extract %y[%c3] : tensor<16xf32>
  return %r : f32
}
