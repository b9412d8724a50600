"""Higher-order derivatives, Hessian-vector products, and forward vs reverse mode.

A gradient declaration may name a gradient function; the synthesized code is
itself differentiable (every op the AD emits has rules), so derivatives of
any order, reverse over reverse and forward over reverse, come out of the
same pass.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

import dlvm_mlir
from dlvm_mlir.ad.synthesis import differentiate
from dlvm_mlir.interpreter import Interpreter
from dlvm_mlir.testing import check_gradients, check_tangents


def _synthesized(text: str) -> Interpreter:
    with dlvm_mlir.make_context():
        module = ir.Module.parse(text)
        differentiate(module)
        assert module.operation.verify()
        return Interpreter(str(module), dtype=np.float64)


def _central(fn, x: np.ndarray, step: float = 1e-5) -> np.ndarray:
    return (fn(x + step) - fn(x - step)) / (2 * step)


TANH_CHAIN = """
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %a = dlvm.tanh %x : tensor<3xf64>
  %b = dlvm.tanh %a : tensor<3xf64>
  %c = dlvm.tanh %b : tensor<3xf64>
  return %c : tensor<3xf64>
}
func.func private @df(tensor<3xf64>) -> tensor<3xf64> attributes {dlvm.gradient = #dlvm.gradient<of @f>}
func.func private @ddf(tensor<3xf64>) -> tensor<3xf64> attributes {dlvm.gradient = #dlvm.gradient<of @df>}
func.func private @dddf(tensor<3xf64>) -> tensor<3xf64> attributes {dlvm.gradient = #dlvm.gradient<of @ddf>}
"""


def test_tanh_chain_derivatives_of_order_one_to_three() -> None:
    run = _synthesized(TANH_CHAIN)
    x = np.array([0.3, -0.5, 1.1])

    def f(v):
        return np.tanh(np.tanh(np.tanh(v)))

    def d1(v):
        a = np.tanh(v)
        b = np.tanh(a)
        c = np.tanh(b)
        return (1 - c**2) * (1 - b**2) * (1 - a**2)

    np.testing.assert_allclose(run.run("df", x), d1(x), rtol=1e-12)
    np.testing.assert_allclose(run.run("ddf", x), _central(d1, x), rtol=1e-8)
    np.testing.assert_allclose(run.run("dddf", x), _central(lambda v: run.run("ddf", v), x), rtol=1e-7)


def test_second_derivative_matches_finite_differences_of_the_gradient() -> None:
    source = TANH_CHAIN.split("func.func private @ddf")[0]
    report = check_gradients(source, "df", np.array([0.3, -0.5, 1.1]))
    report.assert_close(1e-7)


HVP = """
func.func @f(%w: tensor<3xf64>, %x: tensor<4x3xf64>) -> tensor<f64> {
  %z = dlvm.dot %x, %w : tensor<4x3xf64>, tensor<3xf64>
  %t = dlvm.tanh %z : tensor<4xf64>
  %s = dlvm.square %t : tensor<4xf64>
  %l = dlvm.reduce add %s dims [0] : tensor<4xf64>
  return %l : tensor<f64>
}
func.func private @df(tensor<3xf64>, tensor<4x3xf64>) -> tensor<3xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [0]>}
func.func @gv(%w: tensor<3xf64>, %x: tensor<4x3xf64>, %v: tensor<3xf64>) -> tensor<f64> {
  %g = func.call @df(%w, %x) : (tensor<3xf64>, tensor<4x3xf64>) -> tensor<3xf64>
  %p = dlvm.dot %g, %v : tensor<3xf64>, tensor<3xf64>
  return %p : tensor<f64>
}
func.func private @hvp_reverse(tensor<3xf64>, tensor<4x3xf64>, tensor<3xf64>) -> tensor<3xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @gv wrt [0]>}
func.func private @hvp_forward(tensor<3xf64>, tensor<4x3xf64>, tensor<3xf64>) -> tensor<3xf64>
    attributes {dlvm.tangent = #dlvm.tangent<of @df wrt [0]>}
"""


def _hessian(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    t = np.tanh(x @ w)
    curvature = (2 - 6 * t**2) * (1 - t**2)  # d/dz of 2 t (1 - t^2)
    return x.T @ (curvature[:, None] * x)


def test_hessian_vector_products_reverse_over_reverse_and_forward_over_reverse() -> None:
    run = _synthesized(HVP)
    rng = np.random.default_rng(3)
    w, x, v = rng.standard_normal(3), rng.standard_normal((4, 3)), rng.standard_normal(3)
    expected = _hessian(w, x) @ v
    np.testing.assert_allclose(run.run("hvp_reverse", w, x, v), expected, rtol=1e-10)
    np.testing.assert_allclose(run.run("hvp_forward", w, x, v), expected, rtol=1e-10)


LOOP = """
func.func @loop(%x: tensor<2xf64>, %w: tensor<2xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> (tensor<2xf64>) {
    %m = dlvm.mul %a, %w : tensor<2xf64>, tensor<2xf64>
    %s = dlvm.sin %m : tensor<2xf64>
    %t = dlvm.add %s, %a : tensor<2xf64>, tensor<2xf64>
    scf.yield %t : tensor<2xf64>
  }
  %l = dlvm.reduce add %r dims [0] : tensor<2xf64>
  return %l : tensor<f64>
}
func.func private @dloop(tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @loop wrt [0]>}
"""


def test_second_derivative_through_a_taped_loop() -> None:
    """The gradient's tapes (tensor.insert_slice/extract_slice in scf.for) differentiate again."""
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(2), rng.standard_normal(2)]
    check_gradients(LOOP, "dloop", *args).assert_close(1e-7)
    check_tangents(LOOP, "dloop", *args).assert_close(1e-7)


JACOBIAN = """
func.func @layer(%x: tensor<2x3xf64>, %w: tensor<3x2xf64>) -> tensor<2x2xf64> {
  %z = dlvm.dot %x, %w : tensor<2x3xf64>, tensor<3x2xf64>
  %s = dlvm.softmax %z axis 1 : tensor<2x2xf64>
  %e = dlvm.exp %x : tensor<2x3xf64>
  %m = dlvm.reduce max %e dims [1] : tensor<2x3xf64>
  %p = dlvm.pad_shape %m at 1 : tensor<2xf64>
  %r = dlvm.mul %s, %p : tensor<2x2xf64>, tensor<2x1xf64>
  return %r : tensor<2x2xf64>
}
func.func private @vjp(tensor<2x3xf64>, tensor<3x2xf64>, tensor<2x2xf64>) -> (tensor<2x3xf64>, tensor<3x2xf64>)
    attributes {dlvm.gradient = #dlvm.gradient<of @layer seedable>}
func.func private @jvp(tensor<2x3xf64>, tensor<3x2xf64>, tensor<2x3xf64>, tensor<3x2xf64>) -> tensor<2x2xf64>
    attributes {dlvm.tangent = #dlvm.tangent<of @layer>}
"""


def test_forward_and_reverse_mode_give_the_same_jacobian() -> None:
    run = _synthesized(JACOBIAN)
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    n_in, n_out = x.size + w.size, 4
    by_columns = np.zeros((n_out, n_in))
    for j in range(n_in):
        basis = np.zeros(n_in)
        basis[j] = 1.0
        by_columns[:, j] = run.run("jvp", x, w, basis[:6].reshape(2, 3), basis[6:].reshape(3, 2)).ravel()
    by_rows = np.zeros((n_out, n_in))
    for i in range(n_out):
        seed = np.zeros(n_out)
        seed[i] = 1.0
        dx, dw = run.run("vjp", x, w, seed.reshape(2, 2))
        by_rows[i] = np.concatenate([dx.ravel(), dw.ravel()])
    np.testing.assert_allclose(by_columns, by_rows, rtol=1e-12, atol=1e-14)


MIXED = """
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> (tensor<3xf64>) {
    %t = dlvm.tanh %a : tensor<3xf64>
    %m = dlvm.mul %t, %x : tensor<3xf64>, tensor<3xf64>
    scf.yield %m : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func private @jf(tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    attributes {dlvm.tangent = #dlvm.tangent<of @f>}
func.func private @gf(tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    attributes {dlvm.gradient = #dlvm.gradient<of @f seedable>}
"""


def test_every_mode_combination_through_a_loop() -> None:
    """forward over forward, reverse over forward, forward over reverse, reverse over reverse."""
    rng = np.random.default_rng(6)
    x, v = rng.standard_normal(3), rng.standard_normal(3)
    check_tangents(MIXED, "jf", x, v).assert_close(1e-7)
    check_gradients(MIXED, "jf", x, v).assert_close(1e-7)
    check_tangents(MIXED, "gf", x, v).assert_close(1e-7)
    check_gradients(MIXED, "gf", x, v).assert_close(1e-7)
