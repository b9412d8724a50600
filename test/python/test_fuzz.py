"""dlvm-fuzz: corpus, mutators, classifier, differential comparison, reducer, worker, and a fixed-seed run."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import dlvm_mlir
from dlvm_mlir.errors import DLVMError
from dlvm_mlir.fuzz import corpus as corpus_mod
from dlvm_mlir.fuzz.mutators import ELEMENT_TYPES, MUTATORS, Target, mutate, too_large
from dlvm_mlir.fuzz.oracle import (
    classify_exception,
    compare_results,
    is_bad,
    make_inputs,
    run_program,
    signature,
    tolerance_for,
)
from dlvm_mlir.fuzz.reducer import blocks, reduce_lines
from dlvm_mlir.fuzz.worker import Worker
from dlvm_mlir.interpreter import InterpreterError
from dlvm_mlir.tools.fuzz import main

TEST_DIR = Path(__file__).resolve().parents[1]

MLP = """\
func.func @mlp(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x4xf32> {
  %0 = dlvm.dot %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
  %1 = dlvm.add %0, %b : tensor<2x4xf32>, tensor<1x4xf32>
  %2 = dlvm.tanh %1 : tensor<2x4xf32>
  %3 = dlvm.cmp gt, %2, %1 : tensor<2x4xf32>, tensor<2x4xf32>
  %4 = dlvm.select %3, %2, %1 : tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xf32>
  return %4 : tensor<2x4xf32>
}
func.func @sum(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = dlvm.reduce add %x dims [0] : tensor<4xf32>
  %c = dlvm.constant dense<2.5> : tensor<f32>
  %1 = dlvm.mul %0, %c : tensor<f32>, tensor<f32>
  return %1 : tensor<f32>
}
"""


@pytest.fixture(scope="module")
def corpus() -> corpus_mod.Corpus:
    pieces = [{"id": "mlp", "text": MLP}]
    pieces += [p for p in corpus_mod.load_pieces(TEST_DIR / "AD" / "ReverseMode")][:12]
    return corpus_mod.Corpus([corpus_mod.annotate(p) for p in pieces])


# -- corpus -------------------------------------------------------------------


def test_pieces_are_split_and_cleaned():
    pieces = corpus_mod.load_pieces(TEST_DIR)
    assert len(pieces) > 100
    for piece in pieces:
        assert not any(line.strip().startswith("//") for line in piece["text"].split("\n"))
    assert corpus_mod.clean_piece("// RUN: x\n\n\nfunc.func @f() {\n  return\n}\n// CHECK: y\n") == (
        "func.func @f() {\n  return\n}\n"
    )


def test_annotation_records_ops_and_values(corpus):
    mlp = corpus.pieces[0]
    assert mlp["valid"]
    assert [f["name"] for f in mlp["funcs"]] == ["mlp", "sum"]
    dot = next(op for op in mlp["ops"] if op["name"] == "dlvm.dot")
    assert dot["results"] == ["%0"] and dot["operands"] == ["%x", "%w"]
    assert dot["result_types"] == ["tensor<2x4xf32>"]
    assert {"name": "%x", "type": "tensor<2x3xf32>"}.items() <= mlp["values"][0].items()
    assert corpus_mod.result_names("  %r:2 = scf.for") == ["%r#0", "%r#1"]
    assert corpus_mod.Corpus([corpus_mod.annotate({"id": "bad", "text": "func.func @f( {"})]).invalid


# -- mutators -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MUTATORS))
def test_each_mutator_changes_the_program(name, corpus):
    fn = MUTATORS[name][0]
    rng = random.Random(0)
    outputs = {fn(Target(MLP, corpus.pieces[0], corpus, rng)) for _ in range(20)}
    outputs.discard(None)
    assert outputs - {MLP}


def test_mutation_is_deterministic(corpus):
    for seed in range(20):
        a = mutate(corpus.pieces[0], corpus, random.Random(seed))
        b = mutate(corpus.pieces[0], corpus, random.Random(seed))
        assert a == b


def test_structured_mutants_mostly_verify(corpus):
    """Splicing, wrapping and consistent shape changes keep most programs valid."""
    from dlvm_mlir.parsing import parse_module

    rng = random.Random(1)
    valid = total = 0
    for name in ("splice", "wrap_if", "wrap_for", "dup_op", "shape_dim"):
        for _ in range(10):
            text = MUTATORS[name][0](Target(MLP, corpus.pieces[0], corpus, rng))
            if text is None:
                continue
            total += 1
            try:
                parse_module(text, dlvm_mlir.make_context(), "m.mlir")
                valid += 1
            except DLVMError:
                pass
    assert total >= 40 and valid >= total // 2


def test_shape_limit():
    assert too_large("tensor<1024x1024x2xf32>")
    assert not too_large("tensor<1000x1000xf32> tensor<?x8xf32>")


# -- classification -----------------------------------------------------------


def test_classes_of_exceptions():
    assert classify_exception(DLVMError("cannot parse\n  fuzz.mlir:3:5: error: bad"), 10)[0] == "located"
    assert classify_exception(DLVMError("failed\n  fuzz.mlir:0:0: error: bad"), 10)[0] == "unlocated"
    assert classify_exception(DLVMError("fuzz.mlir:99:1: error: past the end"), 10)[0] == "unlocated"
    assert classify_exception(DLVMError("no location at all"), 10)[0] == "unlocated"
    # a position the program's own loc(...) attributes name (dlvm-fuzz seed 606)
    own = '#loc1 = loc("/src/model.mlir":13:1)'
    assert classify_exception(DLVMError("/src/model.mlir:13:1: error: no terminator"), 10, own)[0] == "located"
    assert classify_exception(DLVMError("/src/model.mlir:14:1: error: no terminator"), 10, own)[0] == "unlocated"
    assert classify_exception(DLVMError("fuzz.mlir:2:1: error: internal compiler error: x"), 10)[0] == "ice"
    assert classify_exception(KeyError("k"), 10)[0] == "traceback"
    try:
        try:
            raise TypeError("handler bug")
        except TypeError as cause:
            raise InterpreterError("'dlvm.x' failed: TypeError: handler bug") from cause
    except InterpreterError as exc:
        assert classify_exception(exc, 10)[0] == "traceback"
    assert is_bad("crash", "run") and is_bad("miscompile", "compare") and not is_bad("located", "compile")
    assert is_bad("timeout", "compile") and not is_bad("timeout", "run")


def test_signatures_group_messages_that_differ_in_names_and_numbers():
    a = signature("located", "parse", "cannot parse\n  fuzz.mlir:3:5: error: '%x' expects tensor<4xf32>, got 7")
    b = signature("located", "parse", "cannot parse\n  fuzz.mlir:9:2: error: '%y' expects tensor<8x8xf64>, got 12")
    assert a == b
    assert a != signature("located", "optimize", "fuzz.mlir:3:5: error: '%x' expects tensor<4xf32>, got 7")


# -- the differential comparison ---------------------------------------------


def _never(_args):
    raise AssertionError("not needed")


def test_compare_accepts_rounding_and_rejects_wrong_values():
    rng = np.random.default_rng(0)
    ref = np.array([1.0, 2.0, np.nan, np.inf], np.float32)
    close = ref * np.float32(1 + 1e-6)
    assert compare_results("f", close, ref, _never, [], "tensor<4xf32>", rng) is None
    exact64 = ref.astype(np.float64)
    message = compare_results("f", ref + np.float32(0.5), ref, lambda a: exact64, [ref], "tensor<4xf32>", rng)
    assert message and message.startswith("miscompile: @f result #0")
    nan_moved = np.array([1.0, np.nan, np.nan, np.inf], np.float32)
    assert compare_results("f", nan_moved, ref, lambda a: exact64, [ref], "tensor<4xf32>", rng)
    ints = np.array([1, 2], np.int32)
    assert compare_results("f", ints, ints, _never, [], "tensor<2xi32>", rng) is None
    assert compare_results("f", (ints, ints), (ints,), _never, [], "", rng)


def test_compare_ignores_ill_conditioned_elements():
    """An element whose float64 value moves under a tiny input perturbation is not a miscompile."""
    rng = np.random.default_rng(0)
    x = np.array([1.0, 1.0 + 1e-7], np.float32)

    def cancel(args):  # (x1 - x0) * 1e6: the perturbation changes it entirely
        a = np.asarray(args[0] if args is not None else x, np.float64)
        return np.array([(a[1] - a[0]) * 1e6])

    compiled = np.array([0.0], np.float32)
    reference = np.array([0.119], np.float32)
    assert compare_results("f", compiled, reference, cancel, [x], "tensor<2xf32>", rng) is None


def test_compare_bounds_rounding_by_the_interpreters_own_error():
    """dlvm-fuzz seed 101: a gradient element summed over a cancelling batch, where the
    compiled float32 value is 8e-4 off the float64 one and the interpreter's worst element
    1.6e-3 off: other summation orders, not a miscompile. Four times the interpreter's
    worst error is the limit."""
    rng = np.random.default_rng(0)
    exact = np.array([1.3756452, 10.0, -3.0])
    reference = np.array([1.3754715, 10.0016, -3.0], np.float32)  # worst: 1.6e-3
    near = np.array([1.3767704, 10.0, -3.0], np.float32)
    assert compare_results("f", near, reference, lambda a: exact, [exact.astype(np.float32)],
                           "tensor<3xf32>", rng) is None
    far = np.array([1.3756452 + 0.01, 10.0, -3.0], np.float32)
    assert compare_results("f", far, reference, lambda a: exact, [exact.astype(np.float32)], "tensor<3xf32>", rng)


def test_compare_ignores_overflow_at_the_edge_of_the_range():
    rng = np.random.default_rng(0)
    compiled = np.array([np.inf, 1.0], np.float32)
    reference = np.array([3.0e38, 1.0], np.float32)
    exact = lambda args: np.array([3.0e38, 1.0])  # noqa: E731
    assert compare_results("f", compiled, reference, exact, [reference], "tensor<2xf32>", rng) is None
    early = np.array([1.0e37, 1.0], np.float32)
    assert compare_results("f", compiled, early, lambda a: early.astype(np.float64), [early], "tensor<2xf32>", rng)
    # the exact value is beyond f32 (seed 707): an infinity of its sign is right, whatever the
    # interpreter's float32 evaluation gave; the wrong sign is not
    beyond = lambda args: np.array([7.8e53, 1.0])  # noqa: E731
    cancelled = np.array([0.0, 1.0], np.float32)
    assert compare_results("f", compiled, cancelled, beyond, [cancelled], "tensor<2xf32>", rng) is None
    negative = np.array([-np.inf, 1.0], np.float32)
    assert compare_results("f", negative, cancelled, beyond, [cancelled], "tensor<2xf32>", rng)
    # f32 intermediates overflowed on both sides (seed 808): inf against NaN, float64 finite
    nan = np.array([np.nan, 1.0], np.float32)
    assert compare_results("f", compiled, nan, lambda a: np.array([0.0, 1.0]), [nan], "tensor<2xf32>", rng) is None
    assert compare_results("f", compiled, early, lambda a: np.array([0.0, 1.0]), [early], "tensor<2xf32>", rng)


def test_tolerance_follows_the_least_precise_type():
    assert tolerance_for("tensor<4xf64>")[0] < tolerance_for("tensor<4xf32>")[0] < tolerance_for("tensor<2xf16>")[0]
    assert tolerance_for("%x : bf16")[0] > tolerance_for("tensor<2xf16>")[0]


def test_inputs_follow_the_signature():
    args = make_inputs(["tensor<2x3xf32>", "tensor<4xi1>", "index", "f64", "tensor<i8>"], np.random.default_rng(0))
    assert [np.asarray(a).dtype for a in args] == [np.float32, np.bool_, np.int64, np.float64, np.int8]
    assert args[0].shape == (2, 3) and np.asarray(args[4]).shape == ()
    assert make_inputs(["memref<4xf32>"], np.random.default_rng(0)) is None
    # numpy cannot make a 2^63-1 x 0 array (seed 404: the worker died of the ValueError)
    assert make_inputs(["tensor<9223372036854775807x0xf32>"], np.random.default_rng(0)) is None
    assert make_inputs(["tensor<1000000x0xf32>"], np.random.default_rng(0))[0].shape == (1000000, 0)
    # unsigned types: the element-type mutator writes them, the inputs wrap small negatives
    assert {"ui8", "ui32"} <= set(ELEMENT_TYPES)
    (u,) = make_inputs(["tensor<64xui8>"], np.random.default_rng(0))
    assert u.dtype == np.uint8 and u.max() >= 250 and u.min() == 0


def test_a_program_runs_through_every_stage():
    outcome = run_program(MLP, seed=3, cpu_pipeline=1.0, gpu_emulate=1.0)
    assert outcome["cls"] == "ok" and outcome["stage"] == "gpu-compare", outcome["message"]
    assert outcome["calls"] >= 2 and outcome["gpu_calls"] == outcome["calls"]
    assert any("dlvm-cpu-pipeline" in note for note in outcome["notes"])
    outcome = run_program(MLP, seed=3, gpu_emulate=0.0)
    assert outcome["stage"] == "compare" and "gpu_calls" not in outcome


def test_a_planted_gpu_miscompile_is_found(monkeypatch):
    """The emulated GPU's results are compared with the interpreter's like the CPU's."""
    from dlvm_mlir.backend.gpu_emulator import EmulatedGpuProgram

    real = EmulatedGpuProgram.__call__
    monkeypatch.setattr(EmulatedGpuProgram, "__call__", lambda self, *a: real(self, *a) + np.float32(1))
    outcome = run_program(MLP, seed=3, declare=False, gpu_emulate=1.0)
    assert outcome["cls"] == "miscompile" and outcome["stage"] == "gpu-compare", outcome
    assert outcome["message"].startswith("emulated GPU: miscompile: @mlp result #0")


def test_a_planted_miscompile_is_found(monkeypatch):
    real = dlvm_mlir.compile

    class OffByOne:
        def __init__(self, exe):
            self.exe = exe
            self.function_names = exe.function_names

        def __getitem__(self, name):
            return lambda *args: self.exe[name](*args) + np.float32(1)

    monkeypatch.setattr(dlvm_mlir, "compile", lambda *a, **k: OffByOne(real(*a, **k)))
    outcome = run_program(MLP, seed=3, declare=False)
    assert outcome["cls"] == "miscompile" and outcome["stage"] == "compare"
    assert outcome["message"].startswith("miscompile: @mlp result #0")


def test_a_result_that_depends_on_unwritten_memory_is_no_miscompile(monkeypatch):
    """Reading a fresh buffer is undefined behaviour: the compiled value is whatever was there
    (dlvm-fuzz seed 606). The oracle reruns the interpreter with other fresh contents and
    notes the dependence instead of reporting a miscompile; a planted error in a program
    without it is still a miscompile (test above)."""
    real = dlvm_mlir.compile

    class Garbage:  # what the alloca held: certainly not the interpreter's value
        def __init__(self, exe):
            self.exe = exe
            self.function_names = exe.function_names

        def __getitem__(self, name):
            return lambda *args: self.exe[name](*args) + np.int64(12345)

    monkeypatch.setattr(dlvm_mlir, "compile", lambda *a, **k: Garbage(real(*a, **k)))
    text = "func.func @f(%x: i64) -> i64 {\n  %m = memref.alloca() : memref<i64>\n  %y = memref.load %m[] : memref<i64>\n  return %y : i64\n}\n"
    outcome = run_program(text, seed=0, declare=False)
    assert outcome["cls"] == "ok", outcome
    assert any("depends on memory nothing wrote" in note for note in outcome["notes"]), outcome["notes"]


def test_errors_are_located_or_not():
    outcome = run_program("func.func @f() {\n  %x = dlvm.exp %y : tensor<4xf32>\n}\n", seed=0)
    assert (outcome["cls"], outcome["stage"]) == ("located", "parse")


# -- reducer ------------------------------------------------------------------


def test_reducer_keeps_only_what_the_failure_needs():
    text = "\n".join(f"line {i}" for i in range(40)) + "\n"
    reduced, tests = reduce_lines(text, lambda t: "line 7\n" in t + "\n" and "line 31" in t)
    assert reduced == "line 7\nline 31\n"
    assert tests < 150


def test_reducer_deletes_whole_blocks():
    lines = MLP.split("\n")
    assert (0, 8) in blocks(lines)  # the first function with its closing brace
    reduced, _ = reduce_lines(MLP, lambda t: "@sum" in t and t.count("{") == t.count("}") and "return %1" in t)
    assert "@mlp" not in reduced and "@sum" in reduced


# -- worker -------------------------------------------------------------------


def _abort(_payload):
    os.abort()


def test_worker_survives_crashes_and_timeouts(tmp_path):
    worker = Worker(tmp_path, handlers={"abort": _abort, "sleep": time.sleep, "echo": lambda p: p,
                                        "fail": lambda p: 1 / 0})
    try:
        assert worker.request("echo", 1, 30) == ("done", 1, "")
        status, message, _ = worker.request("abort", None, 30)
        assert status == "crash" and "SIGABRT" in message
        assert worker.request("sleep", 5, 0.5)[0] == "timeout"
        assert worker.request("echo", 2, 30) == ("done", 2, "")
        assert worker.starts == 3
        # an exception in the harness is its traceback, and the worker goes on
        status, result, _ = worker.request("fail", None, 30)
        assert status == "done" and "ZeroDivisionError" in result["error"]
        assert worker.request("echo", 3, 30) == ("done", 3, "") and worker.starts == 3
    finally:
        worker.stop()


# -- command line and a fixed-seed run ------------------------------------------


def test_replay_prints_the_outcome(tmp_path, capsys):
    path = tmp_path / "p.mlir"
    path.write_text(MLP)
    assert main(["--replay", str(path), "--seed", "1"]) == 0
    assert "class: ok" in capsys.readouterr().out
    assert main(["--replay", str(tmp_path / "missing.mlir")]) == 1
    assert main(["--corpus", str(tmp_path / "none"), "--count", "1", "--out", str(tmp_path / "o")]) == 1


def test_fixed_seed_run_finds_no_failures(tmp_path):
    """A short deterministic run over the whole corpus (``dlvm-fuzz`` in a fresh process, as
    ``make fuzz`` runs it): no crash, traceback, unlocated error, internal error or miscompile."""
    out = tmp_path / "fuzz-out"
    command = [sys.executable, "-m", "dlvm_mlir.tools.fuzz", "--seed", "1", "--count", "50",
               "--no-reduce", "--quiet", "--out", str(out), "--corpus", str(TEST_DIR)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["programs"] == 50
    assert summary["counts"]["ok"] >= 10, summary["counts"]
    failures = [f"{f['signature']}: {f['reproducer']}" for f in summary["failures"]]
    assert summary["bad"] == 0, "\n".join(failures)
    assert done.returncode == 0, done.stderr
