"""dlvm-cpu-pipeline and dlvm-kernel-fusion: the passes' output runs and matches the compile() path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dlvm_mlir  # noqa: F401  (registers the dialect)
from dlvm_mlir.backend import entry_point_signatures, lower_to_llvm_cpu
from dlvm_mlir.backend.cache import load_llvm_module
from dlvm_mlir.backend.cpu import STAGE_NAMES
from dlvm_mlir.config import mlir_opt_path
from dlvm_mlir.passes import get_pass, run_pipeline
from dlvm_mlir.transforms.cpu_pipeline import STOP_POINTS, cpu_options
from dlvm_mlir.backend.kernel_fusion import FusionOptions, count_kernels, fuse_kernels
from mlir import ir

PROGRAM = """
func.func @layer(%x: tensor<16x48xf32>, %w: tensor<48x40xf32>, %b: tensor<1x40xf32>) -> tensor<16x40xf32> {
  %0 = dlvm.dot %x, %w : tensor<16x48xf32>, tensor<48x40xf32>
  %1 = dlvm.add %0, %b : tensor<16x40xf32>, tensor<1x40xf32>
  %2 = dlvm.tanh %1 : tensor<16x40xf32>
  return %2 : tensor<16x40xf32>
}
func.func @softmax(%x: tensor<16x40xf32>) -> tensor<16x40xf32> {
  %0 = dlvm.softmax %x axis 1 : tensor<16x40xf32>
  return %0 : tensor<16x40xf32>
}
func.func @loss(%x: tensor<16x40xf32>) -> tensor<f32> {
  %0 = dlvm.mul %x, %x : tensor<16x40xf32>, tensor<16x40xf32>
  %1 = dlvm.reduce add %0 dims [0, 1] : tensor<16x40xf32>
  return %1 : tensor<f32>
}
func.func private @loss_grad(tensor<16x40xf32>) -> tensor<16x40xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @loss wrt [0]>}
"""

RNG = np.random.default_rng(7)


def _run(text: str, pipeline: str) -> ir.Module:
    module = ir.Module.parse(text, ir.Context())
    run_pipeline(module, f"builtin.module({pipeline})")
    return module


def test_registered_with_every_stage_as_stop_point() -> None:
    cls = get_pass("dlvm-cpu-pipeline")
    assert cls is not None
    assert STOP_POINTS == ("linalg", *STAGE_NAMES)
    stop_at = next(option for option in cls.options if option.name == "stop-at")
    assert stop_at.choices == STOP_POINTS and stop_at.default == "to-llvm"
    assert get_pass("dlvm-kernel-fusion") is not None


def test_options_map_onto_cpu_options() -> None:
    options = cpu_options(threads=3, vectorize=False, fuse=False, fast_math=False, pack=False, vector_bits=128)
    assert (options.threads, options.vectorize, options.fuse_elementwise) == (3, False, False)
    assert (options.fast_math_approximations, options.pack_operands) == (False, False)
    assert options.target.vector_bits == 128 and options.schedule.threads == 3


def test_same_code_as_the_compile_path() -> None:
    """The pass runs the very stages of dlvm_mlir.compile(target="cpu")."""
    from dlvm_mlir.compiler import lower

    linalg = lower(PROGRAM)
    with linalg.context:
        lower_to_llvm_cpu(linalg, options=cpu_options(threads=2))
        expected = str(linalg)
    assert str(_run(PROGRAM, "dlvm-cpu-pipeline{threads=2}")) == expected


GRADIENT = """
func.func @loss(%x: tensor<8x16xf32>, %w: tensor<16x12xf32>, %v: tensor<12x4xf32>) -> tensor<f32> {
  %h0 = dlvm.dot %x, %w : tensor<8x16xf32>, tensor<16x12xf32>
  %h = dlvm.tanh %h0 : tensor<8x12xf32>
  %o = dlvm.dot %h, %v : tensor<8x12xf32>, tensor<12x4xf32>
  %e = dlvm.exp %o : tensor<8x4xf32>
  %s = dlvm.reduce add %e dims [0, 1] : tensor<8x4xf32>
  return %s : tensor<f32>
}
func.func private @loss_grad(tensor<8x16xf32>, tensor<16x12xf32>, tensor<12x4xf32>)
    -> (tensor<16x12xf32>, tensor<12x4xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @loss wrt [1, 2]>}
