"""The CUDA back end's schedules run on the CPU (:mod:`dlvm_mlir.backend.gpu_emulator`) against the CPU back end.

No GPU is needed: every kernel's threads run one after another, so these tests
check what each plan computes (tiling, thread mapping, predication, split
reductions, host loops as kernels), not timing or races.  The matmul kernels
(shared memory, barriers) are replaced by the ``parallel`` plan here; they are
checked on a GPU by ``benchmarks/gpu_check.py``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

import dlvm_mlir
from dlvm_mlir.backend import gpu_schedule
from dlvm_mlir.backend.gpu import GpuOptions
from dlvm_mlir.backend.gpu_emulator import EmulatedGpuProgram, NotEmulable
from dlvm_mlir.backend.gpu_schedule import GpuScheduleOptions
from dlvm_mlir.compiler import lower

from test_gpu import GROUPS, KERNEL_GRADIENT, OPS, _mm, op_inputs, reduction_cases

ROOT = Path(__file__).resolve().parents[2]
NO_MATMUL_KERNELS = GpuOptions(schedule=GpuScheduleOptions(matmul_kernels=False))


def emulate(source: str, options: GpuOptions = NO_MATMUL_KERNELS) -> EmulatedGpuProgram:
    return EmulatedGpuProgram(lower(source, until="linalg"), options)


def _as_tuple(value: object) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def assert_close(got: object, want: object, tol: float) -> None:
    for g, w in zip(_as_tuple(got), _as_tuple(want), strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, w)


def _group_sources() -> dict[str, dict[str, str]]:
    groups = {group: {name: OPS[name] for name in names} for group, names in GROUPS.items()}
    groups["reductions"] = reduction_cases()
    return groups


GROUP_SOURCES = _group_sources()


@pytest.mark.parametrize("group", list(GROUP_SOURCES))
def test_every_op_matches_the_cpu_backend(group: str) -> None:
    """The functions of benchmarks/gpu_check.py (every dlvm op; reductions on both sides of the
    split-reduction thresholds) with the same inputs and tolerances."""
    functions = GROUP_SOURCES[group]
    source = "".join(functions.values())
    program = emulate(source)
    cpu = dlvm_mlir.compile(source, target="cpu")
    rng = np.random.default_rng(0)
    for name in functions:
        entry = f"t_{name}"
        signature = cpu.signatures[entry]
        args = op_inputs(name, signature, rng)
        if name == "loop":  # the trip count
            args[1] = np.asarray(3, np.int64)
        args = [a.item() if spec.shape is None else a for spec, a in zip(signature.inputs, args)]
        # f16 rounding; long sums summed in another order
        tol = {"exp_f16": 2e-3, "dot_f16": 2e-3, "sum_all_1e6": 2e-3, "sum_tall": 2e-4,
               "sum_two_dims": 1e-4, "mean_batch": 1e-4, "softmax_tall": 1e-4}.get(name, 2e-5)
        try:
            assert_close(program(entry, *args), cpu[entry](*args), tol)
        except AssertionError as exc:
            raise AssertionError(f"@{entry}: {exc}") from None


def test_a_wrong_launch_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator is not a check that cannot fail: a launch one block or one thread short
    leaves outputs unwritten."""
    from mlir import ir
    from mlir.dialects import arith

    from dlvm_mlir.backend import gpu_emulator

    source = OPS["tanh"]
    x = np.random.default_rng(1).standard_normal((37, 70)).astype(np.float32)
    np.testing.assert_allclose(emulate(source)("t_tanh", x), np.tanh(x), rtol=1e-6, atol=1e-6)
    lower_to_gpu = gpu_emulator.lower_to_gpu
    sizes = _launch_sizes(source)
    assert sum(extent > 1 for extent in sizes) >= 2
    for size in range(6):  # grid x, y, z, block x, y, z

        def short(module: ir.Module, *args: object, **kwargs: object) -> object:
            result = lower_to_gpu(module, *args, **kwargs)
            (launch,) = [op.operation for op in module.body.operations[-1].regions[0].blocks[0].operations
                         if op.operation.name == "gpu.launch"]
            operand = launch.operands[size]
            extent = ir.IntegerAttr(operand.owner.attributes["value"]).value
            with module.context, ir.InsertionPoint(launch), launch.location:
                launch.operands[size] = arith.constant(ir.IndexType.get(), extent - 1)
            return result

        if sizes[size] == 1:
            continue
        monkeypatch.setattr(gpu_emulator, "lower_to_gpu", short)
        # new inputs: what the unwritten outputs hold (a recycled buffer) cannot be their tanh
        x = np.random.default_rng(2 + size).standard_normal((37, 70)).astype(np.float32)
        bad = emulate(source)("t_tanh", x)
        assert not np.allclose(bad, np.tanh(x), rtol=1e-6, atol=1e-6), size


