"""Tests of the numpy reference interpreter (dlvm_mlir.interpreter)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dlvm_mlir.interpreter import Interpreter, InterpreterError, random_uniform, run
from dlvm_mlir.interpreter import rng

RNG = np.random.default_rng(0)

_NP_ELEM = {np.float32: "f32", np.float64: "f64", np.float16: "f16", np.int32: "i32", np.int64: "i64",
            np.int8: "i8", np.int16: "i16", np.bool_: "i1"}


def ttype(shape, elem="f32") -> str:
    """``tensor<...>`` text."""
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{elem}>"


def tt(a) -> str:
    a = np.asarray(a)
    return ttype(a.shape, _NP_ELEM[a.dtype.type])


def run_op(op_text: str, args, result_type: str, **kw):
    """Runs ``%r = op_text`` (operands %a0, %a1, ...) in a one-op function."""
    params = ", ".join(f"%a{i}: {tt(a)}" for i, a in enumerate(args))
    src = f"""
func.func @f({params}) -> {result_type} {{
  %r = {op_text}
  return %r : {result_type}
}}"""
    return run(src, "f", *args, **kw)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------

UNARY = {
    "neg": np.negative,
    "exp": np.exp,
    "log": lambda x: np.log(np.abs(x) + 0.1),
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "sqrt": lambda x: np.sqrt(np.abs(x)),
    "rsqrt": lambda x: 1 / np.sqrt(np.abs(x) + 0.1),
    "square": np.square,
    "sign": np.sign,
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": lambda x: np.arcsin(np.clip(x, -1, 1)),
    "acos": lambda x: np.arccos(np.clip(x, -1, 1)),
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "floor": np.floor,
    "ceil": np.ceil,
    "rint": np.rint,
    "log1p": lambda x: np.log1p(np.abs(x)),
    "expm1": np.expm1,
    "erf": np.vectorize(math.erf),
    "erfc": np.vectorize(math.erfc),
    "lgamma": np.vectorize(lambda v: math.lgamma(abs(v) + 0.1)),
}
# inputs are preprocessed for ops with restricted domains
_PRE = {
    "log": lambda x: np.abs(x) + 0.1, "sqrt": np.abs, "rsqrt": lambda x: np.abs(x) + 0.1,
    "asin": lambda x: np.clip(x, -1, 1), "acos": lambda x: np.clip(x, -1, 1), "log1p": np.abs,
    "lgamma": lambda x: np.abs(x) + 0.1,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    x = rand(3, 5)
    pre = _PRE.get(name, lambda v: v)
    x = pre(x).astype(np.float32)
    got = run_op(f"dlvm.{name} %a0 : {tt(x)}", [x], tt(x))
    want = {"log": np.log, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "asin": np.arcsin,
            "acos": np.arccos, "log1p": np.log1p,
            "lgamma": np.vectorize(math.lgamma)}.get(name, UNARY[name])(x.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_round_vs_rint_halfway():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.3], dtype=np.float32)
    r = run_op(f"dlvm.round %a0 : {tt(x)}", [x], tt(x))
    e = run_op(f"dlvm.rint %a0 : {tt(x)}", [x], tt(x))
    np.testing.assert_array_equal(r, [-3, -2, -1, 1, 2, 3, 0, -0.0])
    assert np.signbit(r[-1])  # round(-0.3) == -0.0
    np.testing.assert_array_equal(e, [-2, -2, -0.0, 0, 2, 2, 0, -0.0])


def test_digamma_and_lgamma_special_values():
    x = np.array([1.0, 0.5, 2.0, 10.0, -0.5, -2.5, 0.0, -3.0, 1e-3], dtype=np.float64)
    got = run_op(f"dlvm.digamma %a0 : {tt(x)}", [x], tt(x))
    euler = 0.5772156649015329
    want = [-euler, -euler - 2 * math.log(2), 1 - euler, 2.251752589066721,
            0.03648997397857652, 1.1031566406452431, math.nan, math.nan, -1000.5755719318103]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-7)
    lg = run_op(f"dlvm.lgamma %a0 : {tt(x)}", [x], tt(x))
    assert lg[6] == np.inf and lg[7] == np.inf
    np.testing.assert_allclose(lg[:6], [math.lgamma(v) for v in x[:6]])


def test_integer_unary_and_not():
    x = np.array([-3, 0, 7, -128], dtype=np.int8)
    np.testing.assert_array_equal(run_op(f"dlvm.neg %a0 : {tt(x)}", [x], tt(x)), [3, 0, -7, -128])
    np.testing.assert_array_equal(run_op(f"dlvm.abs %a0 : {tt(x)}", [x], tt(x)), [3, 0, 7, -128])
    np.testing.assert_array_equal(run_op(f"dlvm.sign %a0 : {tt(x)}", [x], tt(x)), [-1, 0, 1, -1])
    np.testing.assert_array_equal(run_op(f"dlvm.not %a0 : {tt(x)}", [x], tt(x)), ~x)
    b = np.array([True, False])
    np.testing.assert_array_equal(run_op(f"dlvm.not %a0 : {tt(b)}", [b], tt(b)), [False, True])


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "min": np.minimum, "max": np.maximum,
    "pow": lambda x, y: np.power(np.abs(x), y),
    "mod": np.mod,
    "floor_div": lambda x, y: np.floor(x / y),
    "trunc_div": lambda x, y: np.trunc(x / y),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((4, 8), (4, 8)), ((4, 1), (1, 8)), ((), (4, 8)), ((3, 4), ())])
def test_binary_broadcasting(name, shapes):
    x, y = rand(*shapes[0]), rand(*shapes[1])
    if name == "pow":
        x = np.abs(x)
    out_shape = np.broadcast_shapes(x.shape, y.shape)
    got = run_op(f"dlvm.{name} %a0, %a1 : {tt(x)}, {tt(y)}", [x, y], ttype(out_shape))
    want = BINARY[name](x.astype(np.float64), y.astype(np.float64))
    assert got.shape == out_shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_integer_division_family():
    x = np.array([7, -7, 7, -7, 6, 0], dtype=np.int32)
    y = np.array([2, 2, -2, -2, 3, 5], dtype=np.int32)

    def go(name):
        return run_op(f"dlvm.{name} %a0, %a1 : {tt(x)}, {tt(y)}", [x, y], tt(x))

    np.testing.assert_array_equal(go("div"), [3, -3, -3, 3, 2, 0])  # truncating
    np.testing.assert_array_equal(go("trunc_div"), [3, -3, -3, 3, 2, 0])
    np.testing.assert_array_equal(go("floor_div"), [3, -4, -4, 3, 2, 0])
    np.testing.assert_array_equal(go("mod"), [1, 1, -1, -1, 0, 0])  # sign of the divisor
    np.testing.assert_array_equal(go("and"), x & y)
    np.testing.assert_array_equal(go("or"), x | y)
    # by zero, as XLA (test_semantics.py has the full matrix): x / 0 = -1, x mod 0 = x
    np.testing.assert_array_equal(run_op(f"dlvm.div %a0, %a1 : {tt(x)}, {tt(x)}", [x, x], tt(x)),
                                  [1, 1, 1, 1, 1, -1])
    np.testing.assert_array_equal(run_op(f"dlvm.mod %a0, %a1 : {tt(x)}, {tt(x)}", [y, x], tt(x)),
                                  [2, -5, 5, -2, 3, 5])


def test_float_mod_sign_and_floor_div():
    x = np.array([5.5, -5.5, 5.5, -5.5], dtype=np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0], dtype=np.float32)
    got = run_op(f"dlvm.mod %a0, %a1 : {tt(x)}, {tt(y)}", [x, y], tt(x))
    np.testing.assert_array_equal(got, [1.5, 0.5, -0.5, -1.5])
    got = run_op(f"dlvm.floor_div %a0, %a1 : {tt(x)}, {tt(y)}", [x, y], tt(x))
    np.testing.assert_array_equal(got, [2, -3, -3, 2])


def test_integer_wraparound():
    x = np.array([127, -128], dtype=np.int8)
    one = np.array(1, dtype=np.int8)
    got = run_op(f"dlvm.add %a0, %a1 : {tt(x)}, {tt(one)}", [x, one], tt(x))
    np.testing.assert_array_equal(got, [-128, -127])


@pytest.mark.parametrize("pred,fn", list(zip(["lt", "le", "gt", "ge", "eq", "ne"],
                                             [np.less, np.less_equal, np.greater, np.greater_equal,
                                              np.equal, np.not_equal])))
def test_cmp(pred, fn):
    x = np.array([[1.0, 2.0, np.nan, 3.0]], dtype=np.float32)
    y = np.array([[2.0], [1.0], [3.0]], dtype=np.float32).reshape(3, 1)
    x3 = np.repeat(x, 3, axis=0)
    got = run_op(f"dlvm.cmp {pred}, %a0, %a1 : {tt(x3)}, {tt(y)}", [x3, y], ttype((3, 4), "i1"))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, fn(x3, y))  # NaN: false except ne
    i = np.array([-1, 0, 1], dtype=np.int32)
    z = np.array(0, dtype=np.int32)
    got = run_op(f"dlvm.cmp {pred}, %a0, %a1 : {tt(i)}, {tt(z)}", [i, z], ttype((3,), "i1"))
    np.testing.assert_array_equal(got, fn(i, 0))


def test_select_broadcasts_all_operands():
    mask = np.array([[True], [False]])
    a = rand(2, 3)
    b = np.array(7.0, dtype=np.float32)
    got = run_op(f"dlvm.select %a0, %a1, %a2 : {tt(mask)}, {tt(a)}, {tt(b)}", [mask, a, b], tt(a))
    np.testing.assert_array_equal(got, np.where(mask, a, b))


# ---------------------------------------------------------------------------
# linear algebra and shapes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("ls,rs", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 2, 3, 4), (2, 2, 4, 1)),
                                   ((3, 4), (4,)), ((4,), (4, 5)), ((4,), (4,))])
def test_dot(ls, rs):
    x, y = rand(*ls), rand(*rs)
    want = np.matmul(x.astype(np.float64), y)
    got = run_op(f"dlvm.dot %a0, %a1 : {tt(x)}, {tt(y)}", [x, y], ttype(want.shape))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dot_integers():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = run_op(f"dlvm.dot %a0, %a1 : {tt(x)}, {tt(y)}", [x, y], ttype((2, 4), "i32"))
    np.testing.assert_array_equal(got, x @ y)


def test_transpose_default_reverses_and_perm():
    x = rand(2, 3, 4)
    got = run_op(f"dlvm.transpose %a0 : {tt(x)}", [x], ttype((4, 3, 2)))
    np.testing.assert_array_equal(got, x.transpose(2, 1, 0))
    got = run_op(f"dlvm.transpose %a0 perm [0, 2, 1] : {tt(x)}", [x], ttype((2, 4, 3)))
    np.testing.assert_array_equal(got, x.transpose(0, 2, 1))


def test_reverse_concatenate_reshape_pad_squeeze_broadcast():
    x = rand(2, 3)
    np.testing.assert_array_equal(run_op(f"dlvm.reverse %a0 dims [1] : {tt(x)}", [x], tt(x)), x[:, ::-1])
    np.testing.assert_array_equal(run_op(f"dlvm.reverse %a0 dims [0, 1] : {tt(x)}", [x], tt(x)), x[::-1, ::-1])
    y = rand(2, 5)
    got = run_op(f"dlvm.concatenate %a0, %a1 axis 1 : {tt(x)}, {tt(y)}", [x, y], ttype((2, 8)))
    np.testing.assert_array_equal(got, np.concatenate([x, y], 1))
    np.testing.assert_array_equal(run_op(f"dlvm.reshape %a0 to [3, 2] : {tt(x)}", [x], ttype((3, 2))),
                                  x.reshape(3, 2))
    got = run_op(f"dlvm.pad_shape %a0 at 1 : {tt(x)}", [x], ttype((2, 1, 3)))
    np.testing.assert_array_equal(got, x[:, None, :])
    z = rand(1, 3)
    np.testing.assert_array_equal(run_op(f"dlvm.squeeze_shape %a0 at 0 : {tt(z)}", [z], ttype((3,))), z[0])
    got = run_op(f"dlvm.broadcast_to %a0 to [4, 3] : {tt(z)}", [z], ttype((4, 3)))
    np.testing.assert_array_equal(got, np.broadcast_to(z, (4, 3)))
    s = np.array(2.5, dtype=np.float32)
    got = run_op(f"dlvm.broadcast_to %a0 to [2, 2] : {tt(s)}", [s], ttype((2, 2)))
    np.testing.assert_array_equal(got, np.full((2, 2), 2.5))


def test_slice_with_strides():
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    got = run_op(f"dlvm.slice %a0 offsets [0, 2] sizes [4, 3] : {tt(x)}", [x], ttype((4, 3)))
    np.testing.assert_array_equal(got, x[:, 2:5])
    got = run_op(f"dlvm.slice %a0 offsets [1, 1] sizes [2, 3] strides [2, 3] : {tt(x)}", [x], ttype((2, 3)))
    np.testing.assert_array_equal(got, x[1:4:2, 1:8:3])


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

KINDS = {
    "add": (np.sum, np.add), "mul": (np.prod, np.multiply), "max": (np.max, np.maximum),
    "min": (np.min, np.minimum), "mean": (np.mean, np.add),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("dims", [(1,), (0, 2), (0, 1, 2), ()])
def test_reduce_float(kind, dims):
    x = rand(2, 3, 4)
    red, comb = KINDS[kind]
    want = red(x.astype(np.float64), axis=dims) if dims else x.astype(np.float64)
    got = run_op(f"dlvm.reduce {kind} %a0 dims [{', '.join(map(str, dims))}] : {tt(x)}", [x],
                 ttype(np.shape(want)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    init = np.array(0.75, dtype=np.float32)
    got = run_op(f"dlvm.reduce {kind} %a0 init %a1 dims [{', '.join(map(str, dims))}] : {tt(x)}, {tt(init)}",
                 [x, init], ttype(np.shape(want)))
    np.testing.assert_allclose(got, comb(want, 0.75), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind,fn", [("and", np.bitwise_and.reduce), ("or", np.bitwise_or.reduce),
                                     ("add", np.sum), ("max", np.max), ("min", np.min)])
def test_reduce_int(kind, fn):
    x = RNG.integers(-50, 50, size=(3, 5)).astype(np.int32)
    got = run_op(f"dlvm.reduce {kind} %a0 dims [1] : {tt(x)}", [x], ttype((3,), "i32"))
    np.testing.assert_array_equal(got, fn(x, axis=1))


def test_reduce_bool_and_or():
    x = np.array([[True, True], [True, False], [False, False]])
    got = run_op(f"dlvm.reduce and %a0 dims [1] : {tt(x)}", [x], ttype((3,), "i1"))
    np.testing.assert_array_equal(got, [True, False, False])
    got = run_op(f"dlvm.reduce or %a0 dims [1] : {tt(x)}", [x], ttype((3,), "i1"))
    np.testing.assert_array_equal(got, [True, True, False])


def test_reduce_to_rank0_and_empty_max():
    x = rand(3, 4)
    got = run_op(f"dlvm.reduce add %a0 dims [0, 1] : {tt(x)}", [x], "tensor<f32>")
    assert isinstance(got, np.ndarray) and got.shape == ()
    np.testing.assert_allclose(got, x.sum(), rtol=1e-5)
    e = np.zeros((0, 2), dtype=np.float32)
    got = run_op(f"dlvm.reduce max %a0 dims [0] : {tt(e)}", [e], ttype((2,)))
    np.testing.assert_array_equal(got, [-np.inf, -np.inf])


@pytest.mark.parametrize("kind,fn", [("add", np.cumsum), ("mul", np.cumprod), ("max", np.maximum.accumulate),
                                     ("min", np.minimum.accumulate)])
def test_scan_inclusive(kind, fn):
    x = rand(3, 5)
    got = run_op(f"dlvm.scan {kind} %a0 dim 1 : {tt(x)}", [x], tt(x))
    np.testing.assert_allclose(got, fn(x.astype(np.float64), axis=1), rtol=1e-5, atol=1e-6)
    i = RNG.integers(0, 16, size=(4, 3)).astype(np.int32)
    got = run_op(f"dlvm.scan or %a0 dim 0 : {tt(i)}", [i], tt(i))
    np.testing.assert_array_equal(got, np.bitwise_or.accumulate(i, axis=0))


def _window_ref(x, kind, window, strides, padding):
    """Naive reduce_window: loops over output positions, in-bounds elements only."""
    lows, outs = [], []
    for n, w, s in zip(x.shape, window, strides):
        if padding == "none":
            lo, out = 0, (n - w) // s + 1
        elif padding == "half":
            out = -(-n // s)
            lo = max((out - 1) * s + w - n, 0) // 2
        else:
            lo, out = w - 1, (n + w - 2) // s + 1
        lows.append(lo)
        outs.append(out)
    res = np.zeros(outs)
    for o in itertools.product(*(range(k) for k in outs)):
        ranges = [range(max(oi * s - lo, 0), min(oi * s - lo + w, n))
                  for oi, s, lo, w, n in zip(o, strides, lows, window, x.shape)]
        vals = np.array([x[i] for i in itertools.product(*ranges)], dtype=np.float64)
        res[o] = {"add": np.sum, "max": np.max, "min": np.min, "mean": np.mean, "mul": np.prod}[kind](vals)
    return res


@pytest.mark.parametrize("padding", ["none", "half", "full"])
@pytest.mark.parametrize("kind", ["max", "add", "mean", "min"])
@pytest.mark.parametrize("window,strides", [((2, 2), (2, 2)), ((3, 3), (1, 1)), ((3, 2), (2, 3)), ((1, 4), (1, 3))])
def test_reduce_window(padding, kind, window, strides):
    x = rand(5, 7)
    want = _window_ref(x, kind, window, strides, padding)
    got = run_op(f"dlvm.reduce_window {kind} %a0 window [{window[0]}, {window[1]}] strides "
                 f"[{strides[0]}, {strides[1]}] padding {padding} : {tt(x)}", [x], ttype(want.shape))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_reduce_window_pooling_nchw():
    x = rand(2, 3, 6, 6)
    got = run_op(f"dlvm.reduce_window max %a0 window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : {tt(x)}",
                 [x], ttype((2, 3, 3, 3)))
    np.testing.assert_array_equal(got, x.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))


def test_softmax_is_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-5.0, 0.0, 5.0]], dtype=np.float32)
    got = run_op(f"dlvm.softmax %a0 axis 1 : {tt(x)}", [x], tt(x))
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-6)
    got = run_op(f"dlvm.log_softmax %a0 axis 1 : {tt(x)}", [x], tt(x))
    np.testing.assert_allclose(got, np.log(e / e.sum(1, keepdims=True)), rtol=1e-6, atol=1e-6)
    assert np.all(np.isfinite(got))
    got = run_op(f"dlvm.softmax %a0 axis 0 : {tt(x)}", [x], tt(x))
    np.testing.assert_allclose(got.sum(0), 1.0, rtol=1e-6)


# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------


def _conv_ref(x, k, strides, padding, ld, rd, groups):
    """Naive XLA convolution by loops over every output and kernel element."""
    n_, c = x.shape[:2]
    o, cg = k.shape[:2]
    ns = x.ndim - 2
    dil = [ld[i] * (x.shape[2 + i] - 1) + 1 for i in range(ns)]
    xd = np.zeros((n_, c, *dil))
    for idx in itertools.product(*(range(s) for s in x.shape[2:])):
        xd[(slice(None), slice(None)) + tuple(i * d for i, d in zip(idx, ld))] = x[(slice(None), slice(None)) + idx]
    outs = [(dil[i] + padding[2 * i] + padding[2 * i + 1] - (rd[i] * (k.shape[2 + i] - 1) + 1)) // strides[i] + 1
            for i in range(ns)]
    res = np.zeros((n_, o, *outs))
    og = o // groups
    for b, oc in itertools.product(range(n_), range(o)):
        g = oc // og
        for pos in itertools.product(*(range(m) for m in outs)):
            acc = 0.0
            for ci in range(cg):
                for kidx in itertools.product(*(range(s) for s in k.shape[2:])):
                    src = [pos[i] * strides[i] + kidx[i] * rd[i] - padding[2 * i] for i in range(ns)]
                    if all(0 <= s < dil[i] for i, s in enumerate(src)):
                        acc += xd[(b, g * cg + ci, *src)] * k[(oc, ci, *kidx)]
            res[(b, oc, *pos)] = acc
    return res


CONV_CASES = [
    # (input shape, kernel shape, strides, padding, lhs_dilation, rhs_dilation, groups)
    ((2, 3, 7, 6), (4, 3, 3, 3), None, None, None, None, 1),
    ((1, 2, 8, 8), (3, 2, 3, 2), (2, 3), (1, 1, 0, 2), None, None, 1),
    ((1, 4, 6, 5), (6, 2, 2, 2), (1, 1), (1, 0, 1, 1), None, (2, 2), 2),
    ((1, 2, 4, 4), (2, 2, 3, 3), (1, 1), (2, 2, 2, 2), (2, 2), None, 1),  # transposed-conv style
    ((2, 3, 9), (3, 1, 3), (2,), (1, 1), None, (2,), 3),  # 1-D depthwise
    ((1, 2, 4, 3, 5), (2, 2, 2, 2, 2), (1, 1, 2), (0, 1, 1, 0, 0, 0), (1, 2, 1), (1, 1, 2), 1),  # 3-D
    ((1, 1, 6, 6), (1, 1, 2, 2), (1, 1), (-1, 0, 0, -2), None, None, 1),  # negative padding crops
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_convolve(case):
    xs, ks, strides, padding, ld, rd, groups = case
    ns = len(xs) - 2
    x, k = rand(*xs), rand(*ks)
    want = _conv_ref(x.astype(np.float64), k.astype(np.float64), strides or (1,) * ns, padding or (0,) * (2 * ns),
                     ld or (1,) * ns, rd or (1,) * ns, groups)
    parts = []
    for key, val in (("strides", strides), ("padding", padding), ("lhs_dilation", ld), ("rhs_dilation", rd)):
        if val is not None:
            parts.append(f"{key} [{', '.join(map(str, val))}]")
    if groups != 1:
        parts.append(f"groups {groups}")
    got = run_op(f"dlvm.convolve %a0, %a1 {' '.join(parts)} : {tt(x)}, {tt(k)}", [x, k], ttype(want.shape))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# literals, casts, random
# ---------------------------------------------------------------------------


def test_constants_dense_splat_bf16():
    src = """
