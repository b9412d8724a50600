"""Derivative declaration forms, the synthesized functions' shape, and diagnostics."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir
from mlir.passmanager import PassManager

import dlvm_mlir
from dlvm_mlir.ad.errors import DifferentiationError
from dlvm_mlir.ad.synthesis import DERIVATIVE_OF_ATTR, differentiate
from dlvm_mlir.interpreter import Interpreter

FOO = """
func.func @foo(%x: tensor<1x4xf64>, %w: tensor<4x3xf64>, %b: tensor<1x3xf64>) -> tensor<1x3xf64> {
  %0 = dlvm.dot %x, %w : tensor<1x4xf64>, tensor<4x3xf64>
  %1 = dlvm.add %0, %b : tensor<1x3xf64>, tensor<1x3xf64>
  return %1 : tensor<1x3xf64>
}
"""

TWO_RESULTS = """
func.func @sc(%x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %s = dlvm.sin %x : tensor<3xf64>
  %c = dlvm.cos %x : tensor<3xf64>
  %m = dlvm.mul %c, %y : tensor<3xf64>, tensor<3xf64>
  return %s, %m : tensor<3xf64>, tensor<3xf64>
}
"""


def _build(text: str) -> tuple[ir.Module, Interpreter]:
    with dlvm_mlir.make_context():
        module = ir.Module.parse(text)
        differentiate(module)
        assert module.operation.verify()
        return module, Interpreter(str(module), dtype=np.float64)


def _function(module: ir.Module, name: str) -> ir.Operation:
    for op in module.body.operations:
        if ir.StringAttr(op.operation.attributes["sym_name"]).value == name:
            return op.operation
    raise KeyError(name)


@pytest.fixture
def foo_args():
    rng = np.random.default_rng(0)
    return rng.standard_normal((1, 4)), rng.standard_normal((4, 3)), rng.standard_normal((1, 3))


def test_paper_figure_3(foo_args) -> None:
    """[gradient @foo wrt 1, 2] returns (dot(transpose(x), ones), ones)."""
    text = FOO + """
func.func private @foo_grad(tensor<1x4xf64>, tensor<4x3xf64>, tensor<1x3xf64>) -> (tensor<4x3xf64>, tensor<1x3xf64>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo wrt [1, 2]>}
"""
    module, run = _build(text)
    x, w, b = foo_args
    dw, db = run.run("foo_grad", x, w, b)
    np.testing.assert_allclose(dw, x.T @ np.ones((1, 3)))
    np.testing.assert_allclose(db, np.ones((1, 3)))
    grad = _function(module, "foo_grad")
    assert DERIVATIVE_OF_ATTR in grad.attributes and "dlvm.gradient" not in grad.attributes
    assert "sym_visibility" not in grad.attributes  # a user's declaration becomes a public entry point


def test_wrt_keeping_seedable(foo_args) -> None:
    text = FOO + """
func.func private @foo_grad(tensor<1x4xf64>, tensor<4x3xf64>, tensor<1x3xf64>, tensor<1x3xf64>)
    -> (tensor<4x3xf64>, tensor<1x3xf64>, tensor<1x3xf64>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo wrt [1, 2] keeping [0] seedable>}
"""
    _, run = _build(text)
    x, w, b = foo_args
    seed = np.array([[1.0, -2.0, 0.5]])
    dw, db, kept = run.run("foo_grad", x, w, b, seed)
    np.testing.assert_allclose(dw, x.T @ seed)
    np.testing.assert_allclose(db, seed)
    np.testing.assert_allclose(kept, x @ w + b)


def test_default_wrt_is_every_argument(foo_args) -> None:
    text = FOO + """
func.func private @foo_grad(tensor<1x4xf64>, tensor<4x3xf64>, tensor<1x3xf64>)
    -> (tensor<1x4xf64>, tensor<4x3xf64>, tensor<1x3xf64>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo>}
"""
    _, run = _build(text)
    x, w, b = foo_args
    dx, dw, db = run.run("foo_grad", x, w, b)
    np.testing.assert_allclose(dx, np.ones((1, 3)) @ w.T)
    np.testing.assert_allclose(dw, x.T @ np.ones((1, 3)))
    np.testing.assert_allclose(db, np.ones((1, 3)))


def test_from_selects_one_result_and_no_from_sums_all() -> None:
    text = TWO_RESULTS + """
