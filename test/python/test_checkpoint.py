"""dlvm-checkpoint and dlvm-report-residuals: decisions, optimality, numerics, survival through CSE."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from mlir import ir

import dlvm_mlir
from dlvm_mlir.ad.residuals import RECOMPUTE_ATTR, Sweeps, residuals
from dlvm_mlir.errors import PassPipelineFailure
from dlvm_mlir.interpreter import run
from dlvm_mlir.passes import run_pipeline
from dlvm_mlir.parsing import parse_module
from dlvm_mlir.transforms.checkpoint import _Graph, parse_bytes, plan_checkpoints

MLP = """
func.func @loss(%x: tensor<8x12xf64>, %w1: tensor<12x6xf64>, %b1: tensor<1x6xf64>,
                %w2: tensor<6x3xf64>, %y: tensor<8x3xf64>) -> tensor<f64> {
  %h0 = dlvm.dot %x, %w1 : tensor<8x12xf64>, tensor<12x6xf64>
  %h1 = dlvm.add %h0, %b1 : tensor<8x6xf64>, tensor<1x6xf64>
  %h = dlvm.tanh %h1 : tensor<8x6xf64>
  %o = dlvm.dot %h, %w2 : tensor<8x6xf64>, tensor<6x3xf64>
  %logp = dlvm.log_softmax %o axis 1 : tensor<8x3xf64>
  %ylogp = dlvm.mul %y, %logp : tensor<8x3xf64>, tensor<8x3xf64>
  %s = dlvm.reduce add %ylogp dims [0, 1] : tensor<8x3xf64>
  return %s : tensor<f64>
}
func.func private @loss_grad(tensor<8x12xf64>, tensor<12x6xf64>, tensor<1x6xf64>, tensor<6x3xf64>, tensor<8x3xf64>)
    -> (tensor<12x6xf64>, tensor<1x6xf64>, tensor<6x3xf64>, tensor<f64>)
    attributes {dlvm.gradient = #dlvm.gradient<of @loss wrt [1, 2, 3] keeping [0]>}
"""

LOOP = """
func.func @f(%x: tensor<4xf64>, %w: tensor<4xf64>) -> tensor<f64> {
  %a = dlvm.mul %x, %w : tensor<4xf64>, tensor<4xf64>
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %a) -> (tensor<4xf64>) {
    %t = dlvm.sin %h : tensor<4xf64>
    scf.yield %t : tensor<4xf64>
  }
  %e = dlvm.exp %r : tensor<4xf64>
  %m = dlvm.mul %e, %a : tensor<4xf64>, tensor<4xf64>
  %s = dlvm.reduce add %m dims [0] : tensor<4xf64>
  return %s : tensor<f64>
}
func.func private @f_grad(tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [1]>}
"""

POLICIES = ["save-everything", "save-dots", "save-nothing", "min-recompute{budget=400}"]


def _gradient(source: str, checkpoint: str | None, optimize: bool = True) -> ir.Module:
    module = parse_module(source, ir.Context(), "test.mlir")
    steps = ["dlvm-differentiate"] + (["dlvm-optimize"] if optimize else [])
    if checkpoint is not None:
        policy, _, options = checkpoint.partition("{")
        extra = f" {options[:-1]}" if options else ""
        steps.append(f"dlvm-checkpoint{{policy={policy}{extra}}}")
    run_pipeline(module, f"builtin.module({','.join(steps)})")
    return module


def _function(module: ir.Module, name: str) -> ir.Operation:
    """A function of ``module`` (keep ``module`` alive while using it)."""
    for op in module.body.operations:
        if ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op.operation
    raise KeyError(name)


def _inputs(rng: np.random.Generator) -> list[np.ndarray]:
    y = np.eye(3)[rng.integers(0, 3, 8)]
    return [rng.standard_normal(s) for s in [(8, 12), (12, 6), (1, 6), (6, 3)]] + [y]


def _summary(module: ir.Module, name: str) -> tuple[int, int]:
    found = residuals(_function(module, name))
    saved = sum(r.bytes for r in found if r.status == "saved")
    flops = sum(r.flops for r in found if r.status == "recomputed")
    return saved, flops


@pytest.mark.parametrize("policy", POLICIES)
def test_gradients_do_not_change(policy: str) -> None:
    args = _inputs(np.random.default_rng(0))
    reference = run(_gradient(MLP, None), "loss_grad", *args)
    checkpointed = _gradient(MLP, policy)
    for got, want in zip(run(checkpointed, "loss_grad", *args), reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_policies_save_what_they_say() -> None:
    def saved_ops(policy: str) -> set[str]:
        module = _gradient(MLP, policy)
        found = residuals(_function(module, "loss_grad"))
        return {r.op.name for r in found if r.status == "saved"}

    assert saved_ops("save-everything") == {"dlvm.tanh", "dlvm.log_softmax"}
    assert saved_ops("save-dots") == {"dlvm.dot"}
    assert saved_ops("save-nothing") == set()
    # The AD's own output is save-everything: nothing recomputed.
    assert _summary(_gradient(MLP, None), "loss_grad") == _summary(_gradient(MLP, "save-everything"), "loss_grad")


def test_recomputed_copies_sit_in_the_reverse_sweep() -> None:
    module = _gradient(MLP, "save-nothing")
    fn = _function(module, "loss_grad")
    sweeps = Sweeps(fn)
    copies = [op for op in sweeps.ops if RECOMPUTE_ATTR in op.attributes]
    assert {op.name for op in copies} == {"dlvm.dot", "dlvm.add", "dlvm.tanh", "dlvm.log_softmax"}
    first_reverse = min(sweeps.position[op] for op in sweeps.reverse_ops() if op not in copies)
    assert all(sweeps.position[op] > first_reverse for op in copies)
    # Forward ops whose values were only needed by the reverse sweep are gone.
    forward = [op.name for op in sweeps.forward_ops()]
    assert forward.count("dlvm.dot") == 2


def _brute_force(fn: ir.Operation, budget: int) -> int:
    """Least recomputation flops over every set of recomputed ops that fits the budget."""
    graph = _Graph(Sweeps(fn), "min-recompute")
    best = None
    for k in range(len(graph.nodes) + 1):
        for chosen in itertools.combinations(graph.nodes, k):
            plan = graph.plan(set(chosen))
            if plan.saved_bytes <= budget and (best is None or plan.recompute_flops < best):
                best = plan.recompute_flops
    assert best is not None
    return best


@pytest.mark.parametrize("budget", [0, 192, 300, 384, 500, 576, 10_000])
def test_min_recompute_is_optimal_on_the_mlp(budget: int) -> None:
    module = _gradient(MLP, None)
    fn = _function(module, "loss_grad")
    plan = plan_checkpoints(fn, "min-recompute", budget)
    assert plan.saved_bytes <= budget
    assert plan.recompute_flops == _brute_force(fn, budget)


def test_larger_budgets_never_recompute_more() -> None:
    flops = []
    for budget in range(0, 700, 32):
        saved, recomputed = _summary(_gradient(MLP, f"min-recompute{{budget={budget}}}"), "loss_grad")
        assert saved <= budget
        flops.append(recomputed)
    assert flops == sorted(flops, reverse=True)
    assert flops[-1] == 0


def test_loops_are_saved_not_recomputed() -> None:
    module = _gradient(LOOP, "save-nothing")
    found = residuals(_function(module, "f_grad"))
    saved = {r.op.name for r in found if r.status == "saved"}
    assert "scf.for" in saved  # its tape (and result) cannot be recomputed by copying an op
    args = [np.linspace(0.1, 0.4, 4), np.linspace(-1, 1, 4)]
    np.testing.assert_allclose(run(module, "f_grad", *args), run(_gradient(LOOP, None), "f_grad", *args), rtol=1e-13)


def test_unreachable_budget_is_an_error() -> None:
    with pytest.raises(PassPipelineFailure) as info:
        _gradient(LOOP, "min-recompute{budget=8}")
    [diag] = info.value.diagnostics
    assert "@f_grad cannot meet budget=8 (8 bytes)" in diag.message
    assert diag.location.filename == "test.mlir"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("budget=lots", "'lots' is not a size"),
        ("policy=save-dots budget=1KiB", "budget applies to policy=min-recompute"),
        ("policy=sometimes", "sometimes"),
    ],
)
def test_bad_options(options: str, message: str) -> None:
    module = parse_module(MLP, ir.Context(), "test.mlir")
    with pytest.raises(dlvm_mlir.errors.DLVMError, match=message):
        run_pipeline(module, f"builtin.module(dlvm-differentiate,dlvm-checkpoint{{{options}}})")


@pytest.mark.parametrize(("text", "value"), [("4096", 4096), ("64KiB", 65536), ("1.5MB", 1_500_000), ("2 mib", 2**21)])
def test_parse_bytes(text: str, value: int) -> None:
    assert parse_bytes(text) == value


def test_recomputation_survives_cse_and_lowering() -> None:
    module = _gradient(MLP, "save-dots")
    run_pipeline(module, "builtin.module(canonicalize,cse,dlvm-to-linalg,canonicalize,cse)")
    fn = _function(module, "loss_grad")
    marked = [op.name for op in fn.regions[0].blocks[0].operations if RECOMPUTE_ATTR in op.attributes]
    assert "linalg.generic" in marked  # the recomputed add/tanh/log_softmax, lowered


def test_compiled_checkpointed_gradient_matches() -> None:
    args = _inputs(np.random.default_rng(1))
    want = run(_gradient(MLP, None), "loss_grad", *args)
    exe = dlvm_mlir.compile(MLP, checkpoint="save-nothing")
    for got, expected in zip(exe["loss_grad"](*args), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