func.func @f() -> (tensor<2x2xf32>, tensor<3xi32>, tensor<2xbf16>, tensor<i1>, tensor<2xi3>) {
  %a = dlvm.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = dlvm.constant dense<7> : tensor<3xi32>
  %c = dlvm.constant dense<[1.5, 0x7FC0]> : tensor<2xbf16>
  %d = arith.constant dense<true> : tensor<i1>
  %e = arith.constant dense<[3, -4]> : tensor<2xi3>
  return %a, %b, %c, %d, %e : tensor<2x2xf32>, tensor<3xi32>, tensor<2xbf16>, tensor<i1>, tensor<2xi3>
}"""
    a, b, c, d, e = run(src, "f")
    np.testing.assert_array_equal(a, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(b, [7, 7, 7])
    assert b.dtype == np.int32
    assert c[0] == 1.5 and np.isnan(c[1])
    assert d.shape == () and bool(d)
    np.testing.assert_array_equal(e, [3, -4])


def test_bf16_arithmetic_rounds():
    x = np.array([1.0, 3.0], dtype=np.float32)
    got = run_op("dlvm.cast %a0 to bf16 : tensor<2xf32>", [x], "tensor<2xbf16>")
    np.testing.assert_array_equal(got, [1.0, 3.0])
    src = """