func.func private @from1(tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @sc from 1 wrt [0]>}
func.func private @all(tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @sc wrt [0]>}
func.func private @seeded(tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
    attributes {dlvm.gradient = #dlvm.gradient<of @sc seedable>}
func.func private @seeded_from0(tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>)
    attributes {dlvm.gradient = #dlvm.gradient<of @sc from 0 keeping [1] seedable>}
"""
    _, run = _build(text)
    x, y = np.array([0.1, 0.7, -1.2]), np.array([2.0, -1.0, 0.5])
    np.testing.assert_allclose(run.run("from1", x, y), -np.sin(x) * y)
    np.testing.assert_allclose(run.run("all", x, y), np.cos(x) - np.sin(x) * y)
    s0, s1 = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0])
    dx, dy = run.run("seeded", x, y, s0, s1)
    np.testing.assert_allclose(dx, np.cos(x) * s0 - np.sin(x) * y * s1)
    np.testing.assert_allclose(dy, np.cos(x) * s1)
    dx, dy, kept = run.run("seeded_from0", x, y, s0)
    np.testing.assert_allclose(dx, np.cos(x) * s0)
    np.testing.assert_allclose(dy, np.zeros(3))
    np.testing.assert_allclose(kept, np.cos(x) * y)


def test_tangent_forms() -> None:
    text = TWO_RESULTS + """
func.func private @jvp(tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
    attributes {dlvm.tangent = #dlvm.tangent<of @sc>}
func.func private @jvp_x_from1(tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>)
    attributes {dlvm.tangent = #dlvm.tangent<of @sc from 1 wrt [0] keeping [0, 1]>}
"""
    _, run = _build(text)
    x, y = np.array([0.1, 0.7, -1.2]), np.array([2.0, -1.0, 0.5])
    tx, ty = np.array([1.0, -1.0, 0.5]), np.array([0.3, 0.2, 0.1])
    ds, dm = run.run("jvp", x, y, tx, ty)
    np.testing.assert_allclose(ds, np.cos(x) * tx)
    np.testing.assert_allclose(dm, -np.sin(x) * y * tx + np.cos(x) * ty)
    dm, s, m = run.run("jvp_x_from1", x, y, tx)
    np.testing.assert_allclose(dm, -np.sin(x) * y * tx)
    np.testing.assert_allclose(s, np.sin(x))
    np.testing.assert_allclose(m, np.cos(x) * y)


def test_inactive_results_and_repeated_results() -> None:
    text = """
func.func @k(%x: tensor<2xf64>, %y: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) {
  %c = dlvm.exp %y : tensor<2xf64>
  return %c, %x, %x : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
}
func.func private @dk(tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @k wrt [0] seedable>}
"""
    _, run = _build(text)
    s = [np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])]
    np.testing.assert_allclose(run.run("dk", np.zeros(2), np.zeros(2), *s), s[1] + s[2])


def test_integer_argument_in_wrt_gets_a_zero_gradient() -> None:
    text = """
func.func @scale(%x: tensor<2xf64>, %n: i32) -> tensor<2xf64> {
  %f = arith.sitofp %n : i32 to f64
  %t = tensor.splat %f : tensor<2xf64>
  %r = dlvm.mul %x, %t : tensor<2xf64>, tensor<2xf64>
  return %r : tensor<2xf64>
}
func.func private @dscale(tensor<2xf64>, i32) -> (tensor<2xf64>, i32)
    attributes {dlvm.gradient = #dlvm.gradient<of @scale>}
"""
    _, run = _build(text)
    dx, dn = run.run("dscale", np.array([1.0, 2.0]), np.int32(3))
    np.testing.assert_allclose(dx, [3.0, 3.0])
    assert dn == 0


def test_calls_share_one_callee_gradient_and_recursion_calls_itself() -> None:
    text = """
func.func @sq(%x: tensor<2xf64>) -> tensor<2xf64> {
  %r = dlvm.square %x : tensor<2xf64>
  return %r : tensor<2xf64>
}
func.func @twice(%x: tensor<2xf64>) -> tensor<2xf64> {
  %a = func.call @sq(%x) : (tensor<2xf64>) -> tensor<2xf64>
  %b = func.call @sq(%a) : (tensor<2xf64>) -> tensor<2xf64>
  return %b : tensor<2xf64>
}
func.func @down(%x: tensor<2xf64>, %n: i32) -> tensor<2xf64> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %done = arith.cmpi sle, %n, %c0 : i32
  %r = scf.if %done -> (tensor<2xf64>) {
    scf.yield %x : tensor<2xf64>
  } else {
    %m = arith.subi %n, %c1 : i32
    %s = dlvm.sin %x : tensor<2xf64>
    %t = func.call @down(%s, %m) : (tensor<2xf64>, i32) -> tensor<2xf64>
    scf.yield %t : tensor<2xf64>
  }
  return %r : tensor<2xf64>
}
func.func private @dtwice(tensor<2xf64>) -> tensor<2xf64> attributes {dlvm.gradient = #dlvm.gradient<of @twice>}
func.func private @ddown(tensor<2xf64>, i32) -> tensor<2xf64> attributes {dlvm.gradient = #dlvm.gradient<of @down wrt [0]>}
"""
    module, run = _build(text)
    names = [ir.StringAttr(op.operation.attributes["sym_name"]).value for op in module.body.operations]
    assert names.count("sq__grad_0") == 1 and "sq__grad_0_1" not in names
    recursive = _function(module, "down__grad_0")
    assert "call @down__grad_0(" in str(recursive)
    x = np.array([0.5, -1.5])
    np.testing.assert_allclose(run.run("dtwice", x), 4 * x**3)
    expected = np.cos(np.sin(np.sin(x))) * np.cos(np.sin(x)) * np.cos(x)
    np.testing.assert_allclose(run.run("ddown", x, np.int32(3)), expected)


def test_output_verifies_optimizes_and_is_not_synthesized_twice(foo_args) -> None:
    text = FOO + """
func.func private @foo_grad(tensor<1x4xf64>, tensor<4x3xf64>, tensor<1x3xf64>) -> (tensor<4x3xf64>, tensor<1x3xf64>)
    attributes {dlvm.gradient = #dlvm.gradient<of @foo wrt [1, 2]>}
"""
    module, _ = _build(text)
    with module.context:
        assert differentiate(module) == []
        PassManager.parse("builtin.module(canonicalize,cse)").run(module.operation)
        assert module.operation.verify()
        body = str(_function(module, "foo_grad"))
    assert "dlvm.dot %arg0, %arg1" not in body  # the dead forward copy is gone


# --------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------

NO_RULE = """
func.func @f(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<6xf64> {
  %a = dlvm.exp %x : tensor<4xf64>
  %b = dlvm.mul %a, %y : tensor<4xf64>, tensor<4xf64>
  %z = arith.constant 0.0 : f64
  %p = tensor.pad %b low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %z : f64
  } : tensor<4xf64> to tensor<6xf64>
  return %p : tensor<6xf64>
}
func.func private @f_grad(tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [0]>}
"""


def _error(text: str) -> DifferentiationError:
    with dlvm_mlir.make_context():
        module = ir.Module.parse(text)
        with pytest.raises(DifferentiationError) as info:
            differentiate(module)
        assert module.operation.verify()  # a rejected input leaves the module valid
        return info.value


def test_op_without_rule_is_reported_with_its_activity_path() -> None:
    err = _error(NO_RULE)
    assert "cannot differentiate 'tensor.pad'" in err.summary
    notes = [text for _, text in err.notes]
    assert notes[0] == "it is active: it depends on argument #0 of @f"
    assert "'dlvm.exp'" in notes[1] and "'dlvm.mul'" in notes[1]


def test_op_without_rule_off_the_active_path_is_fine() -> None:
    """tensor.pad has no rule, but here it only sees %y, which is not differentiated."""
    text = """
func.func @f(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xf64> {
  %z = arith.constant 0.0 : f64
  %p = tensor.pad %y low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %z : f64
  } : tensor<4xf64> to tensor<6xf64>
  %q = dlvm.slice %p offsets [1] sizes [4] : tensor<6xf64>
  %r = dlvm.mul %q, %x : tensor<4xf64>, tensor<4xf64>
  return %r : tensor<4xf64>
}
func.func private @f_grad(tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [0]>}
"""
    _, run = _build(text)
    y = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(run.run("f_grad", np.zeros(4), y), y)


def test_cyclic_declarations() -> None:
    err = _error(
        """
func.func private @a(tensor<f64>) -> tensor<f64> attributes {dlvm.gradient = #dlvm.gradient<of @b>}
func.func private @b(tensor<f64>) -> tensor<f64> attributes {dlvm.gradient = #dlvm.gradient<of @a>}
"""
    )
    assert "cyclic derivative declarations: @a -> @b -> @a" in err.summary


def test_call_to_external_function() -> None:
    err = _error(
        """
func.func private @ext(tensor<f64>) -> tensor<f64>
func.func @g(%x: tensor<f64>) -> tensor<f64> {
  %y = func.call @ext(%x) : (tensor<f64>) -> tensor<f64>
  return %y : tensor<f64>
}
func.func private @dg(tensor<f64>) -> tensor<f64> attributes {dlvm.gradient = #dlvm.gradient<of @g>}
"""
    )
    assert "cannot differentiate @ext: it is a declaration without a body" in err.summary