def _launch_sizes(source: str) -> list[int]:
    from mlir import ir

    from dlvm_mlir.backend.gpu import lower_to_gpu

    module = lower(source, until="linalg")
    lower_to_gpu(module, NO_MATMUL_KERNELS, stop_after="map")
    (launch,) = [op.operation for op in module.body.operations[-1].regions[0].blocks[0].operations
                 if op.operation.name == "gpu.launch"]
    return [ir.IntegerAttr(launch.operands[i].owner.attributes["value"]).value for i in range(6)]


def test_synchronizing_kernels_are_refused() -> None:
    with pytest.raises(NotEmulable, match="gpu.barrier"):
        emulate(_mm(64, 64, 64), GpuOptions())


BIAS_GRADIENT = """
func.func @f(%dy: tensor<32x32x32x32xf32>) -> tensor<32xf32> {
  %r = dlvm.reduce add %dy dims [0, 2, 3] : tensor<32x32x32x32xf32>
  return %r : tensor<32xf32>
}
"""


def test_split_reductions_split_again_until_the_gpu_is_busy() -> None:
    """A bias gradient (32 outputs, each a sum of 32 images of 32 x 32) is split along the
    images, then the rows, then the columns, 4 parts each: 2048 threads of 512 elements, where
    one split left 128 threads of 8192 elements (0.7 ms on an H100 in the CNN step)."""
    program = emulate(BIAS_GRADIENT)
    partial = [r for r in program.plans if r.op_name == "linalg.generic" and len(r.ranges) == 7]
    assert [r.ranges for r in partial] == [(4, 4, 4, 8, 32, 8, 8)]
    (plan,) = [r.plan for r in partial]
    assert plan.threads * plan.grid_dims[0] == 4 * 4 * 4 * 32
    dy = np.random.default_rng(2).standard_normal((32, 32, 32, 32)).astype(np.float32)
    assert_close(program("f", dy), dy.astype(np.float64).sum(axis=(0, 2, 3)).astype(np.float32), 1e-4)


def test_plans_of_more_than_three_loops_map_every_loop() -> None:
    """Four or more parallel loops go through linearized ids: every output gets a thread."""
    from test_gpu import _nest

    for ranges in [(8, 32, 32, 3, 3), (33, 5, 7, 2, 3), (2, 1, 300, 5, 4), (1024, 3, 3, 3, 3, 3, 3)]:
        nest = _nest(ranges, ("parallel",) * len(ranges))
        plan = gpu_schedule.plan_gpu_op(nest, list(range(len(ranges))), GpuScheduleOptions())
        loops = [d for d, r in enumerate(ranges) if r > 1]
        assert sorted(plan.linear) == loops and plan.linear[0] == loops[-1]
        assert plan.block_dims[1:] == (1, 1) and plan.grid_dims[1:] == (1, 1)
        assert plan.threads <= 256
        assert all(plan.block_tiles[d] >= 1 for d in loops)
        outputs = int(np.prod(ranges))
        assert plan.threads * plan.grid_dims[0] >= outputs
    three = gpu_schedule.plan_gpu_op(_nest((2, 1, 300, 4), ("parallel",) * 4), [0, 1, 2, 3], GpuScheduleOptions())
    assert three.linear == () and three.mapped == (3, 2, 0)


def test_kernel_gradient_on_every_thread() -> None:
    """A convolution's kernel gradient, split over the images: the partial pass maps all
    five parallel loops (16 parts x 8 x 12 x 3 x 3), against the CPU back end."""
    program = emulate(KERNEL_GRADIENT)
    (partial,) = [r for r in program.plans if r.ranges[:1] == (16,) and len(r.ranges) == 8]
    assert len(partial.plan.linear) == 5
    assert partial.plan.threads * partial.plan.grid_dims[0] >= 16 * 8 * 12 * 9
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 8, 20, 20)).astype(np.float32)
    k = rng.standard_normal((12, 8, 3, 3)).astype(np.float32)
    dy = rng.standard_normal((16, 12, 20, 20)).astype(np.float32)
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (20, 20), axis=(2, 3))  # n, c, kh, kw, oh, ow
    want = np.einsum("nfhw,ncklhw->fckl", dy.astype(np.float64), windows)
    got = program("dk", x, k, dy)
    # sums of 6,400 products: compare on the scale of the result (some sums cancel to near 0)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())