func.func @f(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  %c = dlvm.constant dense<0.00390625> : tensor<2xbf16>
  %r = dlvm.add %x, %c : tensor<2xbf16>, tensor<2xbf16>
  return %r : tensor<2xbf16>
}"""
    # 1 + 2^-8 is not a bf16 (7 fraction bits): rounds back to 1 (tie to even); 3 + 2^-8 likewise
    np.testing.assert_array_equal(run(src, "f", x), [1.0, 3.0])
    assert run(src, "f", x, dtype=np.float64)[0] == 1.00390625


def test_cast():
    x = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 300.0], dtype=np.float32)
    np.testing.assert_array_equal(run_op(f"dlvm.cast %a0 to i32 : {tt(x)}", [x], ttype((6,), "i32")),
                                  [-2, 0, 0, 0, 2, 300])
    np.testing.assert_array_equal(run_op(f"dlvm.cast %a0 to i1 : {tt(x)}", [x], ttype((6,), "i1")),
                                  [True, True, False, True, True, True])
    got = run_op(f"dlvm.cast %a0 to f16 : {tt(x)}", [x], ttype((6,), "f16"))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, x.astype(np.float16))
    i = np.array([300, -1, 127], dtype=np.int32)
    np.testing.assert_array_equal(run_op(f"dlvm.cast %a0 to i8 : {tt(i)}", [i], ttype((3,), "i8")),
                                  [44, -1, 127])
    np.testing.assert_array_equal(run_op(f"dlvm.cast %a0 to f32 : {tt(i)}", [i], ttype((3,))), [300, -1, 127])
    b = np.array([True, False])
    # cast from i1 converts true to 1 (zero extension), as the dlvm folder does
    np.testing.assert_array_equal(run_op(f"dlvm.cast %a0 to f32 : {tt(b)}", [b], ttype((2,))), [1.0, 0.0])
    np.testing.assert_array_equal(run_op(f"dlvm.cast %a0 to i32 : {tt(b)}", [b], ttype((2,), "i32")), [1, 0])


def test_bitcast():
    x = np.array([1.0, -2.5, np.inf], dtype=np.float32)
    got = run_op(f"dlvm.bitcast %a0 to i32 : {tt(x)}", [x], ttype((3,), "i32"))
    np.testing.assert_array_equal(got, x.view(np.int32))
    # in float64 mode the bits are still those of the IR's f32
    got = run_op(f"dlvm.bitcast %a0 to i32 : {tt(x)}", [x], ttype((3,), "i32"), dtype=np.float64)
    np.testing.assert_array_equal(got, x.view(np.int32))
    back = run_op(f"dlvm.bitcast %a0 to f32 : {tt(got)}", [got], ttype((3,)))
    np.testing.assert_array_equal(back, x)


def test_random_spec_pinned_values():
    # SplitMix64 (see interpreter/rng.py); the first output for state 0 is the published 0xe220a8397b1dcdaf
    assert rng.splitmix64_mix(rng.GOLDEN) == 0xE220A8397B1DCDAF
    assert rng.random_key(0) == 0xE220A8397B1DCDAF
    assert rng.random_key(7) == 0x63CBE1E459320DD7
    assert [hex(v) for v in rng.random_bits(3, 0)] == ["0xa706dd2f4d197e6f", "0xb382a305f4414f5e", "0x631a9154fbabf717"]
    assert [hex(v) for v in rng.random_bits(3, 7)] == ["0xb8b4c2977eabce45", "0xa65305fd338ec8fe", "0x8ca3cbb6ca63129b"]
    assert [hex(v) for v in rng.random_bits(2, -1)] == ["0x5dc20aa7b2a27137", "0xbda5668a01d7049c"]
    assert [hex(v) for v in rng.random_bits(2, 2**63 - 1)] == ["0x69c9d98a86c5cd1e", "0x7f84718a2e1ed219"]
    # element i is the (i+1)-th output of the SplitMix64 stream whose state starts at the key
    state, words = rng.random_key(7), []
    for _ in range(3):
        state = (state + rng.GOLDEN) % 2**64
        words.append(rng.splitmix64_mix(state))
    assert [int(v) for v in rng.random_bits(3, 7)] == words
    z = np.array([0xB8B4C2977EABCE45, 0xA65305FD338EC8FE, 0x8CA3CBB6CA63129B], dtype=np.uint64)
    u64 = random_uniform([3], 0.0, 1.0, 7, np.float64)
    np.testing.assert_array_equal(u64, (z >> np.uint64(11)).astype(np.float64) * 2.0**-53)
    assert u64.tolist() == [0.7215081806049702, 0.6497043364684557, 0.5493743249193239]
    u32 = random_uniform([3], 0.0, 1.0, 7)
    assert u32.dtype == np.float32
    np.testing.assert_array_equal(u32, (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24))


def test_random_spec_bounds():
    # [1.0, 1.001) holds one f16 and one bf16 value: values that round up to HIGH become the one below
    assert np.all(random_uniform([500], 1.0, 1.001, 3, np.float16) == np.float16(1.0))
    assert np.all(random_uniform([500], 1.0, 1.01, 3, "bf16") == 1.0)
    assert np.all(random_uniform([500], 0.1, 0.100000001, 3, np.float32) == np.float32(0.1))
    # ranges wider than the largest finite value do not overflow
    for t, big in ((np.float64, 1e308), (np.float32, 3e38), (np.float16, 60000.0)):
        a = random_uniform([1000], -big, big, 1, t)
        assert a.dtype == t and np.all(np.isfinite(a)) and a.min() >= t(-big) and a.max() < t(big)
        assert a.min() < 0 < a.max()
    b = random_uniform([7, 3], -2.5, 7.0, 5, "bf16")
    assert b.dtype == np.float32 and np.all((b.view(np.uint32) & 0xFFFF) == 0)
    assert random_uniform([], 5.0, 6.0, 1).shape == ()
    assert random_uniform([0, 3], 5.0, 6.0, 1).shape == (0, 3)


# (name, shape, low, high, seed, element type): rank 0, odd sizes, extreme seeds and ranges. (No two
# identical ops: CSE would merge them, and returning one value twice crashes the CPU back end's bufferization.)
_RANDOM_CASES = [
    ("s_f32", [], 5.0, 6.0, 1, "f32"),
    ("s_f64", [], -1.0, 1.0, 0, "f64"),
    ("v_f64", [7], -1.0, 1.0, 0, "f64"),
    ("m_f32", [3, 5, 7], -0.05, 0.05, 7, "f32"),
    ("m_f32_seed8", [3, 5, 7], -0.05, 0.05, 8, "f32"),
    ("m_f64", [13, 1, 9], -3.0, 1000.0, -1, "f64"),
    ("big_f32", [1001], -2.0, 3.0, 123456789012, "f32"),
    ("big_f64", [1001], 0.0, 1.0, 123456789012, "f64"),
    ("wide_f64", [257], -1e308, 1e308, 2, "f64"),
    ("wide_f32", [255], -1e38, 3e38, 2, "f32"),
    ("narrow_f32", [99], 0.1, 0.100000001, 5, "f32"),
    ("narrow2_f32", [99], 1.0, 1.0000001, -(2**63), "f32"),
    ("tiny_f64", [31], 1.0, 1.0000000000000004, 2**63 - 1, "f64"),
    ("neg_f64", [3, 11], -7.5, -7.25, 42, "f64"),
    ("h_f16", [1000], -60000.0, 60000.0, 3, "f16"),
    ("narrow_f16", [101], 1.0, 1.001, 3, "f16"),
    ("b_bf16", [33, 17], -2.5, 7.0, 123456789012, "bf16"),
    ("narrow_bf16", [257], 1.0, 1.01, 9, "bf16"),
]


def _random_module() -> str:
    """One function returning every case (bf16 results bitcast to i16: no bf16 at entry points)."""
    body, results, types = [], [], []
    for k, (_, shape, low, high, seed, elem) in enumerate(_RANDOM_CASES):
        ty = ttype(shape, elem)
        body.append(f"  %r{k} = dlvm.random [{', '.join(map(str, shape))}] from {low:.17e} upto {high:.17e} "
                    f"seed {seed} : {elem}")
        if elem == "bf16":
            body.append(f"  %b{k} = dlvm.bitcast %r{k} to i16 : {ty}")
            results.append(f"%b{k}")
            types.append(ttype(shape, "i16"))
        else:
            results.append(f"%r{k}")
            types.append(ty)
    sig = ", ".join(types)
    return f"func.func @f() -> ({sig}) {{\n" + "\n".join(body) + f"\n  return {', '.join(results)} : {sig}\n}}\n"


def _bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.reshape(-1).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def test_random_compiled_matches_interpreter_bitwise():
    import dlvm_mlir

    src = _random_module()
    compiled = dlvm_mlir.compile(src, target="cpu")["f"]()
    interpreted = run(src, "f")
    assert len(compiled) == len(interpreted) == len(_RANDOM_CASES)
    for (name, shape, low, high, seed, elem), got, ref in zip(_RANDOM_CASES, compiled, interpreted):
        got, ref = np.asarray(got), np.asarray(ref)
        spec = random_uniform(shape, low, high, seed, elem)
        assert got.shape == ref.shape == spec.shape == tuple(shape), name
        if elem == "bf16":
            # the spec's bf16 values, stored in float32, are the i16 bit patterns shifted up
            np.testing.assert_array_equal(got.astype(np.uint16), (_bits(spec) >> 16).reshape(shape), err_msg=name)
            continue
        assert got.dtype == ref.dtype == spec.dtype, name
        np.testing.assert_array_equal(_bits(got), _bits(ref), err_msg=name)  # bit-identical, signed zeros included
        np.testing.assert_array_equal(_bits(ref), _bits(spec), err_msg=name)
    by_name = {case[0]: np.asarray(v) for case, v in zip(_RANDOM_CASES, compiled)}
    assert not np.array_equal(by_name["m_f32"], by_name["m_f32_seed8"])


def test_random_interpreter_bf16_follows_spec():
    src = """
