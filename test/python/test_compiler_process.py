"""The compiler process: a crash, an abort or a hang of compiler work is an
InternalCompilerError (a CompileError) in the caller, whose process goes on."""

from __future__ import annotations

import functools
import os
import signal
import time

import numpy as np
import pytest

import dlvm_mlir
from dlvm_mlir import crash_guard
from dlvm_mlir.compiler_process import compiler_process, direct_mode, report_stage
from dlvm_mlir.errors import CompileError, InternalCompilerError

DENSE = """func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = dlvm.dot %x, %w : tensor<4x8xf32>, tensor<8x3xf32>
  return %0 : tensor<4x3xf32>
}
"""


def _die(how: str) -> None:
    report_stage("dying")
    if how == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif how == "abort":
        os.abort()
    elif how == "hang":
        time.sleep(60)


def _environment(name: str) -> str | None:
    return os.environ.get(name)


def _pid() -> int:
    return os.getpid()


def _raise() -> None:
    raise CompileError("a located error from the compiler")


def works_afterwards() -> None:
    """A new program (no cache has it) compiles and runs."""
    exe = dlvm_mlir.compile(DENSE + f"// {time.time_ns()}\n")
    x, w = np.ones((4, 8), np.float32), np.ones((8, 3), np.float32)
    np.testing.assert_array_equal(exe["f"](x, w), np.full((4, 3), 8, np.float32))


@pytest.mark.parametrize("how, text", [("segfault", "SIGSEGV"), ("abort", "SIGABRT")])
def test_a_dying_compiler_is_an_internal_compiler_error(how: str, text: str) -> None:
    compiler_process().prestart()
    starts = compiler_process().starts
    with pytest.raises(InternalCompilerError) as info:
        crash_guard.isolated(functools.partial(_die, how), source=DENSE, filename="m.mlir", reproduce="how")
    err = info.value
    assert isinstance(err, CompileError)
    assert text in err.assertion and err.stage == "dying"
    assert err.reproducer.read_text() == DENSE and (err.reproducer.parent / "README").read_text() == "how\n"
    works_afterwards()
    # the crash was in the request's child: the server itself lives on
    assert compiler_process().starts == starts


def test_a_hanging_compiler_times_out() -> None:
    start = time.perf_counter()
    with pytest.raises(InternalCompilerError, match="did not finish within 0.5 s"):
        crash_guard.isolated(functools.partial(_die, "hang"), timeout=0.5)
    assert time.perf_counter() - start < 30
    works_afterwards()


def test_the_compile_timeout_is_the_users(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DLVM_MLIR_COMPILE_TIMEOUT", "0.001")
    with pytest.raises(InternalCompilerError, match="did not finish within"):
        dlvm_mlir.compile(DENSE + "// timeout\n")
    monkeypatch.setenv("DLVM_MLIR_COMPILE_TIMEOUT", "soon")
    with pytest.raises(CompileError, match="must be a number of seconds"):
        dlvm_mlir.compile(DENSE + "// timeout 2\n")


def test_errors_come_back_as_they_were_raised() -> None:
    with pytest.raises(CompileError, match="a located error from the compiler"):
        crash_guard.isolated(_raise)


def test_requests_see_the_callers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    compiler_process().prestart()
    monkeypatch.setenv("DLVM_TEST_VARIABLE", "set after the server started")
    assert crash_guard.isolated(functools.partial(_environment, "DLVM_TEST_VARIABLE")) == "set after the server started"


def test_work_runs_in_another_process() -> None:
    assert crash_guard.isolated(_pid) != os.getpid()
    with direct_mode():
        assert crash_guard.isolated(_pid) != os.getpid()
    assert compiler_process().direct is False


def test_a_killed_server_is_started_again() -> None:
    process = compiler_process()
    process.prestart()
    starts = process.starts
    process._server.kill()
    process._server.wait()
    works_afterwards()
    assert process.starts == starts + 1


def test_timing_reports_every_stage(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = dlvm_mlir.compile(DENSE + "// timing\n", timing=True)
    err = capsys.readouterr().err
    assert err.startswith("dlvm-mlir: compiled <input> in ")
    for stage in ("parse", "ad", "optimize", "linalg", "tile-and-vectorize", "bufferize", "to-llvm", "llvm"):
        assert f"  {stage} " in err and stage in exe.seconds
    monkeypatch.setenv("DLVM_MLIR_TIMING", "1")
    dlvm_mlir.compile(DENSE + "// timing from the environment\n")
    assert "dlvm-mlir: compiled" in capsys.readouterr().err
    dlvm_mlir.compile(DENSE + "// timing from the environment\n")  # a cache hit compiles nothing
    assert capsys.readouterr().err == ""
