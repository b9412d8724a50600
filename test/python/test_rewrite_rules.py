"""Rewrite rules: every built-in rule validated through the reference interpreter; the user API."""

from __future__ import annotations

import itertools
import runpy
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import dlvm_mlir
from dlvm_mlir.dialects import dlvm
from dlvm_mlir.errors import PassPipelineFailure, RegistryError
from dlvm_mlir.passes import get_pass, get_pipeline, run_pipeline
from dlvm_mlir.rewrites import (
    Exactness,
    RewriteRule,
    RuleError,
    RuleValidationError,
    allowed_exactness,
    apply_rules,
    rewrite_rule,
    rule_set,
    rule_sets,
    unregister_rule_set,
    validate_rule,
)
from dlvm_mlir.transforms._patterns import producer
from dlvm_mlir.transforms.matmul_reorder import optimal_order

ROOT = Path(__file__).resolve().parents[2]
BUILTIN_SETS = ("algebra-simplify", "matmul-reorder", "linalg-fusion", "literal-broadcast-promotion")
BUILTIN_RULES = [rule for name in BUILTIN_SETS for rule in rule_set(name)]


# --------------------------------------------------------------------------
# Every built-in rule, on its sample, through the interpreter
# --------------------------------------------------------------------------


@pytest.mark.parametrize("rule", BUILTIN_RULES, ids=lambda r: f"{r.rule_set}/{r.name}")
def test_builtin_rule_preserves_outputs(rule: RewriteRule) -> None:
    report = validate_rule(rule, trials=4, seed=1)
    assert report.fired >= 1
    assert report.before != report.after
    if rule.exactness is Exactness.EXACT:
        assert report.max_rel_error <= 1e-15


@pytest.mark.parametrize("rule", BUILTIN_RULES, ids=lambda r: f"{r.rule_set}/{r.name}")
def test_builtin_rule_is_documented(rule: RewriteRule) -> None:
    assert rule.doc, f"{rule.name} has no docstring"
    assert rule.sample, f"{rule.name} has no sample"
    module_doc = __import__(rule.fn.__module__, fromlist=["_"]).__doc__
    assert module_doc and rule.exactness.value in module_doc.lower()
    if rule.rule_set == "algebra-simplify":  # its exactness table has a row per rule
        row = next(line for line in module_doc.splitlines() if line.startswith(f"{rule.name} "))
        assert rule.exactness.value in row.split()


def test_builtin_sets_are_registered() -> None:
    names = {s.name for s in rule_sets()}
    assert set(BUILTIN_SETS) <= names
    assert len(rule_set("algebra-simplify")) >= 40


def test_exactness_levels() -> None:
    assert allowed_exactness(strict=True) == {Exactness.EXACT}
    assert Exactness.UNSAFE not in allowed_exactness()
    assert allowed_exactness(fast_math=True) == set(Exactness)
    selected = {r.name for r in rule_set("algebra-simplify").select(allowed_exactness())}
    assert {"add_zero", "pow_two", "log_of_exp", "reduce_of_broadcast"} <= selected
    assert not {"mul_zero", "sub_self", "div_self", "exp_of_log", "div_of_quotient"} & selected


# --------------------------------------------------------------------------
# The user API
# --------------------------------------------------------------------------

NEG_SAMPLE = """
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %n = dlvm.neg %b : tensor<4xf32>
  %r = dlvm.sub %a, %n : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}"""


@pytest.fixture
def user_set() -> Iterator[str]:
    name = "test-user-rules"
    yield name
    unregister_rule_set(name)


def test_user_rule_registers_applies_and_validates(user_set: str) -> None:
    @dlvm_mlir.rewrite_rule(dlvm.SubOp, set=user_set, sample=NEG_SAMPLE)
    def sub_of_neg(op: dlvm.SubOp) -> ir.Value | None:
        """a - (-b) -> a + b"""
        neg = producer(op.rhs, dlvm.NegOp)
        if neg is None:
            return None
        return dlvm.add(op.lhs, neg.operand)

    assert isinstance(sub_of_neg, RewriteRule)
    assert rule_set(user_set).get("sub_of_neg") is sub_of_neg
    report = dlvm_mlir.validate_rule(sub_of_neg)
    assert report.fired == 1 and "dlvm.add" in report.after
    with dlvm_mlir.make_context():
        module = ir.Module.parse(NEG_SAMPLE)
        hits = apply_rules(module, [sub_of_neg])
        assert hits["sub_of_neg"] == 1
        assert "dlvm.sub" not in str(module)


def test_validate_rule_catches_a_wrong_rule(user_set: str) -> None:
    @rewrite_rule(dlvm.SubOp, set=user_set, sample=NEG_SAMPLE)
    def wrong(op: dlvm.SubOp) -> ir.Value | None:
        neg = producer(op.rhs, dlvm.NegOp)
        return None if neg is None else dlvm.sub(op.lhs, neg.operand)

    with pytest.raises(RuleValidationError, match="changed result 0 of @f"):
        validate_rule(wrong)