func.func @f() -> tensor<257xbf16> {
  %r = dlvm.random [257] from 1.0 upto 1.01 seed 9 : bf16
  return %r : tensor<257xbf16>
}"""
    np.testing.assert_array_equal(run(src, "f"), random_uniform([257], 1.0, 1.01, 9, "bf16"))


def test_random_op():
    src = """
func.func @f() -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>) {
  %a = dlvm.random [64, 32] from -0.5 upto 0.5 seed 7 : f32
  %b = dlvm.random [64, 32] from -0.5 upto 0.5 seed 7 : f32
  %c = dlvm.random [64, 32] from -0.5 upto 0.5 seed 8 : f32
  return %a, %b, %c : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>
}"""
    a, b, c = run(src, "f")
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.min() >= -0.5 and a.max() < 0.5 and abs(a.mean()) < 0.05
    np.testing.assert_array_equal(a, random_uniform([64, 32], -0.5, 0.5, 7))
    a64 = run(src, "f", dtype=np.float64)[0]
    assert a64.dtype == np.float64
    np.testing.assert_allclose(a64, a, atol=1e-7)


# ---------------------------------------------------------------------------
# control flow, calls
# ---------------------------------------------------------------------------

CONTROL = """
func.func @sum_for(%x: tensor<5xf32>) -> (f32, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %r:2 = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %zero, %n = %c0) -> (f32, index) {
    %v = tensor.extract %x[%i] : tensor<5xf32>
    %a = arith.addf %acc, %v : f32
    %m = arith.addi %n, %c1 : index
    scf.yield %a, %m : f32, index
  }
  return %r#0, %r#1 : f32, index
}

