"""The schedule search and the tuning database (dlvm_mlir/backend/tuning.py).

Every knob value the search may pick must compile to correct code (checked
against the interpreter in float64); the search itself is tested with a fake
timer, so what it picks is deterministic; the database is shared across
processes, survives damage and takes part in the compile cache's key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

import dlvm_mlir
from dlvm_mlir.backend import CpuOptions, tuning
from dlvm_mlir.backend.cache import compile_cpu
from dlvm_mlir.backend.options import ScheduleOptions
from dlvm_mlir.compiler import lower
from dlvm_mlir.errors import CompileError
from dlvm_mlir.interpreter import run as interpret

RNG = np.random.default_rng(77)


def _conv_gradients(n: int, c: int, h: int, w: int, groups: int, f: int, k: int) -> str:
    """A convolution (pad 1, relu) and both its gradients, seeded by ``dy``."""
    o = h + 2 - k + 1, w + 2 - k + 1
    xt, kt, yt = (f"tensor<{n}x{c}x{h}x{w}xf32>", f"tensor<{f}x{c // groups}x{k}x{k}xf32>",
                  f"tensor<{n}x{f}x{o[0]}x{o[1]}xf32>")
    conv = f"dlvm.convolve %x, %k padding [1, 1, 1, 1] groups {groups} : {xt}, {kt}"
    return f"""func.func @fwd(%x: {xt}, %k: {kt}) -> {yt} {{
  %y = {conv}
  %r = dlvm.relu %y : {yt}
  return %r : {yt}
}}
func.func @seeded(%x: {xt}, %k: {kt}, %dy: {yt}) -> tensor<f32> {{
  %y = {conv}
  %p = dlvm.mul %y, %dy : {yt}, {yt}
  %s = dlvm.reduce add %p dims [0, 1, 2, 3] : {yt}
  return %s : tensor<f32>
}}
func.func private @grads({xt}, {kt}, {yt}) -> ({xt}, {kt})
    attributes {{dlvm.gradient = #dlvm.gradient<of @seeded wrt [0, 1]>}}
"""


# a dense layer (20 filters: remainders for tiles of 6 and 8; the kernel gradient's filters
# padded to 32) and a grouped one (rows of one vector: the kernel gradient's lane-wise partial sums)
DENSE = _conv_gradients(3, 8, 8, 64, 1, 20, 3)
GROUPED = _conv_gradients(3, 12, 10, 16, 2, 10, 3)
MATMUL = """func.func @mm(%a: tensor<70x300xf32>, %b: tensor<300x200xf32>) -> tensor<70x200xf32> {
  %c = dlvm.dot %a, %b : tensor<70x300xf32>, tensor<300x200xf32>
  %t = dlvm.tanh %c : tensor<70x200xf32>
  return %t : tensor<70x200xf32>
}
"""


def _check_program(source: str, schedule: ScheduleOptions, kinds: set[str]) -> None:
    """Compile ``source`` with ``schedule`` (2 threads) and compare each entry point with
    the interpreter in float64; the schedules must include ``kinds``, none failed."""
    exe = compile_cpu(str(lower(source, until="linalg")), options=CpuOptions(threads=2, schedule=schedule),
                      use_cache=False)
    records = exe.lowering.schedules
    assert kinds <= {r.plan.kind for r in records}, [r.plan.kind for r in records]
    assert not any(r.error for r in records), [r.error for r in records if r.error]
    reference = lower(source, until="ad")
    for name, signature in exe.signatures.items():
        args = [RNG.standard_normal(spec.shape).astype(spec.dtype) for spec in signature.inputs]
        got = exe.entry(name)(*args)
        want = interpret(reference, name, *args, dtype=np.float64)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * np.abs(e).max())


def _knob_cases() -> list[tuple[str, str, object]]:
    cases = []
    for kind, knobs in tuning.KNOBS.items():
        for knob in knobs:
            for value in sorted(knob.all_values(), key=repr):  # every target's
                cases.append((kind, knob.field, value))
    return cases


@pytest.mark.parametrize("kind,field,value", _knob_cases())
def test_every_knob_value_compiles_correct_code(kind: str, field: str, value: object) -> None:
    """Whatever the search picks is a correct schedule: each value of each knob, on programs
    whose ops take the knob's plan kind (remainder tiles included)."""
    schedule = replace(ScheduleOptions(tuning="off"), **{field: value})
    if kind == "contraction":
        _check_program(MATMUL, schedule, {"contraction"})
    elif kind == "direct-convolution":
        _check_program(DENSE, schedule, {"direct-convolution"})
    else:  # the span is the lane-wise partial sums' knob, the tile both plans', the others the filters plan's
        if field != "kernel_gradient_span":
            _check_program(DENSE, schedule, {"kernel-gradient"})
        if field in ("kernel_gradient_span", "kernel_gradient_tile"):
            _check_program(GROUPED, schedule, {"kernel-gradient"})


def _fake_timer(prefer: dict[str, object], calls: list[int]):
    """A timer that finds candidates with the ``prefer`` values faster (1 s per other value)."""

    def measure(candidates):
        calls.append(len(candidates))
        return [1.0 + sum(getattr(c, f) != v for f, v in prefer.items()) for c in candidates]

    return lambda text, target, threads: measure


def test_the_search_records_its_pick_and_other_processes_use_it(tmp_path, monkeypatch) -> None:
    """In search mode a kernel missing from the database is searched (here with a fake timer
    that favours 2 rows, no target's default) and recorded; another process compiles it
    with that schedule in use mode without measuring; the code is correct."""
    database = tmp_path / "tuning.json"
    monkeypatch.setenv("DLVM_MLIR_TUNING_DB", str(database))
    calls: list[int] = []
    monkeypatch.setattr(tuning, "measure_candidates", _fake_timer({"direct_convolution_rows": 2}, calls))
    # (3 images on 2 threads: not convolved image by image, conv_direct.PER_IMAGE_PADS)
    source = _conv_gradients(3, 16, 6, 64, 1, 24, 3).split("func.func @seeded")[0]
    linalg = str(lower(source, until="linalg"))
    monkeypatch.setattr(tuning, "MIN_MULTIPLY_ADDS", 0)
    searched = compile_cpu(linalg, options=CpuOptions(threads=2, schedule=ScheduleOptions(tuning="search")),
                           use_cache=False)
    assert calls, "nothing was measured"
    entries = tuning.TuningDatabase(database).read()
    assert [e["knobs"] for e in entries.values()] == [{"direct_convolution_rows": 2}]
    (entry,) = entries.values()
    assert entry["plan"] == "direct-convolution" and entry["default_us"] > entry["best_us"] > 0

    def tile_rows(exe) -> int:
        (record,) = [r for r in exe.lowering.schedules if r.plan.kind == "direct-convolution"]
        return record.plan.levels[-1].sizes[1]  # loops n, f, ...: the filters' register tile

    def compiled(**knobs):
        return compile_cpu(linalg, options=CpuOptions(threads=2, schedule=ScheduleOptions(tuning="off", **knobs)),
                           use_cache=False)

    # (each task's 6 filters: tiles of 2 rows; by default 3 on AVX-512 (for 4), one tile of all
    # 6 on AVX2, untiled: 0)
    assert tile_rows(searched) == tile_rows(compiled(direct_convolution_rows=2)) == 2
    assert tile_rows(compiled()) in (0, 3)
    # another process, in use mode: the database's schedule, nothing measured (the fake timer
    # is not there)
    script = f"""
import sys
from dlvm_mlir.backend import CpuOptions, tuning
from dlvm_mlir.backend.cache import compile_cpu
from dlvm_mlir.backend.options import ScheduleOptions
tuning.measure_candidates = None  # a search would fail
exe = compile_cpu(sys.stdin.read(), options=CpuOptions(threads=2, schedule=ScheduleOptions(tuning="use")),
                  use_cache=False)
print([r.plan.levels[-1].sizes[1] for r in exe.lowering.schedules if r.plan.kind == "direct-convolution"])
"""
    env = dict(os.environ, DLVM_MLIR_TUNE="use")
    out = subprocess.run([sys.executable, "-c", script], input=linalg, capture_output=True, text=True, env=env,
                         check=True).stdout
    assert out.strip() == "[2]"
    x = RNG.standard_normal((3, 16, 6, 64)).astype(np.float32)
    k = RNG.standard_normal((24, 16, 3, 3)).astype(np.float32)
    want = interpret(lower(source, until="ad"), "fwd", x, k, dtype=np.float64)
    np.testing.assert_allclose(searched.entry("fwd")(x, k), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_small_kernels_are_not_searched(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DLVM_MLIR_TUNING_DB", str(tmp_path / "tuning.json"))
    calls: list[int] = []
    monkeypatch.setattr(tuning, "measure_candidates", _fake_timer({}, calls))
    compile_cpu(str(lower(MATMUL, until="linalg")),
                options=CpuOptions(threads=2, schedule=ScheduleOptions(tuning="search")), use_cache=False)
    assert calls == [] and not (tmp_path / "tuning.json").exists()


class _Nest:
    """What :func:`tuning.search` reads of a loop nest, for a stand-in plan_for."""

    op_name = "linalg.generic"
    ranges = (8, 8)
    iterations = 64


def _search(monkeypatch, times, budget=60.0, clock=None):
    """:func:`tuning.search` over a fake kind with knobs a (3 values) and b (2), each value its
    own plan; ``times(candidate)`` is its time."""
    from dlvm_mlir.backend import schedule

    monkeypatch.setitem(tuning.KNOBS, "fake", (tuning.Knob("direct_convolution_rows", (6, 4, 8)),
                                               tuning.Knob("tasks_per_thread", (2, 1))))
    monkeypatch.setattr(schedule, "plan_for", lambda nest, target, options: schedule.Plan(
        kind="fake", note=f"{options.direct_convolution_rows},{options.tasks_per_thread}"))
    measured = []

    def measure(candidates):
        measured.append([(c.direct_convolution_rows, c.tasks_per_thread) for c in candidates])
        return [times(c) for c in candidates]

    kwargs = {} if clock is None else {"clock": clock}
    start = ScheduleOptions(tuning="off", direct_convolution_rows=6)
    result = tuning.search(_Nest(), None, start, measure, budget=budget, **kwargs)
    return result, measured


def test_the_search_is_coordinate_descent_with_a_noise_guard(monkeypatch) -> None:
    # rows 8 is 10% faster, then 1 task per thread another 10%: both taken
    result, measured = _search(monkeypatch, lambda c: (0.9 if c.direct_convolution_rows == 8 else 1.0)
                               * (0.9 if c.tasks_per_thread == 1 else 1.0))
    assert measured[:2] == [[(6, 2), (4, 2), (8, 2)], [(8, 2), (8, 1)]]
    assert measured[2] == [(6, 2), (8, 1)]  # head to head with the defaults
    assert result.knobs == {"direct_convolution_rows": 8, "tasks_per_thread": 1}
    assert result.default_seconds == 1.0 and result.best_seconds == pytest.approx(0.81)
    # 1% faster is noise: the defaults stay, and nothing is left to confirm
    result, measured = _search(monkeypatch, lambda c: 0.99 if c.direct_convolution_rows == 4 else 1.0)
    assert result.knobs == {} and len(measured) == 2


def test_the_winner_must_beat_the_defaults_head_to_head(monkeypatch) -> None:
    rounds = []

    def times(c):  # rows 4 looks 5% faster in its step, but not when measured again
        rounds.append(c)
        return 0.95 if c.direct_convolution_rows == 4 and len(rounds) <= 3 else 1.0

    result, measured = _search(monkeypatch, times)
    assert len(measured) == 3 and result.knobs == {}


def test_the_search_stops_at_its_budget(monkeypatch) -> None:
    ticks = iter(range(100))
    result, measured = _search(monkeypatch, lambda c: 1.0, budget=0.5, clock=lambda: next(ticks))
    assert len(measured) == 1 and result.candidates == 3


def test_a_damaged_database_is_reported_and_ignored(tmp_path, monkeypatch, capfd) -> None:
    database = tmp_path / "tuning.json"
    database.write_text("{not json")
    monkeypatch.setenv("DLVM_MLIR_TUNING_DB", str(database))
    exe = dlvm_mlir.compile(MATMUL, threads=2, tuning="use")
    a, b = RNG.standard_normal((70, 300)).astype(np.float32), RNG.standard_normal((300, 200)).astype(np.float32)
    np.testing.assert_allclose(exe["mm"](a, b), np.tanh(a.astype(np.float64) @ b), rtol=1e-4, atol=1e-4)
    tuning.TuningDatabase(database).store("k", {"knobs": {}})  # replaces the damaged file
    assert json.loads(database.read_text())["entries"] == {"k": {"knobs": {}}}
    direct = tuning.TuningDatabase(tmp_path / "other.json")
    (tmp_path / "other.json").write_text("[1, 2]")
    assert direct.read() == {}
    assert "ignoring the tuning database" in capfd.readouterr().err


def test_entries_from_other_versions_are_ignored() -> None:
    base = ScheduleOptions(tuning="off")
    entry = {"knobs": {"direct_convolution_rows": 4, "cache_tile": [128, 128, 256], "no_such_knob": 3,
                       "tasks_per_thread": "two"}}
    tuned = tuning.tuned_options(base, entry)
    assert tuned == replace(base, direct_convolution_rows=4, cache_tile=(128, 128, 256))
    assert tuning.tuned_options(base, {"knobs": {"tasks_per_thread": 0}}) == base  # invalid value
    assert tuning.tuned_options(base, {"knobs": [1]}) == base


def test_writers_merge(tmp_path) -> None:
    first, second = tuning.TuningDatabase(tmp_path / "t.json"), tuning.TuningDatabase(tmp_path / "t.json")
    first.store("a", {"knobs": {}})
    second.store("b", {"knobs": {"tasks_per_thread": 1}})
    assert set(first.read()) == {"a", "b"}
    assert first.clear() == 2 and second.read() == {}


def test_a_database_change_recompiles(tmp_path, monkeypatch) -> None:
    """The compile cache's key holds the database's stamp: a program compiled before a
    search is compiled again after it, not loaded from the cache."""
    from dlvm_mlir.cache import cache_stats

    database = tmp_path / "tuning.json"
    monkeypatch.setenv("DLVM_MLIR_TUNING_DB", str(database))
    stats = cache_stats()
    dlvm_mlir.compile(MATMUL, threads=2, filename="db-change")
    compiles = stats.compiles
    dlvm_mlir.compile(MATMUL, threads=2, filename="db-change")
    assert stats.compiles == compiles
    tuning.TuningDatabase(database).store("k", {"knobs": {}})
    dlvm_mlir.compile(MATMUL, threads=2, filename="db-change")
    assert stats.compiles == compiles + 1
    dlvm_mlir.compile(MATMUL, threads=2, filename="db-change", tuning="off")  # off: no stamp, another key
    assert stats.compiles == compiles + 2


def test_bad_modes_are_errors(monkeypatch) -> None:
    with pytest.raises(CompileError, match="unknown tuning mode 'fast'"):
        dlvm_mlir.compile(MATMUL, tuning="fast")
    monkeypatch.setenv("DLVM_MLIR_TUNE", "sometimes")
    with pytest.raises(CompileError, match="unknown tuning mode 'sometimes'"):
        dlvm_mlir.compile(MATMUL)
    dlvm_mlir.compile(MATMUL, tuning="off")  # a mode given overrides the environment's
    with pytest.raises(ValueError, match="tuning must be one of"):
        ScheduleOptions(tuning="sometimes")


def test_the_command_line(tmp_path) -> None:
    """``dlvm-compile --tuning search`` searches (with progress on stderr) and records;
    ``python -m dlvm_mlir.backend.tuning info`` lists the entries, ``clear`` removes them."""
    source = tmp_path / "conv.mlir"
    source.write_text(_conv_gradients(4, 32, 16, 32, 1, 32, 3).split("func.func @seeded")[0])
    env = dict(os.environ, DLVM_MLIR_TUNING_DB=str(tmp_path / "tuning.json"))
    done = subprocess.run([sys.executable, "-m", "dlvm_mlir.tools.compile", str(source), "-o",
                           str(tmp_path / "conv.so"), "--tuning", "search", "--threads", "2"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    # the padded argument is convolved image by image (conv_direct.PER_IMAGE_PADS): the kernel
    # is one image's, searched for the work of its 4 tasks
    assert "dlvm-mlir: tuning: linalg.generic (direct-convolution) 1x32x16x32x32x3x3" in done.stderr
    assert "head to head" in done.stderr or "the defaults" in done.stderr
    info = subprocess.run([sys.executable, "-m", "dlvm_mlir.backend.tuning", "info"], capture_output=True,
                          text=True, env=env, check=True).stdout
    assert "1 entries" in info and "direct-convolution 1x32x16x32x32x3x3" in info
    exe = dlvm_mlir.load(tmp_path / "conv.so")
    x = RNG.standard_normal((4, 32, 16, 32)).astype(np.float32)
    k = RNG.standard_normal((32, 32, 3, 3)).astype(np.float32)
    want = interpret(lower(source.read_text(), until="ad"), "fwd", x, k, dtype=np.float64)
    np.testing.assert_allclose(exe["fwd"](x, k), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    cleared = subprocess.run([sys.executable, "-m", "dlvm_mlir.backend.tuning", "clear"], capture_output=True,
                             text=True, env=env, check=True).stdout
    assert "removed 1 entries" in cleared


def test_the_pipeline_option(tmp_path) -> None:
    """``dlvm-cpu-pipeline{tuning=...}``: a bad mode (given, or in ``$DLVM_MLIR_TUNE``) is an
    error at the input's location, exit 1; ``off`` compiles."""
    source = tmp_path / "mm.mlir"
    source.write_text(MATMUL)
    opt = [sys.executable, "-m", "dlvm_mlir.tools.opt", str(source)]
    bad = subprocess.run(opt + ["--dlvm-cpu-pipeline=tuning=sometimes"], capture_output=True, text=True)
    assert bad.returncode == 1 and "error: tuning must be one of off, use, search" in bad.stderr, bad.stderr
    env = dict(os.environ, DLVM_MLIR_TUNE="sometimes")
    bad = subprocess.run(opt + ["--dlvm-cpu-pipeline"], capture_output=True, text=True, env=env)
    assert bad.returncode == 1 and "error: $DLVM_MLIR_TUNE must be one of" in bad.stderr, bad.stderr
    good = subprocess.run(opt + ["--dlvm-cpu-pipeline=tuning=off"], capture_output=True, text=True, env=env)
    assert good.returncode == 0 and "llvm.func" in good.stdout, good.stderr


def test_a_failed_search_is_recorded_once(tmp_path, monkeypatch, capfd) -> None:
    """A search that fails leaves the heuristics' schedule, says so, and is recorded (the
    defaults, with why) so that later compiles do not try again."""
    database = tmp_path / "tuning.json"
    monkeypatch.setenv("DLVM_MLIR_TUNING_DB", str(database))
    monkeypatch.setattr(tuning, "MIN_MULTIPLY_ADDS", 0)
    attempts = []

    def failing(text, target, threads):
        attempts.append(text)
        raise ValueError("no timer here\nthe kernel takes a scalar")

    monkeypatch.setattr(tuning, "measure_candidates", failing)
    linalg = str(lower(MATMUL, until="linalg"))
    options = CpuOptions(threads=2, schedule=ScheduleOptions(tuning="search"))
    for _ in range(2):
        exe = compile_cpu(linalg, options=options, use_cache=False)
    assert len(attempts) == 1
    assert "the search failed (ValueError: the kernel takes a scalar)" in capfd.readouterr().err
    (entry,) = tuning.TuningDatabase(database).read().values()
    assert entry["knobs"] == {} and entry["error"] == "ValueError: the kernel takes a scalar"
    tuning.main(["info"])
    assert "search failed: ValueError: the kernel takes a scalar (defaults)" in capfd.readouterr().out
    a, b = RNG.standard_normal((70, 300)).astype(np.float32), RNG.standard_normal((300, 200)).astype(np.float32)
    np.testing.assert_allclose(exe.entry("mm")(a, b), np.tanh(a.astype(np.float64) @ b), rtol=1e-4, atol=1e-4)


def test_the_measured_kernel_allocates_its_result_as_the_program_does(tmp_path, monkeypatch) -> None:
    """The kernel a search times gets a ``tensor.empty`` where the program passes one (its
    fill's init): as an entry point's read-only argument it would be copied before each
    call, a cost the program does not have (it hid a 1x1 convolution's differences)."""
    monkeypatch.setenv("DLVM_MLIR_TUNING_DB", str(tmp_path / "tuning.json"))
    monkeypatch.setattr(tuning, "MIN_MULTIPLY_ADDS", 0)
    texts: list[str] = []

    def timer(text, target, threads):
        texts.append(text)
        return lambda candidates: [1.0] * len(candidates)

    monkeypatch.setattr(tuning, "measure_candidates", timer)
    source = _conv_gradients(2, 16, 6, 64, 1, 24, 3).split("func.func @seeded")[0]
    compile_cpu(str(lower(source, until="linalg")),
                options=CpuOptions(threads=2, schedule=ScheduleOptions(tuning="search")), use_cache=False)
    (text,) = texts
    fill = next(line for line in text.splitlines() if "linalg.fill" in line)
    assert "tensor.empty()" in text and "outs(%arg" not in fill, text
