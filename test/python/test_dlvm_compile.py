"""dlvm-compile (DLVM's dlc): artifacts built ahead of time, loaded by
dlvm_mlir.load and called from C through the generated header."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dlvm_mlir
from dlvm_mlir.backend import ExecutionError
from dlvm_mlir.backend.artifact import optimization_pipeline, runtime_library
from dlvm_mlir.backend.header import c_identifier
from dlvm_mlir.parsing import TEST_ASSERT_ENV
from dlvm_mlir.tools.compile import main as dlvm_compile

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "c"
RNG = np.random.default_rng(7)

LAYER = """func.func @layer(%x: tensor<33x70xf32>, %w: tensor<70x17xf32>, %b: tensor<1x17xf32>) -> tensor<33x17xf32> {
  %0 = dlvm.dot %x, %w : tensor<33x70xf32>, tensor<70x17xf32>
  %1 = dlvm.add %0, %b : tensor<33x17xf32>, tensor<1x17xf32>
  %2 = dlvm.tanh %1 : tensor<33x17xf32>
  return %2 : tensor<33x17xf32>
}
func.func @norm(%x: tensor<1000xf64>, %scale: f64) -> f64 {
  %0 = dlvm.mul %x, %x : tensor<1000xf64>, tensor<1000xf64>
  %1 = dlvm.reduce add %0 dims [0] : tensor<1000xf64>
  %2 = tensor.extract %1[] : tensor<f64>
  %3 = arith.mulf %2, %scale : f64
  return %3 : f64
}
"""


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dlvm_mlir.tools.compile", *args], capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})


def test_shared_object_loads_with_its_signatures(tmp_path: Path, capsys) -> None:
    (tmp_path / "layer.mlir").write_text(LAYER)
    assert dlvm_compile([str(tmp_path / "layer.mlir"), "-o", str(tmp_path / "liblayer.so"), "--threads", "2"]) == 0
    exe = dlvm_mlir.load(tmp_path / "liblayer.so")
    assert sorted(exe.function_names) == ["layer", "norm"]
    assert exe.signatures["norm"].describe() == "@norm(tensor<1000xf64>, f64) -> (f64)"
    x, w, b = RNG.standard_normal((33, 70), np.float32), RNG.standard_normal((70, 17), np.float32), RNG.standard_normal((1, 17), np.float32)
    np.testing.assert_allclose(exe["layer"](x, w, b), np.tanh(x.astype(np.float64) @ w + b), rtol=2e-5, atol=2e-5)
    v = RNG.standard_normal(1000)
    assert exe["norm"](v, 0.5) == pytest.approx(0.5 * float(v @ v), rel=1e-12)
    # calls are checked against the metadata stored in the object
    with pytest.raises(ExecutionError, match="shape mismatch"):
        exe["layer"](x[:32], w, b)
    with pytest.raises(ExecutionError, match="dtype mismatch"):
        exe["layer"](x.astype(np.float64), w, b)


def test_entry_points_choose_what_is_exported(tmp_path: Path) -> None:
    (tmp_path / "m.mlir").write_text(LAYER)
    assert dlvm_compile([str(tmp_path / "m.mlir"), "-o", str(tmp_path / "m.so"), "--entry", "norm"]) == 0
    exe = dlvm_mlir.load(tmp_path / "m.so")
    assert exe.function_names == ["norm"]
    exported = subprocess.run(["nm", "-D", "--defined-only", str(tmp_path / "m.so")], capture_output=True, text=True)
    if exported.returncode == 0:  # binutils is there: the entry point, its wrapper, the metadata, the error slot
        names = sorted(line.split()[-1] for line in exported.stdout.splitlines())
        assert names == ["__dlvm_metadata", "_mlir___dlvm_error", "_mlir__mlir_ciface_dlvm_norm", "_mlir_ciface_dlvm_norm"]


@pytest.mark.parametrize("emit, check", [
    ("obj", lambda data: data[:4] == b"\x7fELF"),
    ("asm", lambda data: b".text" in data and b"_mlir_ciface_dlvm_layer:" in data),
    ("llvm", lambda data: b"define void @_mlir_ciface_dlvm_layer(" in data and b"__dlvm_metadata" in data),
])
def test_other_artifacts(tmp_path: Path, emit: str, check) -> None:
    (tmp_path / "m.mlir").write_text(LAYER)
    out = tmp_path / f"m.{emit}"
    assert dlvm_compile([str(tmp_path / "m.mlir"), "-o", str(out), "--emit", emit]) == 0
    assert check(out.read_bytes())


def test_errors_are_located_and_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = dlvm.exp %x : tensor<5xf32>\n  return %0 : tensor<4xf32>\n}\n")
    done = run_cli(str(bad), "-o", str(tmp_path / "bad.so"))
    assert done.returncode == 1 and done.stderr.startswith(f"{bad}:2:")
    assert "Traceback" not in done.stderr
    crash = tmp_path / "crash.mlir"
    crash.write_text("func.func @crash_here(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
                     "  return %x : tensor<4x4xf32>\n}\n")
    done = run_cli(str(crash), "-o", str(tmp_path / "crash.so"), env={TEST_ASSERT_ENV: "crash_here"})
    assert done.returncode == 1 and "internal compiler error" in done.stderr and "reproducer" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_cli(str(tmp_path / "missing.mlir"), "-o", str(tmp_path / "x.so"))
    assert done.returncode == 1 and done.stderr.startswith("dlvm-compile: error: cannot read")
    (tmp_path / "m.mlir").write_text(LAYER)
    done = run_cli(str(tmp_path / "m.mlir"), "-o", str(tmp_path / "m.so"), "--entry", "nope")
    assert done.returncode == 1 and "no function named @nope" in done.stderr


def test_load_rejects_other_libraries() -> None:
    with pytest.raises(ExecutionError, match="not a dlvm-mlir artifact"):
        dlvm_mlir.load(runtime_library())
    with pytest.raises(ExecutionError, match="cannot load"):
        dlvm_mlir.load("/nonexistent/libmodel.so")


def test_header_names_are_c_identifiers() -> None:
    assert c_identifier("foo.bar-1") == "foo_bar_1"
    assert c_identifier("1x") == "_1x"


def _numpy_regression(steps: int = 300, lr: float = 0.1) -> tuple[np.ndarray, float, float]:
    """The SGD of examples/c/main.c in float64."""
    index = np.arange(64)[:, None] * 8 + np.arange(8)[None, :]
    x = ((index % 17) - 8) / 8.0
    w_true = np.array([1.0, -2.0, 0.5, 0.25, -1.0, 3.0, 0.0, -0.75])
    y = (x @ w_true + 0.5)[:, None]
    w, b = np.zeros((8, 1)), np.zeros((1, 1))
    for _ in range(steps):
        e = x @ w + b - y
        loss = float((e * e).mean())
        w, b = w - lr * (2 / 64) * (x.T @ e), b - lr * (2 / 64) * e.sum(keepdims=True)
    return w.ravel(), float(b[0, 0]), loss


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_example_trains_with_the_compiled_gradient(tmp_path: Path) -> None:
    """examples/c: dlvm-compile + the generated header + the system C compiler."""
    shutil.copy(EXAMPLE / "main.c", tmp_path)
    assert dlvm_compile([str(EXAMPLE / "regression.mlir"), "-o", str(tmp_path / "libregression.so"),
                         "--header", str(tmp_path / "regression.h")]) == 0
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "main.c", "-o", "train", "-L.", "-lregression",
                    "-Wl,-rpath,$ORIGIN"], cwd=tmp_path, check=True, capture_output=True, text=True)
    done = subprocess.run([str(tmp_path / "train")], capture_output=True, text=True, check=True)
    values = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    w = np.array([float(values[f"w{j}"]) for j in range(8)])
    w_ref, b_ref, loss_ref = _numpy_regression()
    np.testing.assert_allclose(w, w_ref, atol=2e-5)
    assert float(values["b"]) == pytest.approx(b_ref, abs=2e-5)
    assert float(values["final loss"]) == pytest.approx(loss_ref, rel=1e-3, abs=1e-7)
    assert values["step 0 loss"] and float(values["final loss"]) < 1e-4


def test_the_llvm_pipeline_is_the_default_one_pruned() -> None:
    """dialect/lib/CAPI/Codegen.cpp: the IR pipeline is LLVM's default one of the opt level,
    printed, pruned of loop load elimination and parsed again (a round trip that an LLVM
    update could break: the pruning would then silently keep the pass)."""
    o3 = optimization_pipeline(3)
    for kept in ("instcombine", "gvn", "slp-vectorizer", "loop-unroll", "coro-split"):
        assert kept in o3, kept
    assert "loop-load-elim" not in o3, o3
    assert "vectorize-forced-only" in o3, o3  # the loop vectorizer only where asked (never)
    assert "loop-load-elim" not in optimization_pipeline(1)
    assert "coro-split" in optimization_pipeline(0)  # O0 still lowers the async coroutines
    with pytest.raises(ValueError, match="opt_level"):
        optimization_pipeline(4)


ZERO_LOOP = """
llvm.func @zero(%p: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %z = llvm.mlir.constant(0.0 : f32) : f32
  llvm.br ^loop(%c0 : i64)
^loop(%i: i64):
  %done = llvm.icmp "sge" %i, %n : i64
  llvm.cond_br %done, ^exit, ^body
^body:
  %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %z, %q : f32, !llvm.ptr
  %j = llvm.add %i, %c1 : i64
  llvm.br ^loop(%j : i64)
^exit:
  llvm.return
}
"""


@pytest.mark.parametrize("llvm_options,memset", [("", True), ("-disable-loop-idiom-all", False)])
def test_llvm_options_reach_the_ir_pipeline(llvm_options: str, memset: bool) -> None:
    """CodegenOptions.llvm_options (``$DLVM_MLIR_LLVM_OPTIONS``) are set before LLVM's IR
    pipeline, from a process's first compile (they used to be set for code generation only):
    with loop idiom recognition off, a zero-filling loop stays a loop instead of a memset.
    In a fresh process: the options are process-wide."""
    script = f"""
from mlir import ir
from dlvm_mlir.backend.artifact import machine_code
from dlvm_mlir.backend.options import CodegenOptions
with ir.Context():
    module = ir.Module.parse({ZERO_LOOP!r})
    (text,) = machine_code(module, "llvm", CodegenOptions(opt_level=1, llvm_options={llvm_options!r}))
print("llvm.memset" in (text.decode() if isinstance(text, bytes) else text))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(memset), done.stdout + done.stderr


def test_an_unknown_llvm_option_is_an_error() -> None:
    from mlir import ir

    from dlvm_mlir.backend.artifact import machine_code
    from dlvm_mlir.backend.options import CodegenOptions

    with ir.Context():
        module = ir.Module.parse(ZERO_LOOP)
        with pytest.raises(ExecutionError, match="unknown LLVM option 'no-such-option'"):
            machine_code(module, "llvm", CodegenOptions(opt_level=1, llvm_options="-no-such-option"))
