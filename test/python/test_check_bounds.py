"""Bounds-checked compiled code (issue 13): an out-of-range run-time index raises
ExecutionError naming the op and its source location, and never touches memory
out of bounds; in-range accesses give the same results as unchecked code."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import dlvm_mlir
from dlvm_mlir.backend import ExecutionError
from dlvm_mlir.errors import DLVMError
from dlvm_mlir.interpreter import run as interpret
from dlvm_mlir.compiler import CompileOptions, lower

SRC = """func.func @get(%t: tensor<1000xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<1000xf32>
  return %v : f32
}
func.func @put(%t: tensor<3x70xf64>, %i: index, %j: index, %v: f64) -> tensor<3x70xf64> {
  %r = tensor.insert %v into %t[%i, %j] : tensor<3x70xf64>
  return %r : tensor<3x70xf64>
}
func.func @gather_sum(%t: tensor<1000xf32>, %idx: tensor<40xi64>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %k = %c0 to %c40 step %c1 iter_args(%acc = %zero) -> f32 {
    %raw = tensor.extract %idx[%k] : tensor<40xi64>
    %i = arith.index_cast %raw : i64 to index
    %v = tensor.extract %t[%i] : tensor<1000xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  return %s : f32
}
"""


@pytest.fixture(scope="module")
def checked() -> dlvm_mlir.compiler.Executable:
    return dlvm_mlir.compile(SRC, check_bounds=True, filename="access.mlir")


def test_in_range_accesses_match_the_interpreter(checked) -> None:
    rng = np.random.default_rng(3)
    t = rng.standard_normal(1000).astype(np.float32)
    m = rng.standard_normal((3, 70))
    idx = rng.integers(0, 1000, 40)
    for i in (0, 7, 999):
        assert checked["get"](t, i) == t[i] == interpret(SRC, "get", t, i)
    expected = m.copy()
    expected[2, 69] = 5.0
    np.testing.assert_array_equal(checked["put"](m, 2, 69, 5.0), expected)
    np.testing.assert_array_equal(interpret(SRC, "put", m, 2, 69, 5.0), expected)
    np.testing.assert_allclose(checked["gather_sum"](t, idx), t[idx].astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("fn,args,where", [
    ("get", (1000,), "'tensor.extract' at access.mlir:2:8"),
    ("get", (-1,), "'tensor.extract' at access.mlir:2:8"),
    ("get", (2**62,), "'tensor.extract' at access.mlir:2:8"),
    ("put", (3, 0, 1.0), "'tensor.insert' at access.mlir:6:8"),
    ("put", (0, 70, 1.0), "'tensor.insert' at access.mlir:6:8"),
])
def test_out_of_range_index_raises(checked, fn: str, args: tuple, where: str) -> None:
    first = np.zeros(1000, np.float32) if fn == "get" else np.zeros((3, 70))
    with pytest.raises(ExecutionError, match=f"@{fn}: index out of bounds in {where}") as info:
        checked[fn](first, *args)
    assert isinstance(info.value, DLVMError)
    # the error is reset: the next in-range call succeeds
    assert np.asarray(checked[fn](first, *([0] * (len(args) - (fn == "put"))), *([1.0] if fn == "put" else []))).size


def test_index_read_from_a_tensor_inside_a_loop(checked) -> None:
    idx = np.arange(40, dtype=np.int64)
    idx[17] = 5000
    with pytest.raises(ExecutionError, match="'tensor.extract' at access.mlir:17:10"):
        checked["gather_sum"](np.ones(1000, np.float32), idx)


def test_unchecked_code_has_no_checks() -> None:
    exe = dlvm_mlir.compile(SRC, check_bounds=False)
    assert "scf.if" not in str(lower(SRC, options=CompileOptions(check_bounds=False)))
    assert "scf.if" in str(lower(SRC, options=CompileOptions(check_bounds=True)))
    assert exe["get"](np.arange(1000, dtype=np.float32), 5) == 5.0


def test_dlvm_run_check_bounds(tmp_path) -> None:
    (tmp_path / "m.mlir").write_text(SRC)
    np.save(tmp_path / "t.npy", np.zeros(1000, np.float32))
    np.save(tmp_path / "i.npy", np.array(1000, dtype=np.int64))
    result = subprocess.run(
        [sys.executable, "-m", "dlvm_mlir.tools.run", str(tmp_path / "m.mlir"), "--entry", "get", "--check-bounds",
         "--input", str(tmp_path / "t.npy"), "--input", str(tmp_path / "i.npy")],
        capture_output=True, text=True,
    )
    assert result.returncode == 1, result.stderr
    assert "index out of bounds in 'tensor.extract' at" in result.stderr and "Traceback" not in result.stderr


def test_constant_index_out_of_range() -> None:
    exe = dlvm_mlir.compile("""func.func @f(%x: tensor<4xf32>) -> f32 {
  %y = dlvm.exp %x : tensor<4xf32>
  %big = arith.constant 4294967296 : index
  %v = tensor.extract %y[%big] : tensor<4xf32>
  return %v : f32
}""", check_bounds=True, filename="const.mlir")
    with pytest.raises(ExecutionError, match="'tensor.extract' at const.mlir:4:8"):
        exe["f"](np.zeros(4, np.float32))
