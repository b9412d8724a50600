// dlvm-cpu-pipeline: DLVM IR -> linalg -> fused -> tiled and vectorized loops -> bufferized -> LLVM dialect, one flag.
// RUN: dlvm-opt %s --dlvm-cpu-pipeline=stop-at=linalg | FileCheck %s --check-prefix=LINALG
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="stop-at=tile-and-vectorize vector-bits=256" | FileCheck %s --check-prefix=VEC
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="stop-at=bufferize vector-bits=256" | FileCheck %s --check-prefix=BUF
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="vector-bits=256 threads=1" \
// RUN:   | FileCheck %s --check-prefix=LLVM --implicit-check-not='{{[ (](func|scf|cf|memref|vector|arith|math|linalg|tensor|bufferization|async|affine|dlvm)\.[a-z]}}' --implicit-check-not=mlirAsyncRuntime
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="vector-bits=256 threads=2" | FileCheck %s --check-prefix=THREADS
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="vector-bits=256 threads=2" --mlir-timing -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TIMING
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="vector-bits=256 stop-at=bufferize" --mlir-print-ir-after-all -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PRINT
// RUN: not dlvm-opt %s --dlvm-cpu-pipeline=threads=0 2>&1 | FileCheck %s --check-prefix=BAD-THREADS
// RUN: not dlvm-opt %s --dlvm-cpu-pipeline=vector-bits=100 2>&1 | FileCheck %s --check-prefix=BAD-BITS
// RUN: not dlvm-opt %s --dlvm-cpu-pipeline=stop-at=nowhere 2>&1 | FileCheck %s --check-prefix=BAD-STAGE
// RUN: not dlvm-opt %s --dlvm-cpu-pipeline=vectorize=maybe 2>&1 | FileCheck %s --check-prefix=BAD-BOOL

// The pass is its stages' steps in the pass manager: --mlir-timing times
// each Python step (CpuPipeline.<stage>[/<step>]) and each upstream pass.
// TIMING: Execution time report
// TIMING-NOT: {{  CpuPipeline$}}
// TIMING: CpuPipeline.linalg
// TIMING: CpuPipeline.entry-points
// TIMING: Inliner
// TIMING: CpuPipeline.fuse/generalize
// TIMING: LinalgElementwiseOpFusionPass
// TIMING: CpuPipeline.approximate-math
// TIMING: CpuPipeline.pack
// TIMING: CpuPipeline.tile-and-vectorize/schedules
// TIMING: CpuPipeline.tile-and-vectorize/vector-cleanup
// TIMING: CpuPipeline.bufferize
// TIMING: OneShotBufferizePass
// TIMING: BufferResultsToOutParamsPass
// TIMING: CpuPipeline.lower-vectors
// TIMING: ConvertVectorToSCF
// TIMING: AsyncParallelForPass
// TIMING: ConvertVectorToLLVMPass
// TIMING: ConvertToLLVMPass
// TIMING: Total
// and --mlir-print-ir-after-all prints the IR after each
// PRINT: IR Dump After CpuPipeline.tile-and-vectorize/schedules (dlvm-cpu-pipeline)
// PRINT: vector.transfer_read
// PRINT: IR Dump After OneShotBufferizePass (one-shot-bufferize)
// PRINT: memref<
// PRINT: IR Dump After CpuPipeline.bufferize/strided-copies (dlvm-cpu-pipeline)
// PRINT-NOT: IR Dump After CpuPipeline.lower-vectors
// BAD-THREADS: error: threads must be in [1, 1024], got 0
// BAD-BITS: error: vector-bits must be 0 (host), 128, 256 or 512, got 100
// BAD-STAGE: error: {{.*}}option 'stop-at' expects one of linalg, entry-points, fuse, approximate-math, pack, tile-and-vectorize, bufferize, lower-vectors, parallelize, to-llvm; got 'nowhere'
// BAD-BOOL: error: {{.*}}option 'vectorize' expects a boolean, got 'maybe'
// BAD-THREADS-NOT: Traceback
// BAD-BITS-NOT: Traceback