SCATTER = """
func.func @add(%x: tensor<37x70xf32>, %i: tensor<300xi32>, %u: tensor<300x70xf32>) -> tensor<37x70xf32> {
  %r = dlvm.scatter add %x[%i], %u update_window_dims [1] inserted_window_dims [0]
       scatter_dims_to_operand_dims [0] index_vector_dim 1 : tensor<37x70xf32>, tensor<300xi32>, tensor<300x70xf32>
  return %r : tensor<37x70xf32>
}
func.func @replace(%x: tensor<37x70xf32>, %i: tensor<3xi32>, %u: tensor<3x70xf32>) -> tensor<37x70xf32> {
  %r = dlvm.scatter replace %x[%i], %u update_window_dims [1] inserted_window_dims [0]
       scatter_dims_to_operand_dims [0] index_vector_dim 1 : tensor<37x70xf32>, tensor<3xi32>, tensor<3x70xf32>
  return %r : tensor<37x70xf32>
}
"""


def test_scatters_run_as_kernels() -> None:
    """A scatter-add's loop (300 updates, many to the same row) runs on all threads with atomic
    adds; a scatter that replaces runs on one thread, in order (the last update wins).  Both
    used to run on the host, each load and store a launch of its own."""
    program = emulate(SCATTER)
    loops = [r for r in program.plans if r.op_name.startswith("scf.")]
    assert sorted((r.plan.kind, "atomic" in r.plan.note) for r in loops) == [("grid-stride", True), ("serial", False)]
    rng = np.random.default_rng(4)
    x = rng.standard_normal((37, 70)).astype(np.float32)
    i = rng.integers(0, 37, 300).astype(np.int32)
    u = rng.standard_normal((300, 70)).astype(np.float32)
    want = x.astype(np.float64)
    np.add.at(want, i, u)
    assert_close(program("add", x, i, u), want.astype(np.float32), 1e-5)
    j = np.array([5, 9, 5], np.int32)
    want = x.copy()
    for row, update in zip(j, u[:3]):
        want[row] = update
    assert_close(program("replace", x, j, u[:3]), want, 0)


def test_cnn_training_step() -> None:
    """The CNN step of benchmarks/cnn_step.py (issue 15's network) at batch 3, against the CPU back end."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import cnn_step

    x, labels, params = cnn_step.problem(3)
    step = cnn_step.dlvm_step()
    args = [x, labels, *params]
    program = emulate(step.ir(*args, stage="ad"))
    got, want = _as_tuple(program(step.name, *args)), _as_tuple(step(*args))
    assert np.isfinite(got[-1]) and abs(float(got[-1]) - float(want[-1])) <= 1e-5 * abs(float(want[-1]))
    for g, w, p in zip(got[:-1], want[:-1], params, strict=True):  # the updates, not the parameters
        update = w.astype(np.float64) - p
        scale = np.abs(update).max()
        assert scale > 0
        np.testing.assert_allclose(g.astype(np.float64) - p, update, rtol=0, atol=1e-4 * scale)


def _wide_average_pool(window: int) -> str:
    return f"""
func.func @avg_pool(%x: tensor<3xf32>) -> tensor<2xf32> {{
  %y = dlvm.reduce_window mean %x window [{window}] strides [2] padding half : tensor<3xf32>
  return %y : tensor<2xf32>
}}
func.func private @avg_pool_grad(tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
    attributes {{dlvm.gradient = #dlvm.gradient<of @avg_pool seedable>}}
"""


def test_each_launch_runs_in_a_function_of_its_own() -> None:
    """Dlvm-fuzz seed 7171: the gradient of an average pooling over a window of 1000 has
    thousands of kernels; with all their loops in one host function LLVM took more than ten
    minutes. Each launch is now a call of a function that LLVM may not inline. A window of
    120: hundreds of kernels, one wide sum split to fit a kernel's parameters
    (:mod:`dlvm_mlir.backend.gpu_wide_kernels`), against the CPU back end."""
    source = _wide_average_pool(120)
    program = emulate(source)
    text = str(program.module)
    kernels = text.count("llvm.func @__dlvm_emulated_kernel_")
    assert kernels > 200 and text.count('passthrough = ["noinline"]') == kernels
    cpu = dlvm_mlir.compile(source)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    seed = np.array([1.0, -2.0], np.float32)
    assert_close(program("avg_pool_grad", x, seed), cpu["avg_pool_grad"](x, seed), 1e-6)
    assert_close(program("avg_pool", x), cpu["avg_pool"](x), 1e-6)
