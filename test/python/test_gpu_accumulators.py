"""Accumulators of the GPU threads' loops kept in registers (:mod:`dlvm_mlir.backend.gpu_accumulators`)."""

from __future__ import annotations

import numpy as np
import pytest

import dlvm_mlir
from dlvm_mlir.backend.gpu import GpuOptions, lower_to_gpu
from dlvm_mlir.backend.gpu_accumulators import promote_accumulators
from dlvm_mlir.compiler import lower
from mlir import ir

from test_gpu_emulator import emulate

LAUNCH = """
func.func @f(%out: memref<8xf32>, %x: memref<8x16xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {{
    scf.for %k = %c0 to %c16 step %c1 {{
{body}
    }}
    gpu.terminator
  }}
  return
}}
"""


def _promoted(body: str) -> tuple[int, str]:
    with dlvm_mlir.make_context():
        module = ir.Module.parse(LAUNCH.format(body=body))
        count = promote_accumulators(module)
        module.operation.verify()
        return count, str(module)


def test_a_running_sum_is_carried_by_the_loop() -> None:
    count, text = _promoted("""
      %a = memref.load %out[%tx] : memref<8xf32>
      %v = memref.load %x[%tx, %k] : memref<8x16xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %out[%tx] : memref<8xf32>""")
    assert count == 1
    kernel = text[text.index("gpu.launch"):text.index("gpu.terminator")]
    loop = kernel[kernel.index("scf.for"):kernel.index("scf.yield")]
    assert "iter_args" in loop and "memref.store" not in loop and loop.count("memref.load") == 1  # x only
    assert kernel.index("memref.load %arg0") < kernel.index("scf.for") < kernel.index("memref.store")


@pytest.mark.parametrize("body", [
    # the index changes in the loop
    """
      %a = memref.load %out[%k] : memref<8xf32>
      %s = arith.addf %a, %a : f32
      memref.store %s, %out[%k] : memref<8xf32>""",
    # another element of the same buffer is read in the loop (through a view)
    """
      %a = memref.load %out[%tx] : memref<8xf32>
      %view = memref.subview %out[1] [7] [1] : memref<8xf32> to memref<7xf32, strided<[1], offset: 1>>
      %b = memref.load %view[%c0] : memref<7xf32, strided<[1], offset: 1>>
      %s = arith.addf %a, %b : f32
      memref.store %s, %out[%tx] : memref<8xf32>""",
    # stored twice
    """
      %a = memref.load %out[%tx] : memref<8xf32>
      %s = arith.addf %a, %a : f32
      memref.store %s, %out[%tx] : memref<8xf32>
      memref.store %a, %out[%tx] : memref<8xf32>""",
])
def test_what_is_not_promoted(body: str) -> None:
    count, _ = _promoted(body)
    assert count == 0


def test_convolution_threads_sum_in_registers() -> None:
    """A convolution's thread loops over channels and taps: one load before them, one store
    after, none inside; the same values as numpy in float64 (the kernels run on the CPU)."""
    source = """
func.func @f(%x: tensor<3x5x11x9xf32>, %k: tensor<7x5x3x3xf32>) -> tensor<3x7x11x9xf32> {
  %r = dlvm.convolve %x, %k padding [1, 1, 1, 1] : tensor<3x5x11x9xf32>, tensor<7x5x3x3xf32>
  return %r : tensor<3x7x11x9xf32>
}"""
    module = lower(source, until="linalg")
    lower_to_gpu(module, GpuOptions(), stop_after="outline")
    text = str(module)
    (kernel,) = [k for k in text.split("gpu.func")[1:] if "arith.mulf" in k]
    # the loops over channels and taps (inside the thread's loop over its partial tile of filters)
    sums = kernel[kernel.index("iter_args"):kernel.rindex("scf.yield")]
    assert sums.count("scf.for") == 2 and "memref.store" not in sums
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 11, 9)).astype(np.float32)
    k = rng.standard_normal((7, 5, 3, 3)).astype(np.float32)
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # n, c, oh, ow, kh, kw
    want = np.einsum("ncijkl,fckl->nfij", windows, k.astype(np.float64))
    np.testing.assert_allclose(emulate(source)("f", x, k), want, rtol=1e-5, atol=1e-5)
