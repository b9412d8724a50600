"""A fused generic with more operands than a CUDA kernel's parameters hold is split
(:mod:`dlvm_mlir.backend.gpu_wide_kernels`), and a kernel takes the views of its buffers
inside itself (:mod:`dlvm_mlir.backend.gpu_sink_views`): checked through the emulated GPU
against numpy in float64, and with ptxas where it is installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from dlvm_mlir.backend.gpu import GpuOptions, device_code, lower_to_gpu
from dlvm_mlir.backend.gpu_emulator import EmulatedGpuProgram
from dlvm_mlir.backend.gpu_schedule import GpuScheduleOptions
from dlvm_mlir.backend.gpu_sink_views import captured_values, sink_views
from dlvm_mlir.backend.gpu_wide_kernels import OPERAND_BYTES, descriptor_bytes
from dlvm_mlir.backend.linalg_rewrite import ops_where
from dlvm_mlir.compiler import lower

from test_gpu import _ptxas, needs_ptxas
from test_gpu_emulator import _wide_average_pool

NO_MATMUL_KERNELS = GpuOptions(schedule=GpuScheduleOptions(matmul_kernels=False))


def _wide_sum(terms: int, rows: int = 7, cols: int = 5) -> str:
    """``sum_i a_i * c + b``: ``terms`` matrices, ``c`` a row broadcast along the columns and ``b``
    added last; fusion makes it one generic of ``terms + 2`` inputs."""
    t, v = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}x1xf32>"
    lines = []
    total = None
    for i in range(terms):
        lines.append(f"%p{i} = dlvm.mul %a{i}, %c : {t}, {v}")
        if total is not None:
            lines.append(f"%s{i} = dlvm.add {total}, %p{i} : {t}, {t}")
        total = f"%s{i}" if total is not None else f"%p{i}"
    lines.append(f"%r = dlvm.add {total}, %b : {t}, {t}")
    arguments = ", ".join([f"%a{i}: {t}" for i in range(terms)] + [f"%c: {v}", f"%b: {t}"])
    body = "\n  ".join(lines)
    return f"func.func @wide({arguments}) -> {t} {{\n  {body}\n  return %r : {t}\n}}\n"


def _fused_generics(source: str) -> list[list[int]]:
    module = lower(source, until="linalg")
    lower_to_gpu(module, NO_MATMUL_KERNELS, stop_after="fuse")
    generics = ops_where(module, lambda op: op.name == "linalg.generic")
    return [[descriptor_bytes(v.type) for v in op.operands] for op in generics]


@pytest.mark.parametrize("terms", [40, 54, 55, 130, 400])
def test_a_wide_sum_is_split_to_fit_a_kernels_parameters(terms: int) -> None:
    operands = _fused_generics(_wide_sum(terms))
    assert all(sum(sizes) <= OPERAND_BYTES for sizes in operands)
    # one generic where it fits (56-byte descriptors: 54 of them), more where it does not
    fits = (terms + 3) * 56 <= OPERAND_BYTES
    assert (len(operands) == 1) == fits
    rng = np.random.default_rng(terms)
    a = [rng.standard_normal((7, 5)).astype(np.float32) for _ in range(terms)]
    c = rng.standard_normal((7, 1)).astype(np.float32)
    b = rng.standard_normal((7, 5)).astype(np.float32)
    program = EmulatedGpuProgram(lower(_wide_sum(terms), until="linalg"), NO_MATMUL_KERNELS)
    got = program("wide", *a, c, b)
    want = sum(x.astype(np.float64) for x in a) * c.astype(np.float64) + b
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * terms)


@needs_ptxas
def test_a_wide_pooling_gradient_compiles_for_the_gpu(tmp_path: Path) -> None:
    """Seed 7171's program at a window of 200: one kernel summed 200 buffers, 8,000 bytes of
    parameters, and ptxas refused it (4,352 at most)."""
    ptx = device_code(lower(_wide_average_pool(200), until="linalg"), "ptx").text()
    result = _ptxas(ptx, tmp_path)
    assert result.returncode == 0, result.stderr[:2000]


def test_a_kernel_takes_the_buffer_its_views_are_of() -> None:
    """A kernel reading two slices of one buffer (a shifted difference) takes the buffer, not
    the two views."""
    source = """
func.func @diff(%x: tensor<64xf32>) -> tensor<63xf32> {
  %a = dlvm.slice %x offsets [1] sizes [63] : tensor<64xf32>
  %b = dlvm.slice %x offsets [0] sizes [63] : tensor<64xf32>
  %d = dlvm.sub %a, %b : tensor<63xf32>, tensor<63xf32>
  return %d : tensor<63xf32>
}
"""
    module = lower(source, until="linalg")
    lower_to_gpu(module, NO_MATMUL_KERNELS, stop_after="map")
    launches = ops_where(module, lambda op: op.name == "gpu.launch")
    before = [v for launch in launches for v in captured_values(launch) if isinstance(v.type, ir.MemRefType)]
    assert sink_views(module) > 0
    after = [v for launch in launches for v in captured_values(launch) if isinstance(v.type, ir.MemRefType)]
    assert len(after) < len(before)
    assert all("strided" not in str(v.type) or "offset: 0" in str(v.type) for v in after)
    x = np.arange(64, dtype=np.float32) ** 2
    got = EmulatedGpuProgram(lower(source, until="linalg"), NO_MATMUL_KERNELS)("diff", x)
    np.testing.assert_array_equal(got, np.diff(x))


def test_a_generic_whose_inputs_are_all_read_twice_is_left_alone() -> None:
    """``sum_i a_i + prod_i a_i``: any slice's inputs are read by the rest of the body too, so
    no cut leaves fewer operands; the generic stays as it is (it used to be a cut that
    added an operand each time)."""
    terms, t = 70, "tensor<7x5xf32>"
    lines, total, product = [], "%a0", "%a0"
    for i in range(1, terms):
        lines.append(f"%s{i} = dlvm.add {total}, %a{i} : {t}, {t}")
        lines.append(f"%p{i} = dlvm.mul {product}, %a{i} : {t}, {t}")
        total, product = f"%s{i}", f"%p{i}"
    lines.append(f"%r = dlvm.add {total}, {product} : {t}, {t}")
    arguments = ", ".join(f"%a{i}: {t}" for i in range(terms))
    body = "\n  ".join(lines)
    source = f"func.func @both({arguments}) -> {t} {{\n  {body}\n  return %r : {t}\n}}\n"
    operands = _fused_generics(source)
    assert len(operands) == 1 and len(operands[0]) == terms + 1
