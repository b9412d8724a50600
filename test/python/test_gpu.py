"""GPU back end: every dlvm op and an MLP gradient to PTX that ptxas accepts; pipeline,
translate and runner behaviour; kernels run against numpy where a GPU is present.

Without ptxas the PTX checks are skipped; without a CUDA driver and a GPU the
execution tests are skipped (``compile_cuda`` must then raise a clean error,
which is tested).  Each group of ops is compiled as one module (one pipeline
run, one ptxas run) to keep the file fast.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import dlvm_mlir
from dlvm_mlir.backend.gpu import (
    CudaUnavailableError,
    GpuOptions,
    compile_cuda,
    cuda_status,
    device_code,
    fold_transposes_into_matmuls,
    lower_to_gpu,
)
from dlvm_mlir.backend.gpu_kernels import matmul_config, matmul_spec
from dlvm_mlir.backend.gpu_schedule import GpuScheduleOptions, plan_gpu_op
from dlvm_mlir.backend.analysis import LoopNest
from dlvm_mlir.backend.runtime import FunctionSignature
from dlvm_mlir.compiler import CompileOptions, lower
from dlvm_mlir.errors import DLVMError
from mlir import ir
from test_cpu_pipeline import _dlvm_opt  # dlvm-opt as a program: its stderr

ROOT = Path(__file__).resolve().parents[2]
MLP = (ROOT / "examples" / "mlp.mlir").read_text()
PTXAS = shutil.which("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found on PATH")
CUDA = cuda_status()
needs_gpu = pytest.mark.skipif(not CUDA.available, reason=f"no CUDA GPU: {CUDA.reason}")


# --------------------------------------------------------------------------
# one small function per dlvm op
# --------------------------------------------------------------------------

F = "tensor<37x70xf32>"  # not a multiple of any tile size: partial tiles everywhere
ROW = "tensor<1x70xf32>"
I = "tensor<37x70xi32>"

UNARY_FLOAT = [
    "neg", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "square", "sign", "abs",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "floor", "ceil", "round",
    "rint", "erf", "erfc", "lgamma", "digamma", "log1p", "expm1",
    "asinh", "acosh", "atanh", "exp2", "log2", "log10", "cbrt",
]
BINARY = ["add", "sub", "mul", "div", "pow", "min", "max", "mod", "floor_div", "trunc_div", "rem", "atan2"]
INT_BINARY = ["and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "rem_i32"]


def _fn(name: str, params: list[str], result: str, body: str) -> str:
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(params))
    return f"func.func @t_{name}({args}) -> {result} {{\n{body}\n  return %r : {result}\n}}\n"


def op_cases() -> dict[str, str]:
    """name -> function text; every dlvm op appears at least once."""
    cases: dict[str, str] = {}
    for op in UNARY_FLOAT:
        cases[op] = _fn(op, [F], F, f"  %r = dlvm.{op} %a0 : {F}")
    cases["neg_f64"] = _fn("neg_f64", ["tensor<5x3xf64>"], "tensor<5x3xf64>", "  %r = dlvm.neg %a0 : tensor<5x3xf64>")
    cases["exp_f16"] = _fn("exp_f16", ["tensor<64xf16>"], "tensor<64xf16>", "  %r = dlvm.exp %a0 : tensor<64xf16>")
    cases["not"] = _fn("not", [I], I, f"  %r = dlvm.not %a0 : {I}")
    cases["popcount"] = _fn("popcount", [I], I, f"  %r = dlvm.popcount %a0 : {I}")
    cases["is_finite"] = _fn("is_finite", [F], "tensor<37x70xi1>", f"  %r = dlvm.is_finite %a0 : {F}")
    for op in BINARY:
        cases[op] = _fn(op, [F, ROW], F, f"  %r = dlvm.{op} %a0, %a1 : {F}, {ROW}")
    for op in INT_BINARY:
        cases[op] = _fn(op, [I, I], I, f"  %r = dlvm.{op.removesuffix('_i32')} %a0, %a1 : {I}, {I}")
    cases["clamp"] = _fn("clamp", ["tensor<f32>", F, "tensor<f32>"], F,
                         f"  %r = dlvm.clamp %a0, %a1, %a2 : tensor<f32>, {F}, tensor<f32>")
    cases["cmp_select"] = _fn("cmp_select", [F, ROW], F, f"""  %m = dlvm.cmp lt, %a0, %a1 : {F}, {ROW}
  %r = dlvm.select %m, %a0, %a1 : tensor<37x70xi1>, {F}, {ROW}""")
    cases["dot"] = _fn("dot", ["tensor<37x50xf32>", "tensor<50x70xf32>"], F,
                       "  %r = dlvm.dot %a0, %a1 : tensor<37x50xf32>, tensor<50x70xf32>")
    cases["dot_matvec"] = _fn("dot_matvec", ["tensor<37x50xf32>", "tensor<50xf32>"], "tensor<37xf32>",
                              "  %r = dlvm.dot %a0, %a1 : tensor<37x50xf32>, tensor<50xf32>")
    cases["dot_batch"] = _fn("dot_batch", ["tensor<3x20x30xf32>", "tensor<3x30x40xf32>"], "tensor<3x20x40xf32>",
                             "  %r = dlvm.dot %a0, %a1 : tensor<3x20x30xf32>, tensor<3x30x40xf32>")
    cases["dot_i32"] = _fn("dot_i32", ["tensor<8x16xi32>", "tensor<16x8xi32>"], "tensor<8x8xi32>",
                           "  %r = dlvm.dot %a0, %a1 : tensor<8x16xi32>, tensor<16x8xi32>")
    cases["dot_f16"] = _fn("dot_f16", ["tensor<64x48xf16>", "tensor<48x40xf16>"], "tensor<64x40xf16>",
                           "  %r = dlvm.dot %a0, %a1 : tensor<64x48xf16>, tensor<48x40xf16>")
    cases["dot_general"] = _fn(
        "dot_general", ["tensor<2x3x17x32xf32>", "tensor<2x3x9x32xf32>"], "tensor<2x3x17x9xf32>",
        "  %r = dlvm.dot_general %a0, %a1 batch [0, 1] x [0, 1] contract [3] x [3] "
        ": tensor<2x3x17x32xf32>, tensor<2x3x9x32xf32>")
    cases["transpose"] = _fn("transpose", [F], "tensor<70x37xf32>", f"  %r = dlvm.transpose %a0 : {F}")
    cases["reverse"] = _fn("reverse", [F], F, f"  %r = dlvm.reverse %a0 dims [0, 1] : {F}")
    cases["concatenate"] = _fn("concatenate", [F, F], "tensor<37x140xf32>",
                               f"  %r = dlvm.concatenate %a0, %a1 axis 1 : {F}, {F}")
    cases["slice"] = _fn("slice", [F], "tensor<10x20xf32>",
                         f"  %r = dlvm.slice %a0 offsets [1, 2] sizes [10, 20] strides [2, 3] : {F}")
    cases["reshape"] = _fn("reshape", [F], "tensor<70x37xf32>", f"  %r = dlvm.reshape %a0 to [70, 37] : {F}")
    cases["pad"] = _fn("pad", [F, "tensor<f32>"], "tensor<72x210xf32>",
                       f"  %r = dlvm.pad %a0, %a1 low [-1, 2] high [0, 0] interior [1, 2] : {F}, tensor<f32>")
    cases["pad_shape"] = _fn("pad_shape", [F], "tensor<37x1x70xf32>", f"  %r = dlvm.pad_shape %a0 at 1 : {F}")
    cases["squeeze_shape"] = _fn("squeeze_shape", ["tensor<37x1x70xf32>"], F,
                                 "  %r = dlvm.squeeze_shape %a0 at 1 : tensor<37x1x70xf32>")
    cases["broadcast_to"] = _fn("broadcast_to", [ROW], F, f"  %r = dlvm.broadcast_to %a0 to [37, 70] : {ROW}")
    cases["reduce_rows"] = _fn("reduce_rows", [F], "tensor<37xf32>", f"  %r = dlvm.reduce add %a0 dims [1] : {F}")
    cases["reduce_cols"] = _fn("reduce_cols", [F], "tensor<70xf32>", f"  %r = dlvm.reduce max %a0 dims [0] : {F}")
    cases["reduce_all"] = _fn("reduce_all", [F], "tensor<f32>", f"  %r = dlvm.reduce mean %a0 dims [0, 1] : {F}")
    cases["scan"] = _fn("scan", [F], F, f"  %r = dlvm.scan add %a0 dim 1 : {F}")
    cases["scan_exclusive_reverse"] = _fn("scan_exclusive_reverse", [F], F,
                                          f"  %r = dlvm.scan mul %a0 dim 0 exclusive reverse : {F}")
    cases["reduce_window"] = _fn(
        "reduce_window", [F], "tensor<37x35xf32>",
        f"  %r = dlvm.reduce_window max %a0 window [1, 2] strides [1, 2] padding none : {F}")
    cases["reduce_window_dilated"] = _fn(
        "reduce_window_dilated", [F], "tensor<73x34xf32>",
        f"  %r = dlvm.reduce_window mean %a0 window [2, 3] strides [1, 2] padding none low [1, 0] high [0, 1] "
        f"window_dilation [1, 2] base_dilation [2, 1] : {F}")
    cases["softmax"] = _fn("softmax", [F], F, f"  %r = dlvm.softmax %a0 axis 1 : {F}")
    cases["log_softmax"] = _fn("log_softmax", [F], F, f"  %r = dlvm.log_softmax %a0 axis 0 : {F}")
    cases["convolve"] = _fn(
        "convolve", ["tensor<2x3x9x8xf32>", "tensor<4x3x3x3xf32>"], "tensor<2x4x9x8xf32>",
        "  %r = dlvm.convolve %a0, %a1 padding [1, 1, 1, 1] : tensor<2x3x9x8xf32>, tensor<4x3x3x3xf32>")
    cases["constant"] = _fn("constant", [F], F, f"""  %c = dlvm.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0]]> : {ROW}
  %r = dlvm.mul %a0, %c : {F}, {ROW}""")
    cases["dynamic_slice"] = _fn("dynamic_slice", [F, "tensor<i32>"], "tensor<1x70xf32>",
                                 f"  %r = dlvm.dynamic_slice %a0 at [%a1, %a1] sizes [1, 70] : {F}, tensor<i32>, tensor<i32>")
    cases["dynamic_update_slice"] = _fn(
        "dynamic_update_slice", [F, ROW, "tensor<i32>"], F,
        f"  %r = dlvm.dynamic_update_slice %a0, %a1 at [%a2, %a2] : {F}, {ROW}, tensor<i32>, tensor<i32>")
    cases["iota"] = _fn("iota", [], I, f"  %r = dlvm.iota dim 1 : {I}")
    cases["gather"] = _fn(
        "gather", [F, "tensor<16xi32>"], "tensor<16x70xf32>",
        f"  %r = dlvm.gather %a0[%a1] offset_dims [1] collapsed_slice_dims [0] start_index_map [0] "
        f"index_vector_dim 1 slice_sizes [1, 70] : {F}, tensor<16xi32>")
    cases["scatter"] = _fn(
        "scatter", [F, "tensor<16xi32>", "tensor<16x70xf32>"], F,
        "  %r = dlvm.scatter add %a0[%a1], %a2 update_window_dims [1] inserted_window_dims [0] "
        f"scatter_dims_to_operand_dims [0] index_vector_dim 1 : {F}, tensor<16xi32>, tensor<16x70xf32>")
    cases["sort"] = _fn("sort", [F], F, f"  %r = dlvm.sort %a0 dim 1 descending : {F}")
    cases["top_k"] = _fn("top_k", [F], "tensor<37x5xi32>",
                         f"  %v, %r = dlvm.top_k %a0 k 5 : {F}")
    cases["argmax"] = _fn("argmax", [F], "tensor<37xi32>", f"  %r = dlvm.argmax %a0 axis 1 : {F} -> tensor<37xi32>")
    cases["argmin"] = _fn("argmin", [F], "tensor<70xi64>", f"  %r = dlvm.argmin %a0 axis 0 : {F} -> tensor<70xi64>")
    cases["cast"] = _fn("cast", [F], I, f"  %r = dlvm.cast %a0 to i32 : {F}")
    cases["bitcast"] = _fn("bitcast", [F], I, f"  %r = dlvm.bitcast %a0 to i32 : {F}")
    cases["random"] = _fn("random", [], F, "  %r = dlvm.random [37, 70] from -1.0 upto 1.0 seed 7 : f32")
    cases["loop"] = """func.func @t_loop(%a0: tensor<16xf32>, %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a0) -> (tensor<16xf32>) {
    %y = dlvm.tanh %x : tensor<16xf32>
    scf.yield %y : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
"""
    # unsigned integers: unsigned division, order, conversion and reduction
    U8, U32 = "tensor<37x70xui8>", "tensor<37x70xui32>"
    cases["div_u32"] = _fn("div_u32", [U32, U32], U32, f"  %r = dlvm.div %a0, %a1 : {U32}, {U32}")
    cases["max_cmp_u8"] = _fn("max_cmp_u8", [U8, U8], U8, f"""  %m = dlvm.cmp gt, %a0, %a1 : {U8}, {U8}
  %x = dlvm.max %a0, %a1 : {U8}, {U8}
  %r = dlvm.select %m, %x, %a1 : tensor<37x70xi1>, {U8}, {U8}""")
    cases["cast_to_u16"] = _fn("cast_to_u16", [F], "tensor<37x70xui16>", f"  %r = dlvm.cast %a0 to ui16 : {F}")
    cases["reduce_max_u64"] = _fn("reduce_max_u64", ["tensor<4099x3xui64>"], "tensor<3xui64>",
                                  "  %r = dlvm.reduce max %a0 dims [0] : tensor<4099x3xui64>")
    cases["extract"] = """func.func @t_extract(%a0: tensor<16xf32>) -> f32 {
  %c3 = arith.constant 3 : index
  %y = dlvm.exp %a0 : tensor<16xf32>
  %r = tensor.extract %y[%c3] : tensor<16xf32>
  return %r : f32
}
"""
    return cases


OPS = op_cases()
GROUPS = {
    "unary": [k for k in OPS if k in UNARY_FLOAT or k in ("neg_f64", "exp_f16", "not", "popcount", "is_finite")],
    "binary": [k for k in OPS if k in BINARY or k in INT_BINARY
               or k in ("cmp_select", "cast", "bitcast", "constant", "clamp", "div_u32", "max_cmp_u8", "cast_to_u16")],
    "linalg": [k for k in OPS if k.startswith("dot")] + ["transpose", "reverse", "concatenate", "slice", "pad", "reshape",
                                                          "pad_shape", "squeeze_shape", "broadcast_to", "random",
                                                          "dynamic_slice", "dynamic_update_slice", "iota",
                                                          "gather", "scatter", "sort", "top_k"],
    "reduce": ["reduce_rows", "reduce_cols", "reduce_all", "scan", "scan_exclusive_reverse", "reduce_window", "reduce_window_dilated", "softmax", "log_softmax",
               "convolve", "loop", "extract", "argmax", "argmin", "reduce_max_u64"],
}


# inputs in each function's domain: name -> transform of a standard normal sample
DOMAINS = {
    "acosh": lambda x: 1.0 + np.abs(x), "asin": np.tanh, "acos": np.tanh, "atanh": lambda x: 0.99 * np.tanh(x),
    "log": np.abs, "sqrt": np.abs, "rsqrt": lambda x: np.abs(x) + 0.1, "log2": np.abs, "log10": np.abs,
    "log1p": lambda x: np.abs(x) - 0.5, "lgamma": lambda x: 3 * x, "digamma": lambda x: 3 * x,
    "pow": np.abs, "tan": lambda x: 1.2 * np.tanh(x), "mul_short": lambda x: 1 + 0.05 * x,
    "cast_to_u16": lambda x: 40000.0 * x,  # both sides of [0, 65535]
}


def op_inputs(name: str, signature: FunctionSignature, rng: np.random.Generator) -> list[np.ndarray]:
    """Inputs of the function ``t_<name>`` of :data:`OPS` or :func:`reduction_cases`, in its domain
    (shared with ``benchmarks/gpu_check.py``)."""
    arrays = []
    for i, spec in enumerate(signature.inputs):
        shape = spec.shape or ()
        dtype = spec.dtype
        if spec.element == "i1":
            value = rng.integers(0, 2, shape).astype(bool)
        elif dtype.kind in "iu":  # unsigned: the negative draws wrap to values near MAX
            if name in ("dynamic_slice", "dynamic_update_slice", "extract", "loop"):
                value = rng.integers(0, 40, shape)
            elif name in ("gather", "scatter"):
                value = rng.integers(0, 37, shape)
            elif name.startswith("shift"):
                value = rng.integers(0, 31, shape) if i == 1 else rng.integers(-1000, 1000, shape)
            else:  # nonzero: divisors
                value = rng.integers(1, 10, shape) * rng.choice([-1, 1], shape)
            value = value.astype(np.int64).astype(dtype)
        else:
            value = rng.standard_normal(shape)
            if name in DOMAINS and i == 0:
                value = DOMAINS[name](value)
            value = value.astype(dtype)
        arrays.append(np.asarray(value))
    return arrays


def reduction_cases() -> dict[str, str]:
    """Reductions on both sides of the GPU split-reduction thresholds (gpu_split_reduction.py):
    few or many outputs, long or short, divisible or prime extents, several reduced dims,
    each combiner kind, and the reductions inside softmax."""
    def fn(name: str, shape: str, result: str, body: str, element: str = "f32") -> str:
        t = f"tensor<{shape}x{element}>"
        return (f"func.func @t_{name}(%a0: {t}) -> {result} {{\n  %r = {body} : {t}\n"
                f"  return %r : {result}\n}}\n")

    return {
        "sum_tall": fn("sum_tall", "4096x8", "tensor<8xf32>", "dlvm.reduce add %a0 dims [0]"),
        "sum_all_1e6": fn("sum_all_1e6", "1000x1000", "tensor<f32>", "dlvm.reduce add %a0 dims [0, 1]"),
        "max_prime": fn("max_prime", "16x4099", "tensor<16xf32>", "dlvm.reduce max %a0 dims [1]"),
        "mean_batch": fn("mean_batch", "1024x512", "tensor<512xf32>", "dlvm.reduce mean %a0 dims [0]"),
        "min_777": fn("min_777", "777x33", "tensor<33xf32>", "dlvm.reduce min %a0 dims [0]"),
        "sum_two_dims": fn("sum_two_dims", "64x50x7", "tensor<7xf32>", "dlvm.reduce add %a0 dims [0, 1]"),
        "sum_i32": fn("sum_i32", "2048x3", "tensor<3xi32>", "dlvm.reduce add %a0 dims [0]", "i32"),
        "mul_short": fn("mul_short", "63x5", "tensor<5xf32>", "dlvm.reduce mul %a0 dims [0]"),
        "softmax_tall": fn("softmax_tall", "4096x16", "tensor<4096x16xf32>", "dlvm.softmax %a0 axis 0"),
        "log_softmax_wide": fn("log_softmax_wide", "8x5000", "tensor<8x5000xf32>", "dlvm.log_softmax %a0 axis 1"),
    }


def test_every_op_is_in_a_group() -> None:
    grouped = {name for names in GROUPS.values() for name in names}
    assert grouped == set(OPS)
    ops_in_td = _dialect_ops()
    used = {line.split("dlvm.")[1].split()[0] for text in OPS.values() for line in text.splitlines() if "dlvm." in line}
    assert ops_in_td <= used, f"ops without a GPU test: {sorted(ops_in_td - used)}"


def _dialect_ops() -> set[str]:
    td = (ROOT / "dialect" / "include" / "dlvm" / "DLVMOps.td").read_text()
    import re

    names = set(re.findall(r'def DLVM_\w+Op : DLVM_\w*Op<"(\w+)"', td))
    return names


@lru_cache(maxsize=None)
def group_ptx(group: str) -> str:
    source = "".join(OPS[name] for name in GROUPS[group])
    module = lower(source, until="linalg")
    return device_code(module, "ptx").text()


def _ptxas(text: str, tmp: Path) -> subprocess.CompletedProcess:
    path = tmp / "kernels.ptx"
    path.write_text(text)
    return subprocess.run([PTXAS, "-arch=sm_90", str(path), "-o", str(tmp / "k.cubin")],
                          capture_output=True, text=True, check=False)


@needs_ptxas
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_group_ptx_is_accepted_by_ptxas(group: str, tmp_path: Path) -> None:
    result = _ptxas(group_ptx(group), tmp_path)
    assert result.returncode == 0, result.stderr[:2000]


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_kernels(name: str) -> None:
    """Each function's work is in kernels (named after the function) in the PTX."""
    group = next(g for g, names in GROUPS.items() if name in names)
    ptx = group_ptx(group)
    assert f".entry dlvm_t_{name}_kernel" in ptx


# --------------------------------------------------------------------------
# MLP gradient
# --------------------------------------------------------------------------


@lru_cache(maxsize=None)
def mlp_ptx() -> str:
    return device_code(lower(MLP, until="linalg"), "ptx").text()


@needs_ptxas
def test_mlp_gradient_ptx_is_accepted_by_ptxas(tmp_path: Path) -> None:
    result = _ptxas(mlp_ptx(), tmp_path)
    assert result.returncode == 0, result.stderr[:2000]


def test_mlp_gradient_kernels() -> None:
    ptx = mlp_ptx()
    assert ".entry dlvm_loss_grad_kernel" in ptx and ".entry dlvm_loss_kernel" in ptx
    assert ".shared" in ptx and "bar.sync" in ptx  # shared-memory matmuls
    assert "fma.rn.f32" in ptx
    assert ".maxntid 1, 1, 1" in ptx  # the scalar tail (loss) runs on one thread
    assert ".maxntid 256, 1, 1" in ptx


def test_mlp_gradient_plans() -> None:
    module = lower(MLP, until="linalg")
    result = lower_to_gpu(module, stop_after="map")
    kinds = [r.plan.kind for r in result.ops]
    assert kinds.count("matmul") == 7  # 2 forward in @loss, 2 forward + 3 backward in @loss_grad
    assert not any(r.error for r in result.ops)
    for record in result.ops:
        if record.plan.kind == "parallel":
            assert record.plan.threads > 1
    text = str(module)
    assert "linalg.transpose" not in text  # folded into the matmuls
    assert "#gpu.address_space<workgroup>" in text and "gpu.barrier" in text


# --------------------------------------------------------------------------
# plans and kernels
# --------------------------------------------------------------------------


def _nest(ranges: tuple[int, ...], iterators: tuple[str, ...]) -> LoopNest:
    return LoopNest("linalg.generic", ranges, iterators, 4, True, False)


def test_plan_maps_innermost_output_dim_to_x() -> None:
    plan = plan_gpu_op(_nest((100, 300), ("parallel", "parallel")), [0, 1], GpuScheduleOptions())
    assert plan.kind == "parallel"
    assert plan.mapped[0] == 1 and plan.mapped[1] == 0
    assert plan.block_dims[0] == 150 and plan.threads <= 256 and plan.threads > 1
    assert plan.grid_dims == (2, 100, 1)


def test_plan_reduction_runs_inside_threads() -> None:
    plan = plan_gpu_op(_nest((32, 784), ("parallel", "reduction")), [0], GpuScheduleOptions())
    assert plan.block_tiles[1] == 0 and plan.thread_counts[1] == 0
    assert plan.block_dims == (32, 1, 1)


def test_plan_serial_without_parallel_loops() -> None:
    plan = plan_gpu_op(_nest((32, 10), ("reduction", "reduction")), [], GpuScheduleOptions())
    assert plan.kind == "serial"


def test_plan_caps_grid_y() -> None:
    plan = plan_gpu_op(_nest((2_000_000, 2), ("parallel", "parallel")), [0, 1], GpuScheduleOptions())
    assert plan.grid_dims[1] <= 65535
    assert plan.block_tiles[0] >= plan.block_dims[1]


def test_split_choice_follows_the_thresholds() -> None:
    from dlvm_mlir.backend.gpu_split_reduction import MIN_CHUNK, TARGET_THREADS, choose_split

    # one output, 1024x10 reduced (a loss): the longest loop, into chunks of MIN_CHUNK
    choice = choose_split(_nest((1024, 10), ("reduction", "reduction")))
    assert (choice.dim, choice.extent, choice.parts) == (0, 1024, 1024 // MIN_CHUNK)
    # 512 outputs, 1024 rows (a bias gradient): enough parts to reach TARGET_THREADS
    choice = choose_split(_nest((1024, 512), ("reduction", "parallel")))
    assert choice.parts == TARGET_THREADS // 512 and 1024 // choice.parts >= MIN_CHUNK
    # 777 = 3 * 7 * 37 rows, 33 outputs: the largest divisor leaving MIN_CHUNK rows per part
    assert choose_split(_nest((777, 33), ("reduction", "parallel"))).parts == 37
    assert choose_split(_nest((4099, 16), ("reduction", "parallel"))) is None  # prime: no even split
    assert choose_split(_nest((63, 5), ("reduction", "parallel"))) is None  # short
    assert choose_split(_nest((4096, TARGET_THREADS), ("reduction", "parallel"))) is None  # enough threads
    assert choose_split(_nest((4096, 8), ("parallel", "parallel"))) is None  # no reduction


REDUCE = """
func.func @f(%x: tensor<4096x8xf32>, %y: tensor<1024x10xf32>) -> (tensor<8xf32>, tensor<f32>) {
  %a = dlvm.reduce add %x dims [0] : tensor<4096x8xf32>
  %b = dlvm.reduce max %y dims [0, 1] : tensor<1024x10xf32>
  return %a, %b : tensor<8xf32>, tensor<f32>
}
"""


def test_reductions_with_few_outputs_are_split() -> None:
    """Numerics on a GPU: benchmarks/gpu_check.py (its 'reductions' group, docs/gpu.md)."""
    text, ops = _map_stage(REDUCE)
    ranges = sorted(r.ranges for r in ops if r.op_name == "linalg.generic")
    # partial passes (parts, chunk, ...) and the combining passes (..., parts)
    assert ranges == sorted([(512, 8, 8), (8, 512), (128, 8, 10), (128,)])
    assert all(r.plan.kind in ("parallel", "grid-stride") for r in ops)
    assert "memref.expand_shape" in text and "arith.maximumf" in text
    partial = next(r for r in ops if r.ranges == (512, 8, 8))
    assert partial.plan.threads * partial.plan.grid_dims[0] * partial.plan.grid_dims[1] >= 4096
    text, ops = _map_stage(REDUCE, split_reductions=False)
    assert sorted(r.ranges for r in ops if r.op_name == "linalg.generic") == [(1024, 10), (4096, 8)]
    assert "memref.expand_shape" not in text


KERNEL_GRADIENT = """
func.func @seeded(%x: tensor<16x8x20x20xf32>, %k: tensor<12x8x3x3xf32>, %dy: tensor<16x12x20x20xf32>) -> tensor<f32> {
  %y = dlvm.convolve %x, %k padding [1, 1, 1, 1] : tensor<16x8x20x20xf32>, tensor<12x8x3x3xf32>
  %p = dlvm.mul %y, %dy : tensor<16x12x20x20xf32>, tensor<16x12x20x20xf32>
  %s = dlvm.reduce add %p dims [0, 1, 2, 3] : tensor<16x12x20x20xf32>
  return %s : tensor<f32>
}
func.func private @dk(tensor<16x8x20x20xf32>, tensor<12x8x3x3xf32>, tensor<16x12x20x20xf32>) -> tensor<12x8x3x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @seeded wrt [1]>}
"""


def test_kernel_gradients_split_over_the_images() -> None:
    """A convolution's kernel gradient (864 outputs, each a sum over 16 images of 20 x 20
    pixels) becomes a generic whose image loop, the one loop its inputs index by itself
    alone, is split: 864 x 16 threads in the partial pass (one image each), where it ran
    on 864 threads. Numerics on a GPU:
    benchmarks/gpu_check.py (the CNN step, docs/gpu.md)."""
    from dlvm_mlir.backend.gpu_split_reduction import MAX_PER_THREAD, MIN_CHUNK, choose_split

    _, ops = _map_stage(KERNEL_GRADIENT)
    ranges = [r.ranges for r in ops if r.op_name == "linalg.generic"]
    # parts x channels x filters x taps x (chunk of 1 image) x pixels, then the combining pass
    assert (16, 8, 12, 3, 3, 1, 20, 20) in ranges and (8, 12, 3, 3, 16) in ranges, ranges
    _, ops = _map_stage(KERNEL_GRADIENT, split_reductions=False)
    assert [r.ranges for r in ops if r.op_name == "linalg.conv_2d_nchw_fchw"] == [(16, 12, 20, 20, 8, 3, 3),
                                                                                (8, 12, 3, 3, 16, 20, 20)]
    # a kernel gradient of 9216 outputs and 32 images of 32 x 32: 8 parts of 4 images
    nest = _nest((32, 32, 3, 3, 32, 32, 32), ("parallel",) * 4 + ("reduction",) * 3)
    choice = choose_split(nest, splittable=(0, 1, 2, 3, 4))
    assert (choice.dim, choice.parts) == (4, 8) and 32 * 32 * 32 // 8 <= MAX_PER_THREAD
    # were the pixel loops splittable too, each part would take MIN_CHUNK steps of the split loop
    assert 32 // choose_split(nest).parts >= MIN_CHUNK


MATMUL = """
func.func @mm(%a: tensor<{m}x{k}x{t}>, %b: tensor<{k}x{n}x{t}>) -> tensor<{m}x{n}x{t}> {{
  %r = dlvm.dot %a, %b : tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>
  return %r : tensor<{m}x{n}x{t}>
}}
"""


def _mm(m: int, n: int, k: int, t: str = "f32") -> str:
    return MATMUL.format(m=m, n=n, k=k, t=t)


def _map_stage(source: str, **schedule: object) -> tuple[str, list]:
    module = lower(source, until="linalg")
    options = GpuOptions(schedule=GpuScheduleOptions(**schedule))  # type: ignore[arg-type]
    result = lower_to_gpu(module, options, stop_after="map")
    return str(module), result.ops


def test_f32_matmul_uses_shared_memory_simt_kernel() -> None:
    text, ops = _map_stage(_mm(200, 300, 100))
    (record,) = [r for r in ops if r.plan.kind == "matmul"]
    assert record.kernel == "simt"
    assert record.plan.block_dims == (256, 1, 1)
    assert "workgroup(" in text and text.count("gpu.barrier") >= 2
    assert "math.fma" in text


@needs_ptxas
def test_f16_matmul_uses_tensor_cores(tmp_path: Path) -> None:
    _, ops = _map_stage(_mm(128, 96, 64, "f16"))
    assert [r.kernel for r in ops if r.plan.kind == "matmul"] == ["mma_f16"]
    ptx = device_code(lower(_mm(128, 96, 64, "f16"), until="linalg"), "ptx").text()
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert _ptxas(ptx, tmp_path).returncode == 0


@needs_ptxas
def test_tf32_option_uses_tensor_cores_for_f32(tmp_path: Path) -> None:
    options = GpuOptions(schedule=GpuScheduleOptions(mma="tf32"))
    ptx = device_code(lower(_mm(70, 50, 40), until="linalg"), "ptx", options).text()
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx
    assert _ptxas(ptx, tmp_path).returncode == 0


def test_mma_none_keeps_f16_on_simt() -> None:
    _, ops = _map_stage(_mm(64, 64, 64, "f16"), mma="none")
    assert [r.kernel for r in ops if r.plan.kind == "matmul"] == ["simt"]


def test_matmul_kernels_can_be_disabled() -> None:
    text, ops = _map_stage(_mm(64, 64, 64), matmul_kernels=False)
    assert not any(r.plan.kind == "matmul" for r in ops)
    assert "workgroup(" not in text


def test_matmul_config_fills_the_gpu() -> None:
    with dlvm_mlir.make_context(), ir.Location.unknown():
        module = ir.Module.parse("""
        func.func @f(%a: memref<4096x4096xf32>, %b: memref<4096x4096xf32>, %c: memref<4096x4096xf32>) {
          linalg.matmul ins(%a, %b : memref<4096x4096xf32>, memref<4096x4096xf32>) outs(%c : memref<4096x4096xf32>)
          return
        }""")
        op = list(module.body.operations[0].regions[0].blocks[0].operations)[0].operation
        spec = matmul_spec(op)
    assert spec is not None and (spec.M, spec.N, spec.K) == (4096, 4096, 4096)
    config = matmul_config(spec)
    assert (config.bm, config.bn, config.tm, config.tn) == (128, 128, 8, 8)
    assert config.shared_bytes(4, 4) <= 48 * 1024


def test_transposes_fold_into_matmuls_and_keep_the_semantics() -> None:
    """The GPU-specific tensor rewrite, checked on the CPU back end against numpy.

    dlvm-to-linalg already reads transposed dot operands in place; the GPU
    fold is for transposes that reach the back end as linalg ops, here on
    both operands of a matmul that already reads one of them transposed.
    """
    from dlvm_mlir.backend import compile_cpu

    source = """
    func.func @f(%a: tensor<30x20xf32>, %b: tensor<40x30xf32>) -> tensor<20x40xf32> {
      %zero = arith.constant 0.0 : f32
      %ea = tensor.empty() : tensor<20x30xf32>
      %at = linalg.transpose ins(%a : tensor<30x20xf32>) outs(%ea : tensor<20x30xf32>) permutation = [1, 0]
      %eb = tensor.empty() : tensor<30x40xf32>
      %bt = linalg.transpose ins(%b : tensor<40x30xf32>) outs(%eb : tensor<30x40xf32>) permutation = [1, 0]
      %e = tensor.empty() : tensor<20x40xf32>
      %c = linalg.fill ins(%zero : f32) outs(%e : tensor<20x40xf32>) -> tensor<20x40xf32>
      %r = linalg.matmul ins(%at, %bt : tensor<20x30xf32>, tensor<30x40xf32>)
                         outs(%c : tensor<20x40xf32>) -> tensor<20x40xf32>
      %e2 = tensor.empty() : tensor<20x40xf32>
      %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<20x40xf32>) -> tensor<20x40xf32>
      %r2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                           affine_map<(m, n, k) -> (m, n)>]
                          ins(%at, %b : tensor<20x30xf32>, tensor<40x30xf32>)
                          outs(%c2 : tensor<20x40xf32>) -> tensor<20x40xf32>
      %sum = linalg.add ins(%r, %r2 : tensor<20x40xf32>, tensor<20x40xf32>) outs(%e : tensor<20x40xf32>) -> tensor<20x40xf32>
      return %sum : tensor<20x40xf32>
    }"""
    with dlvm_mlir.make_context():
        module = ir.Module.parse(source)
        assert fold_transposes_into_matmuls(module) == 2
        text = str(module)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((30, 20)).astype(np.float32)
    b = rng.standard_normal((40, 30)).astype(np.float32)
    got = compile_cpu(text, threads=1)("f", a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    expected = 2 * (a64.T @ b64.T)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------
# the named pipeline and the tools
# --------------------------------------------------------------------------


def test_pipeline_is_registered() -> None:
    from dlvm_mlir.passes import get_pass

    assert get_pass("dlvm-gpu-pipeline") is not None


def test_dlvm_opt_gpu_pipeline_stop_at_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dlvm_mlir.tools.opt import main as opt_main

    src = tmp_path / "mm.mlir"
    src.write_text(_mm(64, 64, 64))
    assert opt_main(["--dlvm-gpu-pipeline=stop-at=map", str(src)]) == 0
    out = capsys.readouterr().out
    assert "gpu.launch" in out and "gpu.barrier" in out


def test_dlvm_opt_gpu_pipeline_bad_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dlvm_mlir.tools.opt import main as opt_main

    src = tmp_path / "mm.mlir"
    src.write_text(_mm(8, 8, 8))
    assert opt_main(["--dlvm-gpu-pipeline=stop-at=nowhere", str(src)]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err


def test_dlvm_opt_timing_lists_the_gpu_stages_and_passes(tmp_path: Path) -> None:
    """Issue 18: the timing report sees inside dlvm-gpu-pipeline (PTX needs no GPU)."""
    err = _dlvm_opt(tmp_path, _mm(64, 64, 64) + SOFTMAX, "--dlvm-gpu-pipeline", "--mlir-timing")
    names = [line.rsplit("%)", 1)[1].strip() for line in err.splitlines() if "%)" in line]
    assert "GpuPipeline" not in names  # not one opaque entry
    stages = [n.removeprefix("GpuPipeline.").split("/")[0] for n in names if n.startswith("GpuPipeline.")]
    # device and binary are upstream passes only
    assert list(dict.fromkeys(stages)) == [
        "linalg", "entry-points", "fuse", "bufferize", "map", "host", "outline", "host-llvm",
    ]
    upstream = [
        "LinalgElementwiseOpFusionPass", "OneShotBufferizePass", "GpuKernelOutliningPass", "GpuNVVMAttachTarget",
        "ConvertGpuOpsToNVVMOps", "GpuToLLVMConversionPass", "GpuModuleToBinaryPass",
    ]
    positions = [names.index(name) for name in upstream]
    assert positions == sorted(positions), "upstream passes out of pipeline order"
    assert names.index("GpuPipeline.map") < names.index("GpuKernelOutliningPass")


def test_dlvm_opt_print_ir_after_all_inside_the_gpu_pipeline(tmp_path: Path) -> None:
    err = _dlvm_opt(tmp_path, _mm(64, 64, 64), "--dlvm-gpu-pipeline", "--mlir-print-ir-after-all")
    dumps = err.split("// -----// IR Dump After ")[1:]
    by_name = {dump.split(" //----- //", 1)[0]: dump for dump in dumps}
    mapped = by_name["GpuPipeline.map (dlvm-gpu-pipeline)"]
    assert "gpu.launch " in mapped and "gpu.module" not in mapped
    assert "gpu.func" in by_name["GpuKernelOutliningPass (gpu-kernel-outlining)"]
    assert ".target sm_90" in by_name["GpuModuleToBinaryPass (gpu-module-to-binary)"]


SOFTMAX = """
func.func @softmax(%x: tensor<16x40xf32>) -> tensor<16x40xf32> {
  %0 = dlvm.softmax %x axis 1 : tensor<16x40xf32>
  return %0 : tensor<16x40xf32>
}
"""


def _translate(capsys: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, bytes]:
    from dlvm_mlir.tools.translate import main as translate_main

    status = translate_main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_translate_ptx(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    src, out = tmp_path / "mm.mlir", tmp_path / "mm.ptx"
    src.write_text(_mm(64, 32, 16))
    status, _, err = _translate(capsysbinary, str(src), "--emit=ptx", "-o", str(out))
    assert status == 0, err.decode()
    text = out.read_text()
    assert ".target sm_90" in text and ".entry dlvm_mm_kernel" in text


def test_translate_llvm_and_host_llvm(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    src = tmp_path / "mm.mlir"
    src.write_text(_mm(16, 16, 16))
    status, device, err = _translate(capsysbinary, str(src), "--emit=llvm")
    assert status == 0, err.decode()
    assert b'target triple = "nvptx64-nvidia-cuda"' in device
    status, host, err = _translate(capsysbinary, str(src), "--emit=host-llvm")
    assert status == 0, err.decode()
    assert b"mgpuMemAlloc" in host and b"mgpuLaunchKernel" in host


@needs_ptxas
def test_translate_cubin(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    src, out = tmp_path / "mm.mlir", tmp_path / "mm.cubin"
    src.write_text(_mm(16, 16, 16))
    status, _, err = _translate(capsysbinary, str(src), "--emit=cubin", "-o", str(out))
    assert status == 0, err.decode()
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_translate_errors(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    status, _, err = _translate(capsysbinary, str(tmp_path / "nope.mlir"), "--emit=ptx")
    assert status == 1 and err.startswith(b"error: cannot read")
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( {")
    status, _, err = _translate(capsysbinary, str(bad), "--emit=ptx")
    assert status == 1 and err.startswith(b"error:") and b"Traceback" not in err
    status, _, err = _translate(capsysbinary, str(bad), "--emit=ptx", "--chip", "gfx90a")
    assert status == 1 and err.startswith(b"error: --chip")


def test_translate_runs_as_a_program(tmp_path: Path) -> None:
    src = tmp_path / "mm.mlir"
    src.write_text(_mm(8, 8, 8))
    result = subprocess.run([sys.executable, "-m", "dlvm_mlir.tools.translate", str(src), "--emit=ptx"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert ".entry dlvm_mm_kernel" in result.stdout


# --------------------------------------------------------------------------
# running: clean errors without a GPU, numpy parity with one
# --------------------------------------------------------------------------


@pytest.mark.skipif(CUDA.available, reason="a GPU is present")
def test_compile_cuda_without_gpu_raises_a_clean_error() -> None:
    with pytest.raises(CudaUnavailableError, match="no CUDA driver/GPU found"):
        compile_cuda(str(lower(_mm(8, 8, 8), until="linalg")))
    with pytest.raises(DLVMError, match="no CUDA driver/GPU found"):
        dlvm_mlir.compile(_mm(8, 8, 8), target="cuda")


@pytest.mark.skipif(CUDA.available, reason="a GPU is present")
def test_dlvm_run_cuda_without_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dlvm_mlir.tools.run import main as run_main

    src = tmp_path / "mm.mlir"
    src.write_text(_mm(4, 4, 4))
    a = tmp_path / "a.npy"
    np.save(a, np.ones((4, 4), np.float32))
    status = run_main([str(src), "--entry", "mm", "--input", str(a), "--input", str(a), "--target", "cuda"])
    err = capsys.readouterr().err
    assert status == 1
    assert "no CUDA driver/GPU found" in err and "Traceback" not in err


def _rand(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)


@needs_gpu
@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (37, 70, 50), (200, 300, 100), (1, 130, 7)])
def test_gpu_matmul_f32(m: int, n: int, k: int) -> None:
    exe = dlvm_mlir.compile(_mm(m, n, k), target="cuda")
    a, b = _rand(m, k), _rand(k, n)
    np.testing.assert_allclose(exe["mm"](a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@needs_gpu
def test_gpu_matmul_f16_tensor_cores() -> None:
    exe = dlvm_mlir.compile(_mm(128, 96, 64, "f16"), target="cuda")
    a, b = _rand(128, 64, dtype=np.float16), _rand(64, 96, dtype=np.float16)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(exe["mm"](a, b).astype(np.float64), expected, rtol=2e-2, atol=5e-2)


@needs_gpu
def test_gpu_matmul_tf32() -> None:
    linalg_ir = str(lower(_mm(70, 50, 40), until="linalg"))
    exe = compile_cuda(linalg_ir, options=GpuOptions(format="auto", schedule=GpuScheduleOptions(mma="tf32")))
    a, b = _rand(70, 40), _rand(40, 50)
    np.testing.assert_allclose(exe("mm", a, b), a.astype(np.float64) @ b, rtol=1e-2, atol=2e-2)


@needs_gpu
@pytest.mark.parametrize("name", ["tanh", "exp", "sigmoid", "add", "max", "softmax", "log_softmax", "reduce_rows",
                                  "reduce_cols", "reduce_all", "transpose", "reverse", "scan", "concatenate"])
def test_gpu_ops_match_the_cpu_backend(name: str) -> None:
    source = OPS[name]
    cpu = dlvm_mlir.compile(source, target="cpu")
    gpu = dlvm_mlir.compile(source, target="cuda")
    sig = cpu._backend.signatures[f"t_{name}"]
    args = [_rand(*spec.shape) for spec in sig.inputs]
    np.testing.assert_allclose(gpu[f"t_{name}"](*args), cpu[f"t_{name}"](*args), rtol=1e-5, atol=1e-5)


def mlp_args() -> tuple[np.ndarray, ...]:
    """Arguments of examples/mlp.mlir's @loss and @loss_grad (also benchmarks/gpu_check.py's)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((32, 784)).astype(np.float32)
    w1 = (rng.standard_normal((784, 128)) * 0.05).astype(np.float32)
    b1 = np.zeros((1, 128), np.float32)
    w2 = (rng.standard_normal((128, 10)) * 0.1).astype(np.float32)
    b2 = np.zeros((1, 10), np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    return x, w1, b1, w2, b2, y


@needs_gpu
def test_gpu_mlp_gradient_matches_cpu() -> None:
    cpu = dlvm_mlir.compile(MLP, target="cpu")
    gpu = dlvm_mlir.compile(MLP, target="cuda")
    args = mlp_args()
    for got, want in zip(gpu["loss_grad"](*args), cpu["loss_grad"](*args)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gpu["loss"](*args), cpu["loss"](*args), rtol=1e-5)


@needs_gpu
def test_gpu_loop_and_scalar_result() -> None:
    exe = dlvm_mlir.compile(OPS["extract"], target="cuda")
    x = _rand(16)
    np.testing.assert_allclose(exe["t_extract"](x), np.exp(x[3]), rtol=1e-6)


# --------------------------------------------------------------------------
# the host side, run against a fake CUDA driver (no GPU needed)
# --------------------------------------------------------------------------

FAKE_DRIVER = Path(__file__).with_name("fake_libcuda.c")
CC = shutil.which("cc") or shutil.which("gcc")

FAKE_PROGRAM = """
import numpy as np, dlvm_mlir
from dlvm_mlir.backend.gpu import cuda_status
assert cuda_status().available
exe = dlvm_mlir.compile(open({source!r}).read(), target="cuda")
x = np.ones((64, 128), np.float32)
w = np.ones((128, 96), np.float32)
y = exe["layer"](x, w)
assert y.shape == (64, 96) and y.dtype == np.float32
s = exe["scalar"](np.ones(16, np.float32))
assert s.shape == ()
t = exe["loop"](np.ones(16, np.float32), 3)
assert t.shape == (16,)
mlp = dlvm_mlir.compile(open({mlp!r}).read(), target="cuda")
shapes = [(32, 784), (784, 128), (1, 128), (128, 10), (1, 10), (32, 10)]
grads = mlp["loss_grad"](*[np.zeros(s, np.float32) for s in shapes])
assert [g.shape for g in grads] == [(784, 128), (1, 128), (128, 10), (1, 10), ()]
print("ok")
"""

FAKE_SOURCE = """
func.func @layer(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %h = dlvm.dot %x, %w : tensor<64x128xf32>, tensor<128x96xf32>
  %y = dlvm.tanh %h : tensor<64x96xf32>
  return %y : tensor<64x96xf32>
}
func.func @scalar(%x: tensor<16xf32>) -> f32 {
  %c3 = arith.constant 3 : index
  %y = dlvm.exp %x : tensor<16xf32>
  %r = tensor.extract %y[%c3] : tensor<16xf32>
  return %r : f32
}
func.func @loop(%a0: tensor<16xf32>, %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a0) -> (tensor<16xf32>) {
    %y = dlvm.tanh %x : tensor<16xf32>
    scf.yield %y : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}
"""


@pytest.mark.skipif(CUDA.available, reason="a real GPU is present")
@pytest.mark.skipif(CC is None, reason="no C compiler to build the fake driver")
def test_host_code_against_a_fake_driver(tmp_path: Path) -> None:
    """JIT with libmlir_cuda_runtime.so, module loading, copies, launches and frees.

    The fake libcuda.so.1 keeps "device" memory on the host and does not run
    kernels, so only the host side is checked: the calls and their sizes.
    """
    lib = tmp_path / "libcuda.so.1"
    subprocess.run([CC, "-shared", "-fPIC", "-O1", "-o", str(lib), str(FAKE_DRIVER)], check=True)
    source = tmp_path / "prog.mlir"
    source.write_text(FAKE_SOURCE)
    log = tmp_path / "calls.log"
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), DLVM_FAKE_CUDA_LOG=str(log))
    program = FAKE_PROGRAM.format(source=str(source), mlp=str(ROOT / "examples" / "mlp.mlir"))
    result = subprocess.run([sys.executable, "-c", program],
                            capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-3000:]
    # the kernels' modules are unloaded at exit after the driver's teardown: quietly
    # (libdlvm_runtime's mgpuModuleUnload, not MLIR's, which reported a failure)
    assert "failed" not in result.stderr, result.stderr[-3000:]
    calls = [line.split() for line in log.read_text().splitlines()]
    kinds = [c[0] for c in calls]
    assert kinds.count("module_load") == 2  # one gpu.module per program (two programs)
    launches = [c for c in calls if c[0] == "launch"]
    layer = [c for c in launches if c[1].startswith("dlvm_layer_kernel")]
    assert len(layer) == 3  # C = 0, the matmul, tanh
    matmul = [c for c in layer if c[5:8] == ["256", "1", "1"]]
    assert len(matmul) == 1
    assert all(int(c[5]) * int(c[6]) * int(c[7]) > 1 for c in layer)
    loop = [c for c in launches if c[1].startswith("dlvm_loop_kernel")]
    assert len(loop) == 5  # copy in, tanh in each of the 3 iterations, copy out
    copies = [int(c[1]) for c in calls if c[0] == "memcpy"]
    # layer: x and w in, y out; scalar: x in, the element read on the host, the element
    # written on the host, the rank-0 result out; loop: x in, result out
    assert copies[:9] == [64 * 128 * 4, 128 * 96 * 4, 64 * 96 * 4, 16 * 4, 4, 4, 4, 16 * 4, 16 * 4]
    mlp_in = [32 * 784, 784 * 128, 128, 128 * 10, 10, 32 * 10]
    mlp_out = [784 * 128, 128, 128 * 10, 10, 1]
    assert copies[9:] == [4 * n for n in mlp_in + mlp_out]
    assert kinds.count("alloc") == kinds.count("free")
    assert kinds.count("stream_create") == kinds.count("stream_destroy")


REFUSED_PROGRAM = """
import numpy as np, dlvm_mlir
from dlvm_mlir.backend import OutOfMemoryError
exe = dlvm_mlir.compile(open({source!r}).read(), target="cuda")
try:
    exe["layer"](np.ones((64, 128), np.float32), np.ones((128, 96), np.float32))
except OutOfMemoryError as exc:
    print("error:", exc)
assert exe["scalar"](np.ones(16, np.float32)).shape == ()  # small buffers still come
print("ok")
"""


def test_a_refused_device_buffer_raises(tmp_path: Path) -> None:
    """Codegen's allocation checks cover the host code's mgpuMemAlloc: with a fake driver
    that refuses buffers of 16 KB or more, the layer (its 32 KB input) raises
    OutOfMemoryError and the process goes on."""
    lib = tmp_path / "libcuda.so.1"
    subprocess.run([CC, "-shared", "-fPIC", "-O1", "-o", str(lib), str(FAKE_DRIVER)], check=True)
    source = tmp_path / "prog.mlir"
    source.write_text(FAKE_SOURCE)
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path), DLVM_FAKE_CUDA_LOG=str(tmp_path / "calls.log"),
               DLVM_FAKE_CUDA_ALLOC_LIMIT=str(16 * 1024))
    result = subprocess.run([sys.executable, "-c", REFUSED_PROGRAM.format(source=str(source))],
                            capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0 and result.stdout.splitlines()[-1] == "ok", result.stderr[-3000:]
    assert result.stdout.splitlines()[0] == ("error: @layer: out of memory: the system refused a buffer; "
                                             "the call was abandoned"), result.stdout


def test_floordiv_mod_indexing_maps_run_grid_stride() -> None:
    """Linalg tiling slices ``floordiv``/``mod`` indices wrongly (see test_cpu_backend's
    im2col test): such ops are not tiled onto blocks and threads."""
    text = """#map = affine_map<(d0, d1) -> (d0 floordiv 9, d1 mod 10 + d0 mod 3)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%p: tensor<8x12xf32>) -> tensor<72x100xf32> {
  %e = tensor.empty() : tensor<72x100xf32>
  %col = linalg.generic {indexing_maps = [#map, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<8x12xf32>) outs(%e : tensor<72x100xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<72x100xf32>
  return %col : tensor<72x100xf32>
}
"""
    module = ir.Module.parse(text, dlvm_mlir.make_context())
    result = lower_to_gpu(module, GpuOptions(), stop_after="map")
    (record,) = [r for r in result.ops if r.op_name == "linalg.generic"]
    assert record.plan.kind == "grid-stride"


HOST_LOOPS = """
func.func @f(%n: index, %x: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %static = memref.alloc() : memref<8xf32>
  %dynamic = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %static[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %dynamic[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%c0] : memref<8xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%c0] : memref<8xf32>
  }
  return
}
"""


def test_host_loops_become_kernels_where_their_buffers_are_on_the_device() -> None:
    """A host loop on device buffers runs as a kernel (atomic updates: on all threads; others
    on one); one that touches an allocation the host stage keeps on the host (dynamic size)
    stays on the host, where its accesses are staged."""
    from dlvm_mlir.backend.gpu import launch_host_loops

    with dlvm_mlir.make_context():
        module = ir.Module.parse(HOST_LOOPS)
        records = launch_host_loops(module, threads=256)
        module.operation.verify()
        text = str(module)
        body = module.body.operations[0].regions[0].blocks[0]
        top = [op.operation.name for op in body.operations if op.operation.name in ("scf.for", "gpu.launch")]
    assert [(r.plan.kind, r.plan.block_dims) for r in records] == [("serial", (1, 1, 1)), ("grid-stride", (8, 1, 1))]
    assert top == ["gpu.launch", "scf.for", "gpu.launch"]  # the dynamic buffer's loop stays on the host
    assert "memref.atomic_rmw addf" in text