// number of Collatz steps from n to 1: a data-dependent trip count
func.func @collatz(%n: i64) -> i64 {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %r:2 = scf.while (%v = %n, %s = %c0) : (i64, i64) -> (i64, i64) {
    %more = arith.cmpi sgt, %v, %c1 : i64
    scf.condition(%more) %v, %s : i64, i64
  } do {
  ^bb0(%v: i64, %s: i64):
    %rem = arith.remsi %v, %c2 : i64
    %odd = arith.cmpi ne, %rem, %c0 : i64
    %next = scf.if %odd -> i64 {
      %t = arith.muli %v, %c3 : i64
      %u = arith.addi %t, %c1 : i64
      scf.yield %u : i64
    } else {
      %h = arith.divsi %v, %c2 : i64
      scf.yield %h : i64
    }
    %s1 = arith.addi %s, %c1 : i64
    scf.yield %next, %s1 : i64, i64
  }
  return %r#1 : i64
}

// factorial with a cf loop and block arguments
func.func @fact_cf(%n: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  cf.br ^loop(%n, %c1 : i32, i32)
^loop(%i: i32, %acc: i32):
  %done = arith.cmpi sle, %i, %c1 : i32
  cf.cond_br %done, ^exit(%acc : i32), ^body
^body:
  %acc2 = arith.muli %acc, %i : i32
  %i2 = arith.subi %i, %c1 : i32
  cf.br ^loop(%i2, %acc2 : i32, i32)
^exit(%r: i32):
  return %r : i32
}