// Recursion: the recursive function stays a private function (not inlined into
// its entry point; printed first), vectorized, and calls itself through memrefs;
// @pow2 below is its entry point.
// VEC-LABEL: func.func private @__dlvm_fn_double_n_times
// VEC: arith.addf {{.*}} : vector<16xf32>
// VEC: func.call @__dlvm_fn_double_n_times
// LLVM-LABEL: llvm.func @__dlvm_fn_double_n_times(
// LLVM: llvm.fadd {{.*}} : vector<16xf32>
// LLVM: llvm.call @__dlvm_fn_double_n_times(
func.func private @double_n_times(%x: tensor<16xf32>, %n: i64) -> tensor<16xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %done = arith.cmpi sle, %n, %c0 : i64
  %r = scf.if %done -> tensor<16xf32> {
    scf.yield %x : tensor<16xf32>
  } else {
    %y = dlvm.add %x, %x : tensor<16xf32>, tensor<16xf32>
    %m = arith.subi %n, %c1 : i64
    %z = func.call @double_n_times(%y, %m) : (tensor<16xf32>, i64) -> tensor<16xf32>
    scf.yield %z : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// An MLP layer: B (512 deep, 1 KiB rows, reused by 256 rows of A) is packed
// into 16-wide panels, then the dot becomes register-tiled vector.contract ops
// on the panels; both split over threads (scf.forall: the schedules split
// contractions of 2^17 or more multiply-adds, two tasks per thread from 2^18;
// this one has 2^25), then vector FMAs in the LLVM dialect.
// LINALG-LABEL: func.func @mlp
// LINALG: linalg.matmul
// VEC-LABEL: func.func @dlvm_mlp
// VEC-SAME: attributes {llvm.emit_c_interface}
// VEC-NOT: linalg.matmul
// VEC: scf.forall (%{{.*}}) in (4) {{.*}} -> (tensor<16x512x16xf32>)
// VEC: scf.forall.in_parallel
// VEC: scf.forall (%{{.*}}) in (4) {{.*}} -> (tensor<256x16x16xf32>)
// VEC: scf.for
// VEC: vector.contract {{.*}} : vector<6x8xf32>, vector<1x8x16xf32> into vector<6x1x16xf32>
// VEC: scf.forall.in_parallel
// the bias + tanh epilogue: one vectorized nest (tanh as a polynomial)
// VEC: vector.transfer_read {{.*}} vector<{{[0-9x]+}}xf32>
// VEC: arith.addf {{.*}} : vector<
// VEC-NOT: linalg.
// VEC: return
// BUF-LABEL: func.func @dlvm_mlp
// BUF-SAME: memref<256x256xf32>
// BUF: vector.contract
// LLVM-LABEL: llvm.func @dlvm_mlp(
// LLVM: llvm.intr.fmuladd({{.*}}) : (vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>) -> vector<{{[0-9]+}}xf32>
// LLVM: llvm.return
// LLVM-LABEL: llvm.func @_mlir_ciface_dlvm_mlp(
// THREADS-LABEL: llvm.func @dlvm_mlp(
// THREADS: llvm.call @mlirAsyncRuntimeCreateGroup
// THREADS: llvm.call @parallel_compute_fn
// THREADS: llvm.call @mlirAsyncRuntimeAwaitAllInGroup
func.func @mlp(%x: tensor<256x512xf32>, %w: tensor<512x256xf32>, %b: tensor<1x256xf32>) -> tensor<256x256xf32> {
  %0 = dlvm.dot %x, %w : tensor<256x512xf32>, tensor<512x256xf32>
  %1 = dlvm.add %0, %b : tensor<256x256xf32>, tensor<1x256xf32>
  %2 = dlvm.tanh %1 : tensor<256x256xf32>
  return %2 : tensor<256x256xf32>
}

// A full reduction (the sum of a fused product, over both loops) has no
// parallel loop to split over threads: its loops are collapsed to one and it
// is split into 4 partial sums (scf.forall), then the partials are reduced.
// VEC-LABEL: func.func @dlvm_total
// VEC: tensor.collapse_shape {{.*}} : tensor<512x512xf32> into tensor<262144xf32>
// VEC: tensor.expand_shape {{.*}} output_shape [4, 65536]
// VEC: scf.forall (%{{.*}}) in (4)
// VEC: vector.contract {{.*}} : vector<1x32xf32>, vector<1x32xf32> into vector<1xf32>
// VEC: scf.forall.in_parallel
// VEC: vector.multi_reduction <add>, {{.*}} : vector<4xf32> to f32
// LLVM-LABEL: llvm.func @dlvm_total(
func.func @total(%x: tensor<512x512xf32>, %y: tensor<512x512xf32>) -> tensor<f32> {
  %0 = dlvm.mul %x, %y : tensor<512x512xf32>, tensor<512x512xf32>
  %1 = dlvm.reduce add %0 dims [0, 1] : tensor<512x512xf32>
  return %1 : tensor<f32>
}

// A loop with a data-dependent trip count around a fused, vectorized body.
// VEC-LABEL: func.func @dlvm_loop
// VEC: scf.for %{{.*}} = %{{.*}} to %arg1
// VEC: arith.mulf {{.*}} : vector<
// VEC: scf.yield
// LLVM-LABEL: llvm.func @dlvm_loop(
// LLVM: llvm.cond_br
// LLVM: llvm.fmul {{.*}} : vector<
func.func @loop(%x: tensor<64xf32>, %n: index) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<64xf32> {
    %0 = dlvm.mul %acc, %x : tensor<64xf32>, tensor<64xf32>
    %1 = dlvm.tanh %0 : tensor<64xf32>
    scf.yield %1 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// VEC-LABEL: func.func @dlvm_branch
// VEC: scf.if
// VEC: vector.transfer_read
// VEC: } else {
// VEC: arith.negf {{.*}} : vector<
// LLVM-LABEL: llvm.func @dlvm_branch(
// LLVM: llvm.cond_br
// LLVM: llvm.fneg {{.*}} : vector<
func.func @branch(%x: tensor<64xf32>, %p: i1) -> tensor<64xf32> {
  %r = scf.if %p -> tensor<64xf32> {
    %0 = dlvm.exp %x : tensor<64xf32>
    scf.yield %0 : tensor<64xf32>
  } else {
    %0 = dlvm.neg %x : tensor<64xf32>
    scf.yield %0 : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// A while loop whose condition is a (vectorized) reduction.
// VEC-LABEL: func.func @dlvm_grow
// VEC: scf.while
// VEC: vector.multi_reduction <add>
// VEC: scf.condition
// LLVM-LABEL: llvm.func @dlvm_grow(
// LLVM: llvm.fcmp "olt"
// LLVM: llvm.cond_br
func.func @grow(%x: tensor<64xf32>, %limit: f32) -> tensor<64xf32> {
  %r = scf.while (%v = %x) : (tensor<64xf32>) -> tensor<64xf32> {
    %s = dlvm.reduce add %v dims [0] : tensor<64xf32>
    %t = tensor.extract %s[] : tensor<f32>
    %more = arith.cmpf olt, %t, %limit : f32
    scf.condition(%more) %v : tensor<64xf32>
  } do {
  ^bb0(%v: tensor<64xf32>):
    %d = dlvm.add %v, %v : tensor<64xf32>, tensor<64xf32>
    scf.yield %d : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// LLVM-LABEL: llvm.func @dlvm_pow2(
// LLVM: llvm.call @__dlvm_fn_double_n_times(
func.func @pow2(%x: tensor<16xf32>, %n: i64) -> tensor<16xf32> {
  %r = func.call @double_n_times(%x, %n) : (tensor<16xf32>, i64) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// A derivative declaration gets its body from dlvm-differentiate first.
// LINALG-LABEL: func.func @sumsq_grad
// LINALG-SAME: dlvm.derivative_of
// LINALG: linalg.generic
// LINALG: arith.addf
// LLVM-LABEL: llvm.func @dlvm_sumsq_grad(
// LLVM-LABEL: llvm.func @_mlir_ciface_dlvm_sumsq_grad(
func.func @sumsq(%x: tensor<8xf32>) -> tensor<f32> {
  %0 = dlvm.mul %x, %x : tensor<8xf32>, tensor<8xf32>
  %1 = dlvm.reduce add %0 dims [0] : tensor<8xf32>
  return %1 : tensor<f32>
}
func.func private @sumsq_grad(tensor<8xf32>) -> tensor<8xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @sumsq wrt [0]>}