def test_validate_rule_reports_a_rule_that_never_fires(user_set: str) -> None:
    @rewrite_rule(dlvm.MulOp, set=user_set, sample=NEG_SAMPLE)
    def idle(op: dlvm.MulOp) -> ir.Value | None:
        return None

    with pytest.raises(RuleValidationError, match="did not fire"):
        validate_rule(idle)
    assert validate_rule(idle, require_fired=False).fired == 0


def test_validate_rule_on_other_ir_and_function(user_set: str) -> None:
    @rewrite_rule(dlvm.NegOp, set=user_set)
    def neg_to_mul(op: dlvm.NegOp) -> ir.Value | None:
        minus_one = dlvm.constant(ir.DenseElementsAttr.get_splat(
            ir.RankedTensorType.get([], ir.F32Type.get()), ir.FloatAttr.get_f32(-1.0)))
        return dlvm.mul(op.operand, minus_one)

    with pytest.raises(RuleValidationError, match="no sample"):
        validate_rule(neg_to_mul)
    text = NEG_SAMPLE + "\nfunc.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {\n" \
        "  %n = dlvm.neg %x : tensor<2xf32>\n  return %n : tensor<2xf32>\n}"
    with pytest.raises(RuleValidationError, match="name the function"):
        validate_rule(neg_to_mul, text)
    assert validate_rule(neg_to_mul, text, "g").fired == 2


def test_replacement_is_broadcast_to_the_result_type(user_set: str) -> None:
    @rewrite_rule(dlvm.AddOp, set=user_set)
    def drop_rhs(op: dlvm.AddOp) -> ir.Value | None:
        return op.lhs

    text = """
func.func @f(%a: tensor<1x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = dlvm.add %a, %b : tensor<1x4xf32>, tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}"""
    with dlvm_mlir.make_context():
        module = ir.Module.parse(text)
        apply_rules(module, [drop_rhs])
        assert "dlvm.broadcast_to %arg0 to [3, 4] : tensor<1x4xf32>" in str(module)
        assert module.operation.verify()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return dlvm.reshape(op.rhs, [2, 2])", "replaced a tensor<4xf32> result of 'dlvm.add' by a tensor<2x2xf32>"),
        ("return op.result", "by its own result"),
        ("return [op.lhs, op.lhs]", "gave 2 values for 1 results"),
        ("raise ValueError('boom')", "raised ValueError: boom"),
    ],
    ids=["type", "self", "arity", "exception"],
)
def test_misbehaving_rules_are_errors_not_aborts(user_set: str, body: str, message: str) -> None:
    namespace: dict = {"dlvm": dlvm}
    exec(f"def bad(op):\n    {body}\n", namespace)
    bad = rewrite_rule(dlvm.AddOp, set=user_set)(namespace["bad"])
    text = """
func.func @f(%a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  %r = dlvm.add %b, %a : tensor<f32>, tensor<4xf32>
  return %r : tensor<4xf32>
}"""
    with dlvm_mlir.make_context():
        module = ir.Module.parse(text)
        with pytest.raises(RuleError, match=message) as caught:
            apply_rules(module, [bad])
        assert "'bad'" in str(caught.value)
        assert module.operation.verify()


def test_rule_registration_errors(user_set: str) -> None:
    @rewrite_rule(dlvm.AddOp, set=user_set)
    def twice(op: dlvm.AddOp) -> None:
        return None

    with pytest.raises(RegistryError, match="already has a rule 'twice'"):
        rewrite_rule(dlvm.AddOp, set=user_set)(twice.fn)
    with pytest.raises(RegistryError, match="at least one"):
        rewrite_rule(set=user_set)
    with pytest.raises(RegistryError, match="neither an op class"):
        rewrite_rule(42, set=user_set)
    with pytest.raises(RegistryError, match="no rule set named 'nope'"):
        rule_set("nope")


def test_apply_rules_pass_runs_user_sets(user_set: str) -> None:
    @rewrite_rule("dlvm.mul", set=user_set)
    def square(op: dlvm.MulOp) -> ir.Value | None:
        return dlvm.square(op.lhs) if op.lhs == op.rhs else None

    with dlvm_mlir.make_context():
        module = ir.Module.parse("""
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = dlvm.mul %x, %x : tensor<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}""")
        run_pipeline(module, f"dlvm-apply-rules{{sets={user_set}}}")
        assert "dlvm.square" in str(module)


# --------------------------------------------------------------------------
# Matrix-chain ordering
# --------------------------------------------------------------------------


def _brute_force(dims: list[int], i: int, j: int) -> int:
    if i == j:
        return 0
    return min(
        _brute_force(dims, i, s) + _brute_force(dims, s + 1, j) + dims[i] * dims[s + 1] * dims[j + 1]
        for s in range(i, j)
    )