// recursion through func.call
func.func @fib(%n: i32) -> i32 {
  %c2 = arith.constant 2 : i32
  %c1 = arith.constant 1 : i32
  %small = arith.cmpi slt, %n, %c2 : i32
  %r = scf.if %small -> i32 {
    scf.yield %n : i32
  } else {
    %a = arith.subi %n, %c1 : i32
    %b = arith.subi %n, %c2 : i32
    %fa = func.call @fib(%a) : (i32) -> i32
    %fb = func.call @fib(%b) : (i32) -> i32
    %s = arith.addi %fa, %fb : i32
    scf.yield %s : i32
  }
  return %r : i32
}

// a tensor loop: repeated dlvm ops inside scf.for, and a call with two results
func.func @affine_step(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> (tensor<2x3xf32>, tensor<f32>) {
  %y = dlvm.dot %x, %w : tensor<2x3xf32>, tensor<3x3xf32>
  %t = dlvm.tanh %y : tensor<2x3xf32>
  %s = dlvm.reduce add %t dims [0, 1] : tensor<2x3xf32>
  return %t, %s : tensor<2x3xf32>, tensor<f32>
}
func.func @rnn(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>, %steps: index) -> (tensor<2x3xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = dlvm.constant dense<0.0> : tensor<f32>
  %r:2 = scf.for %i = %c0 to %steps step %c1 iter_args(%h = %x, %acc = %z) -> (tensor<2x3xf32>, tensor<f32>) {
    %h2, %s = func.call @affine_step(%h, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> (tensor<2x3xf32>, tensor<f32>)
    %acc2 = dlvm.add %acc, %s : tensor<f32>, tensor<f32>
    scf.yield %h2, %acc2 : tensor<2x3xf32>, tensor<f32>
  }
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<f32>
}

func.func @depth(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.cmpi eq, %n, %c0 : i32
  %r = scf.if %z -> i32 {
    scf.yield %c0 : i32
  } else {
    %m = arith.subi %n, %c1 : i32
    %d = func.call @depth(%m) : (i32) -> i32
    %d1 = arith.addi %d, %c1 : i32
    scf.yield %d1 : i32
  }
  return %r : i32
}

func.func @switch(%x: i32) -> i32 {
  %a = arith.constant 10 : i32
  %b = arith.constant 20 : i32
  %c = arith.constant 30 : i32
  cf.switch %x : i32, [
    default: ^bb1(%c : i32),
    1: ^bb1(%a : i32),
    2: ^bb1(%b : i32)
  ]
^bb1(%r: i32):
  return %r : i32
}
"""


@pytest.fixture(scope="module")
def control():
    return Interpreter(CONTROL)


def test_scf_for_iter_args(control):
    x = np.arange(5, dtype=np.float32)
    s, n = control.run("sum_for", x)
    assert s == 10.0 and isinstance(s, np.float32)
    assert n == 5 and isinstance(n, np.int64)


def test_scf_while_data_dependent(control):
    assert control.run("collatz", 27) == 111
    assert control.run("collatz", 1) == 0


def test_cf_loop(control):
    assert control.run("fact_cf", np.int32(10)) == 3628800
    assert control.run("fact_cf", 0) == 1


def test_recursion(control):
    assert control.run("fib", np.int32(15)) == 610


def test_deep_recursion(control):
    assert control.run("depth", 1500) == 1500


def test_loop_with_calls(control):
    x, w = rand(2, 3), rand(3, 3) * 0.5
    h, acc = control.run("rnn", x, w, 3)
    ref_h, ref_acc = x.astype(np.float64), 0.0
    for _ in range(3):
        ref_h = np.tanh(ref_h @ w)
        ref_acc += ref_h.sum()
    np.testing.assert_allclose(h, ref_h, rtol=1e-5)
    assert acc.shape == () and abs(float(acc) - ref_acc) < 1e-4
    h0, acc0 = control.run("rnn", x, w, 0)
    np.testing.assert_array_equal(h0, x)
    assert float(acc0) == 0.0


def test_cf_switch(control):
    assert [control.run("switch", v) for v in (1, 2, 3)] == [10, 20, 30]


def test_loops_run_ops_compiled_once(monkeypatch):
    """The interpreter translates a function's ops into nodes once, not per iteration: a
    350-iteration loop creates as many nodes as the function has ops (this replaced a test
    timing the same run, which a loaded machine could fail)."""
    from dlvm_mlir.interpreter import core

    created = []
    original = core.Node.__init__

    def counting(self, op, interp):
        created.append(op.name)
        original(self, op, interp)

    monkeypatch.setattr(core.Node, "__init__", counting)
    interp = Interpreter(CONTROL)
    assert interp.run("collatz", 77031) == 350

    def nested(op) -> list[str]:  # the ops inside op, in order
        names = []
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    names += [child.operation.name] + nested(child.operation)
        return names

    (collatz,) = [op.operation for op in interp.module.body.operations
                  if op.operation.name == "func.func" and op.operation.attributes["sym_name"].value == "collatz"]
    assert created == nested(collatz), created  # 18 ops, each once


# ---------------------------------------------------------------------------
# arith, math, tensor
# ---------------------------------------------------------------------------


def test_arith_and_math_scalars():
    src = """
func.func @f(%a: i32, %b: i32, %x: f32, %y: f32) -> (i32, i32, i32, i32, i1, i1, f32, f32, index, f32, i1) {
  %q = arith.divsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  %fq = arith.floordivsi %a, %b : i32
  %uq = arith.divui %a, %b : i32
  %lt = arith.cmpi ult, %a, %b : i32
  %nan = arith.cmpf uno, %x, %y : f32
  %m = arith.maximumf %x, %y : f32
  %e = math.exp %x : f32
  %i = arith.index_cast %a : i32 to index
  %f = arith.sitofp %a : i32 to f32
  %ne = arith.cmpf une, %x, %x : f32
  return %q, %r, %fq, %uq, %lt, %nan, %m, %e, %i, %f, %ne : i32, i32, i32, i32, i1, i1, f32, f32, index, f32, i1
}"""
    q, r, fq, uq, lt, nan, m, e, i, f, ne = run(src, "f", np.int32(-7), np.int32(2), np.float32(1.0), np.float32(2.0))
    assert (q, r, fq) == (-3, -1, -4)
    assert uq == (2**32 - 7) // 2  # unsigned: 0xfffffff9 / 2
    assert lt == False  # noqa: E712  (0xfffffff9 >= 2 unsigned)
    assert nan == False and m == 2.0 and abs(e - math.e) < 1e-6  # noqa: E712
    assert i == -7 and f == -7.0 and ne == False  # noqa: E712
    _, _, _, _, _, nan2, m2, _, _, _, ne2 = run(src, "f", np.int32(1), np.int32(1), np.float32("nan"), np.float32(1))
    assert nan2 == True and np.isnan(m2) and ne2 == True  # noqa: E712


def test_tensor_dialect_ops():
    src = """
func.func @f(%t: tensor<4x6xf32>, %v: f32) -> (tensor<2x3xf32>, tensor<4x6xf32>, tensor<3xf32>, tensor<2x2xf32>,
                                               tensor<24xf32>, tensor<2x2x6xf32>, index, tensor<?x6xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = tensor.extract_slice %t[1, 2] [2, 3] [2, 1] : tensor<4x6xf32> to tensor<2x3xf32>
  %i = tensor.insert %v into %t[%c1, %c2] : tensor<4x6xf32>
  %row = tensor.extract_slice %t[%c2, 0] [1, 3] [1, 2] : tensor<4x6xf32> to tensor<3xf32>
  %fe = tensor.from_elements %v, %v, %v, %v : tensor<2x2xf32>
  %col = tensor.collapse_shape %t [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %exp = tensor.expand_shape %t [[0, 1], [2]] output_shape [2, 2, 6] : tensor<4x6xf32> into tensor<2x2x6xf32>
  %d = tensor.dim %t, %c1 : tensor<4x6xf32>
  %e = tensor.empty(%c2) : tensor<?x6xf32>
  %ins = tensor.insert_slice %s into %e[0, 0] [2, 3] [1, 2] : tensor<2x3xf32> into tensor<?x6xf32>
  return %s, %i, %row, %fe, %col, %exp, %d, %ins : tensor<2x3xf32>, tensor<4x6xf32>, tensor<3xf32>, tensor<2x2xf32>,
                                                tensor<24xf32>, tensor<2x2x6xf32>, index, tensor<?x6xf32>
}"""
    t = np.arange(24, dtype=np.float32).reshape(4, 6)
    s, i, row, fe, col, exp, d, ins = run(src, "f", t, np.float32(-1))
    np.testing.assert_array_equal(s, t[1:4:2, 2:5])
    want = t.copy()
    want[1, 2] = -1
    np.testing.assert_array_equal(i, want)
    np.testing.assert_array_equal(row, t[2, 0:6:2])
    np.testing.assert_array_equal(fe, -np.ones((2, 2)))
    np.testing.assert_array_equal(col, t.reshape(-1))
    np.testing.assert_array_equal(exp, t.reshape(2, 2, 6))
    assert d == 6
    want = np.zeros((2, 6), dtype=np.float32)
    want[:, 0:6:2] = s
    np.testing.assert_array_equal(ins, want)


def test_more_tensor_ops():
    src = """
func.func @f(%t: tensor<2x3xf32>, %v: f32) -> (tensor<4x6xf32>, tensor<2x2xindex>, tensor<3x2xf32>, tensor<4x3xf32>,
                                             tensor<2x3xf32>) {
  %p = tensor.pad %t low[1, 2] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<2x3xf32> to tensor<4x6xf32>
  %g = tensor.generate {
  ^bb0(%i: index, %j: index):
    %s = arith.addi %i, %j : index
    tensor.yield %s : index
  } : tensor<2x2xindex>
  %shape = arith.constant dense<[3, 2]> : tensor<2xi64>
  %r = tensor.reshape %t(%shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  %c = tensor.concat dim(0) %t, %t : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %sp = tensor.splat %v : tensor<2x3xf32>
  return %p, %g, %r, %c, %sp : tensor<4x6xf32>, tensor<2x2xindex>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<2x3xf32>
}"""
    t = rand(2, 3)
    p, g, r, c, sp = run(src, "f", t, np.float32(9))
    np.testing.assert_array_equal(p, np.pad(t, ((1, 1), (2, 1)), constant_values=9))
    np.testing.assert_array_equal(g, [[0, 1], [1, 2]])
    np.testing.assert_array_equal(r, t.reshape(3, 2))
    np.testing.assert_array_equal(c, np.concatenate([t, t]))
    np.testing.assert_array_equal(sp, np.full((2, 3), 9))


def test_more_control_flow():
    src = """
func.func @sq(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  return %y : f32
}
func.func @f(%k: index, %x: f32) -> (f32, f32, f32) {
  %a = arith.constant 1.0 : f32
  %b = arith.constant 2.0 : f32
  %s = scf.index_switch %k -> f32
  case 0 { scf.yield %a : f32 }
  case 5 { scf.yield %b : f32 }
  default { scf.yield %x : f32 }
  %e = scf.execute_region -> f32 {
    %c = arith.cmpf ogt, %x, %a : f32
    cf.cond_br %c, ^big, ^small
  ^big:
    scf.yield %x : f32
  ^small:
    scf.yield %a : f32
  }
  %fn = func.constant @sq : (f32) -> f32
  %q = func.call_indirect %fn(%x) : (f32) -> f32
  return %s, %e, %q : f32, f32, f32
}
func.func @check(%x: f32) -> f32 {
  %z = arith.constant 0.0 : f32
  %ok = arith.cmpf oge, %x, %z : f32
  cf.assert %ok, "x must be non-negative"
  return %x : f32
}"""
    it = Interpreter(src)
    assert it.run("f", 5, np.float32(3)) == (2.0, 3.0, 9.0)
    assert it.run("f", 0, np.float32(0.5)) == (1.0, 1.0, 0.25)
    assert it.run("f", 7, np.float32(4))[0] == 4.0
    assert it.run("check", 1.0) == 1.0
    with pytest.raises(InterpreterError, match="non-negative"):
        it.run("check", -1.0)


def test_memref_ops():
    src = """
func.func @f(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.5 : f32
  %m = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %f = arith.index_cast %i : index to i32
    %g = arith.sitofp %f : i32 to f32
    memref.store %g, %m[%i] : memref<?xf32>
  }
  %t = bufferization.to_tensor %m : memref<?xf32> to tensor<?xf32>
  %z = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> f32 {
    %v = tensor.extract %t[%i] : tensor<?xf32>
    %w = arith.addf %a, %v : f32
    scf.yield %w : f32
  }
  memref.dealloc %m : memref<?xf32>
  return %s : f32
}"""
    assert run(src, "f", 5) == 10.0


# ---------------------------------------------------------------------------
# float64 mode, API and errors
# ---------------------------------------------------------------------------


def test_float64_mode():
    src = """
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %big = dlvm.constant dense<1.0e8> : tensor<f32>
  %a = dlvm.add %x, %big : tensor<3xf32>, tensor<f32>
  %b = dlvm.sub %a, %big : tensor<3xf32>, tensor<f32>
  return %b : tensor<3xf32>
}"""
    x = np.array([1.0, 0.25, 3.0], dtype=np.float32)
    got32 = run(src, "f", x)
    got64 = run(src, "f", x, dtype=np.float64)
    assert got32.dtype == np.float32 and got64.dtype == np.float64
    np.testing.assert_array_equal(got64, x)
    assert not np.array_equal(got32, x)  # 1e8 + 0.25 is not representable in f32


def test_scalar_and_list_arguments():
    src = """
func.func @f(%x: tensor<f32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %r = dlvm.mul %x, %y : tensor<f32>, tensor<2xf32>
  return %r : tensor<2xf32>
}"""
    np.testing.assert_array_equal(run(src, "f", 2.0, [1.0, 3.0]), [2.0, 6.0])
    np.testing.assert_array_equal(run(src, "@f", np.float64(2.0), np.array([1.0, 3.0])), [2.0, 6.0])


def test_error_unknown_op_names_op_and_location():
    src = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.fill ins(%c : f32) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}"""
    src = src.replace("%r = linalg", "%c = arith.constant 1.0 : f32\n  %r = linalg")
    with pytest.raises(InterpreterError) as info:
        run(src, "f", np.zeros(4, np.float32))
    assert "linalg.fill" in str(info.value)
    assert ":4:" in str(info.value)  # line 4 of the source
    assert info.value.op_name == "linalg.fill"


def test_errors_arguments_and_functions():
    src = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @f_grad(tensor<4xf32>) -> tensor<4xf32> attributes {dlvm.gradient = #dlvm.gradient<of @f>}
"""
    it = Interpreter(src)
    with pytest.raises(InterpreterError, match="argument"):
        it.run("f")
    with pytest.raises(InterpreterError, match="shape"):
        it.run("f", np.zeros(3, np.float32))
    with pytest.raises(InterpreterError, match="no function @g"):
        it.run("g")
    with pytest.raises(InterpreterError, match="no body"):
        it.run("f_grad", np.zeros(4, np.float32))
    assert set(it.function_names) == {"f", "f_grad"}


def test_externals_for_bodyless_functions():
    src = """
func.func private @ext(tensor<2xf32>) -> tensor<2xf32>
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = func.call @ext(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}"""
    it = Interpreter(src, externals={"ext": lambda v: v * 3})
    np.testing.assert_array_equal(it.run("f", np.array([1, 2], np.float32)), [3, 6])


def test_results_are_fresh_arrays():
    src = """
func.func @f() -> tensor<2xf32> {
  %c = dlvm.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}"""
    it = Interpreter(src)
    a = it.run("f")
    a[0] = 99
    np.testing.assert_array_equal(it.run("f"), [1, 2])