"""


@pytest.mark.parametrize("policy", ["save-everything", "save-nothing"])
def test_checkpoint_policy_as_in_compile(policy: str) -> None:
    """One front half (dlvm_mlir.stages): the pass honours the checkpoint policy as compile() does."""
    from dlvm_mlir.compiler import CompileOptions, lower

    expected = str(lower(GRADIENT, options=CompileOptions(checkpoint=policy)))
    got = str(_run(GRADIENT, f"dlvm-cpu-pipeline{{stop-at=linalg checkpoint={policy}}}"))
    assert got == expected
    if policy != "save-everything":
        assert got != str(_run(GRADIENT, "dlvm-cpu-pipeline{stop-at=linalg}"))


def test_llvm_output_translates_and_runs() -> None:
    llvm_module = _run(PROGRAM, "dlvm-cpu-pipeline")
    text = str(llvm_module)
    translate = Path(mlir_opt_path()).with_name("mlir-translate")
    llvm_ir = subprocess.run(
        [str(translate), "--mlir-to-llvmir"], input=text, capture_output=True, text=True, check=True
    ).stdout
    assert "define void @_mlir_ciface_dlvm_layer(" in llvm_ir

    signatures = entry_point_signatures(_run(PROGRAM, "dlvm-cpu-pipeline{stop-at=linalg}"))
    exe = load_llvm_module(llvm_module, signatures)
    x = RNG.standard_normal((16, 48)).astype(np.float32)
    w = RNG.standard_normal((48, 40)).astype(np.float32) / 7
    b = RNG.standard_normal((1, 40)).astype(np.float32)
    np.testing.assert_allclose(exe.layer(x, w, b), np.tanh(x.astype(np.float64) @ w + b), rtol=1e-5, atol=1e-5)
    y = RNG.standard_normal((16, 40)).astype(np.float32)
    e = np.exp(y - y.max(axis=1, keepdims=True))
    np.testing.assert_allclose(exe.softmax(y), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exe.loss(y), (y.astype(np.float64) ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(exe.loss_grad(y), 2 * y, rtol=1e-6)


@pytest.mark.parametrize(
    "options, message",
    [
        ("threads=0", "threads must be in [1, 1024], got 0"),
        ("vector-bits=96", "vector-bits must be 0 (host), 128, 256 or 512, got 96"),
        ("stop-at=nowhere", "option 'stop-at' expects one of linalg,"),
        ("threads=two", "option 'threads' expects an integer, got 'two'"),
    ],
)
def test_bad_options_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: str, message: str
) -> None:
    from dlvm_mlir.tools.opt import main as opt_main

    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    assert opt_main([f"--dlvm-cpu-pipeline={options}", str(src)]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and message in err and "Traceback" not in err


def test_unsupported_input_is_an_error_at_the_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dlvm_mlir.tools.opt import main as opt_main

    src = tmp_path / "dyn.mlir"
    src.write_text(
        "func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
        "  %0 = dlvm.exp %x : tensor<?xf32>\n"
        "  return %0 : tensor<?xf32>\n"
        "}\n"
    )
    assert opt_main(["--dlvm-cpu-pipeline", str(src)]) == 1
    err = capsys.readouterr().err
    assert f"{src}:2:8: error: 'dlvm.exp' op cannot be lowered by dlvm-to-linalg" in err
    assert "Traceback" not in err


def test_count_kernels_before_and_after_fusion() -> None:
    module = _run(PROGRAM, "dlvm-differentiate,dlvm-to-linalg,canonicalize,cse")
    before = count_kernels(module, per_function=True)
    assert before["layer"] == {"total": 4, "fill": 1, "generic": 2, "matmul": 1}
    assert before["softmax"] == {"total": 6, "fill": 2, "generic": 2, "reduce": 2}
    with module.context:
        fuse_kernels(module, FusionOptions(duplicate_producers=4))
    after = count_kernels(module, per_function=True)
    assert after["layer"] == {"total": 3, "fill": 1, "generic": 1, "matmul": 1}
    assert after["softmax"] == {"total": 5, "fill": 2, "generic": 1, "generic-reduction": 2}
    assert after["loss"] == {"total": 2, "fill": 1, "generic-reduction": 1}
    total = count_kernels(module)
    assert total["total"] == sum(counts["total"] for counts in after.values())
    assert total["matmul"] == 1


# --------------------------------------------------------------------------
# dlvm-opt's instrumentation sees inside the pipeline (issue 18)
# --------------------------------------------------------------------------


def _dlvm_opt(tmp_path: Path, text: str, *flags: str) -> str:
    """Run dlvm-opt as a program (MLIR writes timing and IR dumps to fd 2); its stderr."""
    src = tmp_path / "p.mlir"
    src.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "dlvm_mlir.tools.opt", *flags, str(src), "-o", os.devnull],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


def timing_rows(report: str) -> list[str]:
    """The names in an MLIR timing report, in order (nested ones indented as printed)."""
    rows = []
    for line in report.splitlines():
        if "%)" in line:
            rows.append(line.rsplit("%)", 1)[1][2:].rstrip())
    return rows


def test_timing_report_lists_every_stage_and_pass(tmp_path: Path) -> None:
    rows = timing_rows(_dlvm_opt(tmp_path, PROGRAM, "--dlvm-cpu-pipeline=vector-bits=256 threads=2", "--mlir-timing"))
    names = [row.strip() for row in rows]
    assert "CpuPipeline" not in names  # not one opaque entry
    steps = [name for name in names if name.startswith("CpuPipeline.")]
    stages = [step.removeprefix("CpuPipeline.").split("/")[0] for step in steps]
    # to-llvm is upstream passes only
    assert list(dict.fromkeys(stages)) == [
        "linalg", "entry-points", "fuse", "approximate-math", "pack", "tile-and-vectorize", "bufferize",
        "lower-vectors", "parallelize",
    ]
    assert {
        "CpuPipeline.tile-and-vectorize/schedules",
        "CpuPipeline.tile-and-vectorize/vector-cleanup",
        "CpuPipeline.bufferize/copy-repeated-buffers",
        "CpuPipeline.parallelize/dispatch-every-block",
    } <= set(steps)
    upstream = [
        "Inliner", "LinalgElementwiseOpFusionPass", "OneShotBufferizePass", "BufferResultsToOutParamsPass",
        "ConvertVectorToSCF", "AsyncParallelForPass", "ConvertVectorToLLVMPass", "ConvertToLLVMPass",
    ]
    positions = [names.index(name) for name in upstream]
    assert positions == sorted(positions), "upstream passes out of pipeline order"
    assert names.index("CpuPipeline.tile-and-vectorize/schedules") < names.index("OneShotBufferizePass")
    assert names.index("CpuPipeline.lower-vectors") < names.index("ConvertVectorToSCF")


def test_print_ir_after_all_shows_every_step(tmp_path: Path) -> None:
    err = _dlvm_opt(tmp_path, PROGRAM, "--dlvm-cpu-pipeline=vector-bits=256 threads=1", "--mlir-print-ir-after-all")
    dumps = err.split("// -----// IR Dump After ")[1:]
    by_name = {dump.split(" //----- //", 1)[0]: dump for dump in dumps}
    schedules = by_name["CpuPipeline.tile-and-vectorize/schedules (dlvm-cpu-pipeline)"]
    assert "vector.transfer_read" in schedules and "tensor<" in schedules and "memref<" not in schedules
    assert "memref<" in by_name["OneShotBufferizePass (one-shot-bufferize)"]
    assert "llvm.func" in by_name["ConvertToLLVMPass (convert-to-llvm)"]
    order = [dump.split(" //----- //", 1)[0] for dump in dumps]
    # passes a step runs only when needed (canonicalize,cse after the math
    # approximations of tanh) are printed too, inside their step
    math = order.index("CpuPipeline.approximate-math (dlvm-cpu-pipeline)")
    assert order[math - 2 : math] == ["Canonicalizer (canonicalize)", "CSE (cse)"]


def test_print_ir_after_change_skips_steps_that_change_nothing(tmp_path: Path) -> None:
    flags = ("--dlvm-cpu-pipeline=vector-bits=256 threads=1", "--mlir-print-ir-after-all")
    every = _dlvm_opt(tmp_path, PROGRAM, *flags)
    changed = _dlvm_opt(tmp_path, PROGRAM, *flags, "--mlir-print-ir-after-change")
    check = "IR Dump After CpuPipeline.entry-points/check-externals (dlvm-cpu-pipeline)"
    assert check in every and check not in changed
    assert "IR Dump After CpuPipeline.tile-and-vectorize/schedules (dlvm-cpu-pipeline)" in changed


def test_pipeline_expands_into_its_steps() -> None:
    from dlvm_mlir.passes import Pipeline

    pipeline = Pipeline.parse("dlvm-cpu-pipeline{stop-at=bufferize vector-bits=256}")
    assert [type(p).__name__ for p in pipeline.python_passes] == ["CpuPipeline"]
    assert pipeline.expanded_text().startswith("builtin.module(dlvm-cpu-pipeline{")
    text = str(pipeline.build(ir.Context()))
    assert "one-shot-bufferize" in text and "convert-to-llvm" not in text  # stops after bufferize
    # bad options: the pass runs as itself and reports them (test_bad_options_are_errors)
    assert get_pass("dlvm-cpu-pipeline")(threads=0).expand() is None