@pytest.mark.parametrize("seed", range(20))
def test_optimal_order_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dims = [int(d) for d in rng.integers(1, 40, size=int(rng.integers(3, 8)))]
    best, _ = optimal_order(dims)
    assert best == _brute_force(dims, 0, len(dims) - 2)


def _chain_ir(dims: list[int], parenthesization: str) -> str:
    """A chain over matrices dims[i] x dims[i+1] in a given order ('left' or 'right')."""
    n = len(dims) - 1
    args = ", ".join(f"%m{i}: tensor<{dims[i]}x{dims[i + 1]}xf32>" for i in range(n))
    lines, acc, acc_shape = [], None, None
    order = range(n) if parenthesization == "left" else range(n - 1, -1, -1)
    for k, i in enumerate(order):
        shape = (dims[i], dims[i + 1])
        if acc is None:
            acc, acc_shape = f"%m{i}", shape
            continue
        lhs, rhs = (acc, f"%m{i}") if parenthesization == "left" else (f"%m{i}", acc)
        lshape, rshape = (acc_shape, shape) if parenthesization == "left" else (shape, acc_shape)
        out = (lshape[0], rshape[1])
        lines.append(f"  %p{k} = dlvm.dot {lhs}, {rhs} : tensor<{lshape[0]}x{lshape[1]}xf32>, "
                     f"tensor<{rshape[0]}x{rshape[1]}xf32>")
        acc, acc_shape = f"%p{k}", out
    result = f"tensor<{dims[0]}x{dims[-1]}xf32>"
    return f"func.func @f({args}) -> {result} {{\n" + "\n".join(lines) + f"\n  return {acc} : {result}\n}}"


@pytest.mark.parametrize(("seed", "order"), list(itertools.product(range(6), ("left", "right"))))
def test_reorder_never_worse_and_same_values(seed: int, order: str) -> None:
    measure = runpy.run_path(str(ROOT / "examples" / "optimize_stats.py"))["measure"]
    rng = np.random.default_rng(seed)
    dims = [int(d) for d in rng.integers(1, 30, size=int(rng.integers(4, 7)))]
    (row,) = measure("chain", _chain_ir(dims, order), None, "dlvm-matmul-reorder", seed=seed)
    assert row.macs_after <= row.macs_before
    assert row.macs_after == min(optimal_order(dims)[0], row.macs_before)
    assert row.max_rel_error < 1e-12


# --------------------------------------------------------------------------
# Passes and the pipeline
# --------------------------------------------------------------------------


def test_passes_and_pipeline_are_registered() -> None:
    for name in ("dlvm-algebra-simplify", "dlvm-matmul-reorder", "dlvm-linalg-fusion",
                 "dlvm-literal-broadcast-promotion", "dlvm-apply-rules"):
        assert get_pass(name) is not None, name
    spec = get_pipeline("dlvm-optimize")
    assert spec is not None
    assert "dlvm-literal-broadcast-promotion" in spec.expand("")
    assert "dlvm-matmul-reorder" not in spec.expand("linalg=false")


def test_optimize_shrinks_gradient_programs_and_keeps_their_values() -> None:
    main = runpy.run_path(str(ROOT / "examples" / "optimize_stats.py"))["main"]
    rows = {row.function: row for row in main()}
    assert set(rows) == {"loss", "loss_grad", "mlp_grad", "low_rank", "rnn_cell"}
    for row in rows.values():
        assert row.ops_after <= row.ops_before, row
        assert row.macs_after <= row.macs_before, row
        assert row.max_rel_error < 1e-12, row
    assert rows["mlp_grad"].ops_after <= 0.65 * rows["mlp_grad"].ops_before
    assert rows["loss_grad"].ops_after < rows["loss_grad"].ops_before
    assert rows["low_rank"].macs_after * 16 < rows["low_rank"].macs_before
    assert rows["rnn_cell"].ops_after < rows["rnn_cell"].ops_before


def test_algebra_simplify_options_conflict() -> None:
    with dlvm_mlir.make_context():
        module = ir.Module.parse("func.func @f() {\n  return\n}")
        with pytest.raises(PassPipelineFailure) as caught:
            run_pipeline(module, "dlvm-algebra-simplify{strict fast-math}", reproducer=False)
        assert "exclude each other" in str(caught.value.diagnostics[0])


def test_power_of_two_division_only_for_exact_reciprocals() -> None:
    rule = rule_set("algebra-simplify").get("div_by_power_of_two")
    template = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %c = dlvm.constant dense<{c}> : tensor<f32>
  %r = dlvm.div %x, %c : tensor<4xf32>, tensor<f32>
  return %r : tensor<4xf32>
}}"""
    for c in ("0.25", "-8.0", "1.0"):
        assert validate_rule(rule, template.format(c=c)).fired == 1
    # Not a power of two, zero, inf, 2^-130 (subnormal) and 2^127 (subnormal reciprocal) stay.
    for c in ("3.0", "0.0", "0x7F800000", "0x00080000", "0x7F000000"):
        assert validate_rule(rule, template.format(c=c), require_fired=False).fired == 0
