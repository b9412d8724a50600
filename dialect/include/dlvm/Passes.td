//===- Passes.td - dlvm C++ passes -------------------------*- tablegen -*-===//
//
// Passes written in C++ (the Python-side passes are registered from Python).
//
//===----------------------------------------------------------------------===//

#ifndef DLVM_PASSES_TD
#define DLVM_PASSES_TD

include "mlir/Pass/PassBase.td"

def DLVMToLinalg : Pass<"dlvm-to-linalg"> {
  let summary = "Lower dlvm ops to linalg, tensor, arith, math and scf";
  let description = [{
    Rewrites every `dlvm` op into linalg-on-tensors IR that the upstream
    bufferization and lowering pipelines consume:

    - elementwise ops (unary, binary with DLVM broadcasting, `cmp`, `select`,
      `cast`, `bitcast`) become one `linalg.generic` each; broadcasting is
      explicit in the indexing maps (a broadcast dimension reads index 0);
    - `dot` becomes `linalg.matmul`, `batch_matmul` (batch dimensions
      collapsed into one), `matvec`, `vecmat` or `dot`;
    - `transpose`, `broadcast_to` and `reduce` become `linalg.transpose`,
      `linalg.broadcast` and `linalg.reduce`; `reverse` and `reduce_window`
      become `linalg.generic`s with affine indexing;
    - shape ops become `tensor.extract_slice`, `insert_slice`, `pad`,
      `collapse_shape` and `expand_shape`;
    - `softmax`/`log_softmax` subtract the maximum before exponentiating;
    - `scan` is an `scf.for` over the scanned dimension;
    - `convolve` uses `linalg.conv_{1d_ncw_fcw,2d_nchw_fchw,3d_ncdhw_fcdhw}`
      or `conv_2d_ngchw_gfchw` where they fit, else a grouped
      `linalg.generic`; input dilation inserts the input into a zero tensor
      with strides;
    - `random` is a counter-based hash (SplitMix64) of the seed and the
      element's linear index;
    - `lgamma` and `digamma` have no `math` op and are expanded into `arith`
      and `math` (Lanczos approximation; recurrence plus asymptotic series).

    - unsigned integer types (`ui8` ... `ui64`) are lowered with unsigned
      arith ops (`divui`, `cmpi ult`, `maxui`, `uitofp`, `extui`, ...); then
      every type in the module becomes signless, as arith and LLVM need, and
      each function whose signature changed keeps its original type in the
      `dlvm.source_type` attribute (the back ends read it to give numpy
      `uint8` ... `uint64` arrays at the entry points).

    Only statically shaped tensors are supported: an op with a dynamic shape
    is reported as an error and the pass fails.

    Downstream notes: `math.erf` and `math.erfc` need `convert-math-to-libm`
    (CPU) or the GPU math lowering (libdevice); `convert-to-llvm` alone does
    not lower them.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // DLVM_PASSES_TD
