"""NNKit, the staged DSL: tracing, types, operators, errors at user lines, caching, gradients, control flow.

Numbers are checked against numpy in float64; derivatives against central
differences. Shapes are tiny so that compiles are quick (and cached on disk).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dlvm_mlir
import dlvm_mlir.nnkit as dl
from dlvm_mlir.errors import DLVMError
from dlvm_mlir.nnkit import Scalar, Tensor, f32, f64

RNG = np.random.default_rng(0)


def rand(*shape: int, dtype=np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def line_of(marker: str) -> int:
    """The line of this file that contains ``marker`` (a comment), for error positions."""
    for number, text in enumerate(inspect.getsource(inspect.getmodule(line_of)).splitlines(), 1):
        if marker in text and "line_of(" not in text:
            return number
    raise AssertionError(marker)


def central_difference(fn, at: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(at)
    for index in np.ndindex(at.shape):
        plus, minus = at.copy(), at.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (fn(plus) - fn(minus)) / (2 * eps)
    return grad


# -- the paper's Figure 3 -------------------------------------------------------


@dl.function
def affine(x, w, b):
    return x @ w + b  # AFFINE


@dl.function
def layer(x, w, b):
    return dl.tanh(affine(x, w, b))


layer_grad = dl.gradient(layer, wrt=(1, 2), keeping=(0,))
layer_grad2 = dl.gradient(layer_grad, from_=0, wrt=(1,))

X, W, B = rand(2, 4), 0.5 * rand(4, 3), 0.5 * rand(1, 3)


def test_staged_application_is_a_call_to_a_private_specialization():
    text = layer.ir(X, W, B)
    assert "func.func private @affine(%arg0: tensor<2x4xf64>, %arg1: tensor<4x3xf64>, %arg2: tensor<1x3xf64>) -> tensor<2x3xf64>" in text
    assert "call @affine(%arg0, %arg1, %arg2)" in text
    assert "func.func @layer(" in text and "dlvm.tanh" in text


def test_gradient_is_a_declaration_whose_body_the_ad_synthesizes():
    staged = layer_grad.ir(X, W, B)
    assert "attributes {dlvm.gradient = #dlvm.gradient<of @layer wrt [1, 2] keeping [0]>}" in staged
    assert "func.func @layer_grad_entry(" in staged
    differentiated = layer_grad.ir(X, W, B, stage="ad")
    assert "dlvm.gradient =" not in differentiated and "dlvm.transpose" in differentiated
    assert "linalg.matmul" in layer_grad.ir(X, W, B, stage="linalg")


def test_gradient_matches_finite_differences():
    dw, db, y = layer_grad(X, W, B)
    np.testing.assert_allclose(y, np.tanh(X @ W + B), rtol=1e-12)
    total = lambda w, b: float(np.sum(np.tanh(X @ w + b)))  # noqa: E731
    np.testing.assert_allclose(dw, central_difference(lambda v: total(v, B), W), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(db, central_difference(lambda v: total(W, v), B), rtol=1e-6, atol=1e-9)


def test_second_order_gradient_matches_finite_differences_of_the_first():
    d2 = layer_grad2(X, W, B)
    expected = central_difference(lambda v: float(np.sum(layer_grad(X, v, B)[0])), W)
    np.testing.assert_allclose(d2, expected, rtol=1e-5, atol=1e-8)


def test_seedable_gradient_takes_one_seed_per_result():
    seeded = dl.gradient(layer, wrt=1, seedable=True)
    seed = rand(2, 3)
    dw = seeded(X, W, B, seed)
    expected = central_difference(lambda v: float(np.sum(seed * np.tanh(X @ v + B))), W)
    np.testing.assert_allclose(dw, expected, rtol=1e-6, atol=1e-9)
    with pytest.raises(dl.ShapeError, match="seed 3 is f64\\[3, 2\\], expected f64\\[2, 3\\]"):
        seeded(X, W, B, rand(3, 2))
    with pytest.raises(dl.ArityError, match="takes 3 arguments and 1 seeds, got 3"):
        seeded(X, W, B)


def test_from_selects_one_result_of_a_multi_result_function():
    @dl.function
    def two(x):
        return x * x, dl.sin(x)

    d_second = dl.gradient(two, from_=1)
    x = rand(3)
    np.testing.assert_allclose(d_second(x), np.cos(x), rtol=1e-12)
    assert "from 1" in d_second.ir(x)


# -- tracing, types, operators ------------------------------------------------------


def test_annotations_and_python_scalars_promoted_to_rank0_constants():
    @dl.function
    def scale(x: Tensor[f32, (None, 3)], s: Scalar[f32]):
        return 2 * x * s + 1

    text = scale.ir((4, 3), ())
    assert "%arg0: tensor<4x3xf32>, %arg1: tensor<f32>" in text
    assert "dlvm.constant dense<2.000000e+00> : tensor<f32>" in text
    assert "dlvm.constant dense<1.000000e+00> : tensor<f32>" in text
    x = rand(4, 3, dtype=np.float32)
    np.testing.assert_allclose(scale(x, 0.5), 2 * x * 0.5 + 1, rtol=1e-6)


def test_operators_map_to_dlvm_ops():
    @dl.function
    def everything(a, b, m):
        return (a + b, a - b, a * b, a / b, a**b, -a, a @ m, a < b, a >= 0.5, a == b, (a < b) & (b > a), ~(a < b))

    a, b, m = np.abs(rand(2, 3)) + 0.1, np.abs(rand(2, 3)) + 0.1, rand(3, 2)
    text = everything.ir(a, b, m)
    for op in ("dlvm.add", "dlvm.sub", "dlvm.mul", "dlvm.div", "dlvm.pow", "dlvm.neg", "dlvm.dot",
               "dlvm.cmp lt", "dlvm.cmp ge", "dlvm.cmp eq", "dlvm.and", "dlvm.not"):
        assert op in text, op
    assert "tensor<2x3xi1>" in text
    out = everything(a, b, m)
    expected = (a + b, a - b, a * b, a / b, a**b, -a, a @ m, a < b, a >= 0.5, a == b, a < b, ~(a < b))
    for got, want in zip(out, expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_shape_and_reduction_ops_match_numpy():
    @dl.function
    def shapes(x, y):
        return (
            dl.softmax(x, axis=1),
            dl.reduce_sum(x, axis=0, keepdims=True),
            dl.reduce("max", x, [1]),
            x.mean(),
            dl.transpose(x),
            dl.concatenate([x, y], axis=0),
            x[1:, ::2],
            x[0],
            dl.reshape(x, (-1,)),
            dl.expand_dims(x, 0),
            dl.cast(x > 0, f64),
            dl.where(x > 0, x, 0.0),
            dl.cumsum(x, axis=1),
            dl.reverse(x, 1),
            dl.cumsum(x, axis=1, exclusive=True),
            dl.cumprod(x, axis=0, reverse=True),
            dl.cummax(x, axis=1, exclusive=True, reverse=True),
        )

    x, y = rand(3, 4), rand(2, 4)
    e = np.exp(x - x.max(1, keepdims=True))
    expected = (
        e / e.sum(1, keepdims=True), x.sum(0, keepdims=True), x.max(1), x.mean(), x.T,
        np.concatenate([x, y]), x[1:, ::2], x[0], x.reshape(-1), x[None], (x > 0).astype(np.float64),
        np.where(x > 0, x, 0.0), np.cumsum(x, 1), x[:, ::-1],
        np.cumsum(x, 1) - x, np.cumprod(x[::-1], 0)[::-1],
        np.concatenate([np.maximum.accumulate(x[:, ::-1], 1)[:, -2::-1], np.full((3, 1), -np.inf)], 1),
    )
    for got, want in zip(shapes(x, y), expected):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_softmax_family_over_several_axes_matches_scipy():
    from scipy import special

    @dl.function
    def several(x):
        return (
            dl.softmax(x, axis=(1, 2)), dl.log_softmax(x, axis=(0, 2)), dl.softmax(x, axis=None),
            dl.logsumexp(x), dl.logsumexp(x, axis=(0, 2), keepdims=True), dl.logsumexp(x, axis=-1),
        )

    x = 3 * rand(3, 4, 5)
    expected = (
        special.softmax(x, axis=(1, 2)), special.log_softmax(x, axis=(0, 2)), special.softmax(x, axis=None),
        special.logsumexp(x), special.logsumexp(x, axis=(0, 2), keepdims=True), special.logsumexp(x, axis=-1),
    )
    for got, want in zip(several(x), expected):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    # every slice -inf: -inf, as scipy's
    assert several(np.full((3, 4, 5), -np.inf))[3] == -np.inf

    @dl.function
    def loss(x):
        return dl.reduce_sum(dl.softmax(x, axis=(0, 2)) * dl.cos(x)) + dl.logsumexp(x, axis=(1, 2)).sum()

    grad = dl.gradient(loss)(x)
    reference = lambda v: float(  # noqa: E731
        np.sum(special.softmax(v, axis=(0, 2)) * np.cos(v)) + special.logsumexp(v, axis=(1, 2)).sum()
    )
    np.testing.assert_allclose(grad, central_difference(reference, x), rtol=1e-6, atol=1e-8)
    with pytest.raises(dl.DTypeError, match="dl.logsumexp: element type i32 is not a float type"):
        dl.function(lambda v: dl.logsumexp(v))(np.ones(3, np.int32))


def test_take_follows_numpy():
    @dl.function
    def takes(x, i):
        return x.take(i, axis=1), dl.take(x, i), x.take(i, axis=-1), x.take(i[0, 0])

    x, i = rand(2, 3, 4), np.array([[2, 0], [1, -1]], np.int32)
    for got, want in zip(takes(x, i), (x.take(i, axis=1), x.take(i), x.take(i, axis=-1), x.take(i[0, 0]))):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    # the gradient scatters back, repeated positions adding up
    grad = dl.gradient(lambda v, j: dl.reduce_sum(v.take(j, axis=0) ** 2), wrt=(0,))
    v, j = rand(4, 3), np.array([1, 3, 1], np.int32)
    expected = np.zeros_like(v)
    np.add.at(expected, j, 2 * v[j])
    np.testing.assert_allclose(grad(v, j), expected, rtol=1e-12)


def test_pad_follows_numpy_and_lax():
    @dl.function
    def pads(x):
        return (dl.pad(x, 1), dl.pad(x, ((0, 2), (1, 0))), dl.pad(x, (2, 1), 5.0),
                dl.pad(x, ((-1, 1, 1), (0, -2, 0)), -1.0))

    x = rand(3, 4)
    got = pads(x)
    for g, want in zip(got[:3], (np.pad(x, 1), np.pad(x, ((0, 2), (1, 0))), np.pad(x, (2, 1), constant_values=5.0))):
        np.testing.assert_array_equal(g, want)
    crop = np.full((5, 2), -1.0)
    crop[1], crop[3] = x[1, :2], x[2, :2]  # row 0 cropped, one row of -1 between the others
    np.testing.assert_array_equal(got[3], crop)
    # the gradient of both the tensor and the value
    grad = dl.gradient(lambda v, c: dl.reduce_sum(dl.sin(dl.pad(v, ((-1, 2, 1), (1, 0, 2)), c))), wrt=(0, 1))
    c = np.float64(0.3)
    dx, dc = grad(x, c)

    def reference(v, value):
        out = np.full((6, 11), value)
        out[1:4:2, 1::3] = v[1:]  # low -1 crops row 0; interior 1 and 2
        return float(np.sum(np.sin(out)))

    np.testing.assert_allclose(dx, central_difference(lambda v: reference(v, c), x), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dc, (reference(x, c + 1e-6) - reference(x, c - 1e-6)) / 2e-6, rtol=1e-6)
    with pytest.raises(dl.ShapeError, match="dl.pad: pad_width"):
        dl.function(lambda v: dl.pad(v, ((1, 2),)))(x)


def test_boolean_masks_known_at_trace_time_index_as_numpy():
    x = rand(2, 3, 4)
    rows = np.array([[True, False, True], [False, False, True]])
    cols = np.array([True, False, True, True])

    @dl.function
    def masked(v):
        return (v[rows], v[:, :, cols], v[1][[True, False, True]], v[np.zeros(2, bool)],
                v.at[rows].set(-1.0), v.at[:, :, cols].add(10.0))

    set_rows, add_cols = x.copy(), x.copy()
    set_rows[rows] = -1.0
    add_cols[:, :, cols] += 10.0
    expected = (x[rows], x[:, :, cols], x[1][[True, False, True]], x[np.zeros(2, bool)], set_rows, add_cols)
    for got, want in zip(masked(x), expected):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    # the gradient flows to the selected elements
    grad = dl.gradient(lambda v: dl.reduce_sum(v[rows] ** 2))(x)
    np.testing.assert_allclose(grad, np.where(rows[..., None], 2 * x, 0.0), rtol=1e-12)
    with pytest.raises(dl.ShapeError, match="a staged boolean mask gives a result whose shape depends on its values"):
        dl.function(lambda v: v[v > 0])(x)
    with pytest.raises(dl.ShapeError, match=r"a boolean mask of shape \(3,\) for dimensions of sizes \(2,\)"):
        dl.function(lambda v: v[np.ones(3, bool)])(x)


def test_ints_next_to_integer_arrays_index_with_them():
    x, idx = rand(3, 4, 5), np.array([[0, 3], [2, -1]], np.int32)

    @dl.function
    def picks(v, i):
        return v[1, i], v[:, i, 2], v[2, i, 4], v[-1, i], v.at[0, i].add(1.0)

    added = x.copy()
    np.add.at(added, (0, idx), 1.0)
    for got, want in zip(picks(x, idx), (x[1, idx], x[:, idx, 2], x[2, idx, 4], x[-1, idx], added)):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)



def test_separated_integer_arrays_index_as_numpy():
    """Arrays (and ints) separated by slices put the broadcast index dimensions first, as numpy
    does; other slices beside the arrays apply first; ``.at`` updates the same elements."""
    x, idx, jdx = rand(3, 4, 5), np.array([[0, 2], [1, -1]], np.int32), np.array([4, 1], np.int32)

    @dl.function
    def picks(v, i, j):
        return v[i, :, 1], v[0, :, j], v[i[0], 1:3, j], v[..., j][1:, i], v[:2, i, ::2], v.at[i[0], :, j].add(1.0)

    added = x.copy()
    np.add.at(added, (idx[0], slice(None), jdx), 1.0)
    wants = (x[idx, :, 1], x[0, :, jdx], x[idx[0], 1:3, jdx], x[..., jdx][1:, idx], x[:2, idx, ::2], added)
    for got, want in zip(picks(x, idx, jdx), wants):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    # the gradient reaches the selected elements (twice where an index repeats)
    grad = dl.gradient(lambda v: dl.reduce_sum(v[idx[0], :, jdx] * 2.0))(x)
    want = np.zeros_like(x)
    np.add.at(want, (idx[0], slice(None), jdx), 2.0)
    np.testing.assert_allclose(grad, want)
    with pytest.raises(dl.ShapeError, match="with integer arrays, the other positions must be ':'"):
        dl.function(lambda v, i: v.at[i, 1:3, 0].set(0.0))(x, idx)


def test_reduce_window_takes_padding_pairs_and_dilations():
    x = np.array([1.0, 5.0, 2.0, 4.0])

    @dl.function
    def pools(v):
        # base dilation 2: [1, _, 5, _, 2, _, 4] with -inf holes
        return (dl.reduce_window("max", v, (2,), (2,), [(1, 0)], base_dilation=(2,)),
                dl.reduce_window("max", v, (2,), (1,), [(0, 0)], window_dilation=(2,), base_dilation=(2,)),
                dl.reduce_window("mean", v, (3,), (1,), [(2, 0)], window_dilation=(1,)))

    wide, sparse, mean = pools(x)
    np.testing.assert_array_equal(wide, [1.0, 5.0, 2.0, 4.0])
    np.testing.assert_array_equal(sparse, [5.0, -np.inf, 5.0, -np.inf, 4.0])
    np.testing.assert_allclose(mean, [1.0, 3.0, 8 / 3, 11 / 3], rtol=1e-15)  # padding is not counted
    grad = dl.gradient(lambda v: dl.reduce_sum(dl.reduce_window("mean", v, (2,), (1,), [(1, 1)], base_dilation=(2,))))
    np.testing.assert_allclose(grad(x), central_difference(_dilated_mean_total, x), rtol=1e-6, atol=1e-9)


def _dilated_mean_total(v: np.ndarray) -> float:
    """sum of the windows [2] strides [1] padding (1, 1) base dilation 2 means, by hand."""
    dilated = np.full(2 * len(v) - 1, np.nan)
    dilated[::2] = v
    padded = np.concatenate([[np.nan], dilated, [np.nan]])
    return float(sum(np.nanmean(padded[i : i + 2]) for i in range(len(padded) - 1)))


def test_convolve_random_and_constants():
    @dl.function
    def conv(x, k):
        noise = dl.random((2, 2), low=0.0, high=1.0, seed=7, dtype=f64)
        return dl.convolve(x, k, padding=1), noise, dl.constant([[1, 2], [3, 4]], dl.i32)

    x, k = rand(1, 1, 4, 4), rand(1, 1, 3, 3)
    y, noise, const = conv(x, k)
    padded = np.pad(x[0, 0], 1)
    expected = np.array([[np.sum(padded[i : i + 3, j : j + 3] * k[0, 0]) for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(y[0, 0], expected, rtol=1e-12)
    assert noise.shape == (2, 2) and np.all((noise >= 0) & (noise < 1))
    np.testing.assert_array_equal(const, [[1, 2], [3, 4]])
    assert const.dtype == np.int32


# -- specialization and caching ----------------------------------------------------------


def test_specializations_are_cached_per_shape_and_dtype():
    @dl.function
    def double(x):
        return x + x

    double(np.ones(3))
    double(np.zeros(3))
    assert double.traces == 1
    double(np.ones(4))
    double(np.ones(3, np.float32))
    assert double.traces == 3
    assert sorted(str(spec[0]) for spec in double.specializations) == ["f32[3]", "f64[3]", "f64[4]"]


def test_one_function_at_two_shapes_in_one_module():
    @dl.function
    def both(a, b):
        return dl.reduce_sum(layer(a, W, B)) + dl.reduce_sum(layer(b, W, B))

    text = both.ir(rand(2, 4), rand(5, 4))
    assert "func.func private @layer(" in text and "func.func private @layer_1(" in text


def test_target_is_passed_to_compile(monkeypatch):
    seen = {}

    def fake_compile(module, target, **options):
        seen.update(target=target, **options)
        raise dlvm_mlir.compiler.CompileError("stop")

    monkeypatch.setattr(dlvm_mlir, "compile", fake_compile)

    @dl.function(target="cuda", optimize=False)
    def on_gpu(x):
        return x * 2.0

    with pytest.raises(DLVMError, match="stop"):
        on_gpu(np.ones(2, np.float32))
    assert seen == {
        "target": "cuda",
        "optimize": False,
        "checkpoint": "save-everything",
        "checkpoint_budget": "",
        "filename": "on_gpu",
        "entry_points": ["on_gpu"],
    }


def test_gradient_checkpoint_policy():
    """dl.gradient(checkpoint=...) recomputes forward values in the reverse sweep; same numbers."""
    saving_nothing = dl.gradient(layer, wrt=(1, 2), keeping=(0,), checkpoint="save-nothing")
    assert "dlvm.recompute" in saving_nothing.ir(X, W, B, stage="optimize")
    assert "dlvm.recompute" not in layer_grad.ir(X, W, B, stage="optimize")
    for got, want in zip(saving_nothing(X, W, B), layer_grad(X, W, B), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(DLVMError, match="unknown checkpoint policy 'sometimes'"):
        dl.gradient(layer, checkpoint="sometimes")


# -- errors point at the user's line ------------------------------------------------------


@dl.function
def mismatched(x, w):
    return x @ w + dl.ones((3, 7), f64)  # MISMATCH


@dl.function
def annotated(x: Tensor[f32, ("n", 4)], y: Tensor[f32, ("n", 4)]):
    return x + y


def test_shape_error_in_an_op_points_at_the_user_line():
    with pytest.raises(dl.ShapeError) as info:
        mismatched(rand(2, 4), rand(4, 5))
    err = info.value
    assert isinstance(err, DLVMError)
    assert (err.location.filename, err.location.line) == (__file__, line_of("# MISMATCH"))
    assert "dl.add: operand shapes are not broadcast-compatible: [2, 5] and [3, 7]" in str(err)
    assert "return x @ w + dl.ones((3, 7), f64)" in str(err)


def test_call_errors_point_at_the_call():
    with pytest.raises(dl.ArityError, match="'annotated' takes 2 arguments, got 1") as info:
        annotated(np.ones((2, 4), np.float32))  # ARITY
    assert info.value.location.line == line_of("# ARITY")
    with pytest.raises(dl.DTypeError, match="argument 0 of 'annotated' has element type f64, expected f32"):
        annotated(np.ones((2, 4)), np.ones((2, 4), np.float32))
    with pytest.raises(dl.ShapeError, match="dimension 'n' is 3 here but 2 in an earlier argument"):
        annotated(np.ones((2, 4), np.float32), np.ones((3, 4), np.float32))


@dl.function
def chain(x: Tensor[f64, ("n", None)], *weights):
    """A variadic staged function: as many layers as weights passed."""
    for w in weights:
        x = dl.tanh(x @ w)
    return dl.reduce_sum(x)


def test_variadic_functions_specialize_per_argument_count_and_differentiate():
    x, w1, w2, w3 = rand(3, 4), 0.5 * rand(4, 5), 0.5 * rand(5, 5), 0.5 * rand(5, 2)
    assert np.isclose(chain(x, w1), np.sum(np.tanh(x @ w1)), rtol=1e-12)
    assert np.isclose(chain(x, w1, w2, w3), np.sum(np.tanh(np.tanh(np.tanh(x @ w1) @ w2) @ w3)), rtol=1e-12)
    assert np.isclose(chain(x), np.sum(x), rtol=1e-12)  # no weights: *args may be empty
    assert len(chain.specializations) == 3
    grads = dl.gradient(chain, wrt=(1, 2))(x, w1, w2)
    reference = lambda a, b: float(np.sum(np.tanh(np.tanh(x @ a) @ b)))  # noqa: E731
    np.testing.assert_allclose(grads[0], central_difference(lambda v: reference(v, w2), w1), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grads[1], central_difference(lambda v: reference(w1, v), w2), rtol=1e-6, atol=1e-9)

    @dl.function
    def outer(x, *ws):
        return chain(x, *ws) * 2.0  # staged application of a variadic function

    assert np.isclose(outer(x, w1, w2), 2 * reference(w1, w2), rtol=1e-12)
    with pytest.raises(dl.ArityError, match="'chain' takes at least 1 arguments, got 0"):
        chain()
    with pytest.raises(dl.StagingError, match="takes \\*args: the seeds could not be told"):
        dl.gradient(chain, seedable=True)
    with pytest.raises(dl.StagingError, match="parameter 'scale' must be positional"):
        dl.function(lambda x, *, scale: x)


def test_mixed_element_types_and_bad_ops_are_dtype_errors():
    @dl.function
    def mixed(x, y):
        return x * y  # MIXED

    with pytest.raises(dl.DTypeError, match="operands have element types f32 and f64") as info:
        mixed(np.ones(2, np.float32), np.ones(2))
    assert info.value.location.line == line_of("# MIXED")

    @dl.function
    def int_tanh(x):
        return dl.tanh(x)

    with pytest.raises(dl.DTypeError, match="dl.tanh: operand #0 must be ranked tensor of .*float"):
        int_tanh(np.ones(2, np.int32))


def test_ops_carry_the_user_location_in_the_ir():
    text = affine.ir(X, W, B, debug_info=True)
    assert f'loc("{__file__}":{line_of("# AFFINE")}:12)' in text


def test_python_truth_value_of_a_tensor_is_a_tracing_error():
    @dl.function
    def branchy(x):
        if x > 0:  # BOOL
            return x
        return -x

    with pytest.raises(dl.TracingError, match="use dl.cond") as info:
        branchy(np.ones(()))
    assert info.value.location.line == line_of("# BOOL")


def test_tensors_cannot_leak_out_of_branches_or_functions():
    leaked = []

    @dl.function
    def leak(x):
        dl.cond(dl.reduce_sum(x) > 0, lambda v: leaked.append(v * 2) or v, lambda v: v, x)
        return leaked[-1]

    with pytest.raises(dl.TracingError, match="inside a dl.cond branch or loop body is used outside it"):
        leak(np.ones(2))

    @dl.function
    def use_later(x):
        return x + leaked[-1]

    with pytest.raises(dl.TracingError, match="pass it as an argument"):
        use_later(np.ones(2))


def test_bad_gradient_declarations_are_reported_where_declared():
    bad = dl.gradient(layer, wrt=(5,))  # BADWRT
    with pytest.raises(dl.StagingError, match="wrt index 5 is out of range \\(3 arguments\\)") as info:
        bad(X, W, B)
    assert info.value.location.line == line_of("# BADWRT")


# -- control flow -----------------------------------------------------------------------


@dl.function
def piecewise(x):
    return dl.cond(dl.reduce_sum(x) > 0, lambda v: v * v, lambda v: -v, x)


@dl.function
def horner(x):
    return dl.fori_loop(0, 3, lambda i, c: c * x + dl.cast(i, f64), x)


@dl.function
def grow(x):
    return dl.while_loop(lambda c: dl.reduce_sum(c) < 100.0, lambda c: c * x, x)


def test_cond_is_scf_if_and_runs_either_branch():
    text = piecewise.ir(np.ones(3))
    assert "scf.if" in text and "tensor.extract" in text
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(piecewise(x), x * x)
    np.testing.assert_allclose(piecewise(-x), x)


def test_loops_are_scf_for_and_scf_while():
    x = np.array([1.0, 2.0, 3.0])
    assert "scf.for" in horner.ir(x) and "scf.while" in grow.ir(x)
    np.testing.assert_allclose(horner(x), x**4 + x + 2)
    np.testing.assert_allclose(grow(x), x**5)


def test_gradients_through_control_flow():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(dl.gradient(piecewise)(x), 2 * x)
    np.testing.assert_allclose(dl.gradient(horner)(x), 4 * x**3 + 1)
    np.testing.assert_allclose(dl.gradient(grow)(x), 5 * x**4)


def test_branch_results_must_agree():
    @dl.function
    def disagree(x):
        return dl.cond(dl.reduce_sum(x) > 0, lambda v: v, lambda v: dl.reduce_sum(v), x)

    with pytest.raises(dl.ShapeError, match="dl.cond: the false branch: value 0 is f64\\[\\], expected f64\\[3\\]"):
        disagree(np.ones(3))


def test_interpreter_runs_the_same_program():
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(horner.interpret(x), horner(x))
    dw, db, y = layer_grad.interpret(X, W, B)
    np.testing.assert_allclose(dw, layer_grad(X, W, B)[0], rtol=1e-12)


def test_indexing_with_a_staged_value_names_what_is_supported():
    @dl.function
    def row_sum(xs):
        return dl.fori_loop(0, 4, lambda i, acc: acc + xs[i], xs[0] * 0.0)

    np.testing.assert_allclose(row_sum(np.arange(12.0).reshape(4, 3)), np.arange(12.0).reshape(4, 3).sum(0))

    @dl.function
    def staged_slice(xs):
        return dl.fori_loop(0, 2, lambda i, acc: acc + dl.reduce_sum(xs[i:]), dl.reduce_sum(xs) * 0.0)

    with pytest.raises(dl.TracingError) as info:
        staged_slice(np.ones(5))
    message = str(info.value)
    assert "Ellipsis" not in message and "test_nnkit.py:" in message
    assert "rank-0 integer tensors (a dl.fori_loop counter), slices with positive steps (bounds are Python ints)" in message

    @dl.function
    def float_index(xs, t):
        return xs[t]

    with pytest.raises(dl.TracingError, match="indexing with a staged value of dtype f32 and shape"):
        float_index(np.ones(5, np.float32), np.float32(1.0))


@pytest.mark.parametrize(
    "index,message",
    [
        (1.5, "cannot index with 1.5: tensors are indexed with Python ints"),
        ([0.5, 1.5], "cannot index with a list"),
        ((Ellipsis, 0, Ellipsis), "a single ellipsis"),
        (slice(0.5, 2), "slice bound 0.5 is not a Python int"),
        ((0, 0, 0), "too many indices \\(3\\) for a tensor of rank 2"),
    ],
)
def test_unsupported_indices_are_staging_errors(index, message):
    @dl.function
    def pick(x):
        return x[index]

    with pytest.raises(dl.StagingError, match=message):
        pick(np.ones((4, 3)))


def test_supported_indices_still_work():
    @dl.function
    def picks(x):
        return x[1], x[..., 0], x[None, 1:3], x[-1, ::2], x[np.int64(2)]

    x = np.arange(12.0).reshape(4, 3)
    for got, want in zip(picks(x), (x[1], x[..., 0], x[None, 1:3], x[-1, ::2], x[2])):
        np.testing.assert_array_equal(got, want)


# ----- indexing with staged positions, numpy's rank promotion (issue 16) ---------------------


def _rnn_reference(xs, w, steps):
    h = np.zeros((1, xs.shape[1]))
    for i in range(steps):
        h = np.tanh(h @ w + xs[i])
    return h.sum()


def test_loop_counter_indexes_a_tensor_and_its_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((12, 5))
    w = rng.standard_normal((5, 5)) * 0.4

    @dl.function
    def rnn(xs, w):
        # xs[i] with the loop counter (dlvm.dynamic_slice); (1, 5) + (5,) promotes as numpy
        return dl.reduce_sum(dl.fori_loop(0, 12, lambda i, h: dl.tanh(h @ w + xs[i]), dl.zeros((1, 5), dl.f64)))

    assert rnn(xs, w) == pytest.approx(_rnn_reference(xs, w, 12), rel=1e-12)
    gx, gw = dl.gradient(rnn, wrt=(0, 1))(xs, w)
    for (i, j) in ((0, 0), (5, 3), (11, 4)):
        a, b = xs.copy(), xs.copy()
        a[i, j] += 1e-6
        b[i, j] -= 1e-6
        assert gx[i, j] == pytest.approx((_rnn_reference(a, w, 12) - _rnn_reference(b, w, 12)) / 2e-6, rel=1e-5, abs=1e-9)
    assert "dlvm.dynamic_slice" in rnn.ir(xs, w)


@pytest.mark.parametrize("i", [0, 3, -1, -6, 9])
def test_staged_indices_updates_argmax_and_iota(i):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 4)).astype(np.float32)

    @dl.function
    def f(x, i):
        return x[i], x[1, i], x[i, 1:3], x.at[i].set(0.0), x.at[i, :2].add(1.0), x.argmax(0), dl.iota((2, 3), 1)

    row, item, part, zeroed, added, am, io = f(x, np.array(i, np.int32))
    r = min(max(i + 6 if i < 0 else i, 0), 5)  # numpy's negative positions, then XLA's clamp
    c = min(max(i + 4 if i < 0 else i, 0), 3)
    np.testing.assert_array_equal(row, x[r])
    assert item == x[1, c]
    np.testing.assert_array_equal(part, x[r, 1:3])
    expected = x.copy()
    expected[r] = 0
    np.testing.assert_array_equal(zeroed, expected)
    expected = x.copy()
    expected[r, :2] += 1
    np.testing.assert_array_equal(added, expected)
    np.testing.assert_array_equal(am, x.argmax(0))
    np.testing.assert_array_equal(io, [[0, 1, 2], [0, 1, 2]])


def test_numpy_names_of_the_xla_elementwise_ops():
    x = np.linspace(-2.5, 2.5, 11)
    y = np.linspace(0.5, 3.0, 11)
    i = np.arange(-5, 6, dtype=np.int32)

    @dl.function
    def f(x, y, i):
        return (dl.arcsinh(x), dl.exp2(x), dl.log2(y), dl.log10(y), dl.cbrt(x), dl.arctan2(x, y),
                dl.remainder(x, y), x.clip(-1.0, 1.0), dl.isfinite(x / (x - x)), i ^ 3, i << 2, i >> 1,
                dl.popcount(i), dl.arctanh(x / 3.0), dl.arccosh(y + 1.0))

    got = f(x, y, i)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = x / (x - x)
    expected = (np.arcsinh(x), np.exp2(x), np.log2(y), np.log10(y), np.cbrt(x), np.arctan2(x, y), np.fmod(x, y),
                np.clip(x, -1, 1), np.isfinite(ratio), i ^ 3, i << 2, i >> 1,
                np.bitwise_count(i.view(np.uint32)).astype(np.int32), np.arctanh(x / 3), np.arccosh(y + 1))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-15)


def test_rank_promotion_follows_numpy():
    @dl.function
    def f(a, b, c):
        return a + b, dl.where(c, a, b)

    a = np.ones((2, 3, 4), np.float32)
    b = np.arange(4, dtype=np.float32)
    c = np.array([True, False, True, False])
    s, w = f(a, b, c)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(w, np.where(c, a, b))


def test_integer_array_indexing_gathers_and_its_gradient_scatters():
    rng = np.random.default_rng(5)
    emb = rng.standard_normal((50, 8))
    tokens = rng.integers(-50, 50, (4, 6)).astype(np.int32)  # negative: from the end
    labels = rng.integers(0, 10, 4).astype(np.int32)
    w = rng.standard_normal((8, 10))

    @dl.function
    def loss(emb, tokens, w, labels):
        h = dl.reduce_mean(emb[tokens], axis=1)
        log_p = dl.log_softmax(h @ w, axis=1)
        return -dl.reduce_mean(dl.take_along_axis(log_p, dl.expand_dims(labels, 1), 1))

    def reference(e):
        h = e[tokens].mean(1) @ w
        log_p = h - h.max(1, keepdims=True)
        log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
        return -log_p[np.arange(4), labels].mean()

    assert loss(emb, tokens, w, labels) == pytest.approx(reference(emb), rel=1e-12)
    grad = dl.gradient(loss, wrt=(0,))(emb, tokens, w, labels)
    for row in (tokens[0, 0] % 50, tokens[3, 5] % 50):
        a, b = emb.copy(), emb.copy()
        a[row, 2] += 1e-6
        b[row, 2] -= 1e-6
        assert grad[row, 2] == pytest.approx((reference(a) - reference(b)) / 2e-6, rel=1e-6, abs=1e-10)
    untouched = np.setdiff1d(np.arange(50), tokens % 50)
    assert not grad[untouched].any()


def test_integer_array_updates_scatter():
    x = np.zeros((6, 3), np.float32)
    rows = np.array([1, 4, 1], np.int32)

    @dl.function
    def f(x, rows):
        values = dl.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
        return x.at[rows].add(1.0), x.at[rows].set(values), x[:, rows % 3]

    added, replaced, columns = f(x, rows)
    expected = x.copy()
    np.add.at(expected, rows, 1.0)
    np.testing.assert_array_equal(added, expected)  # repeated rows add up
    expected = x.copy()
    expected[[1, 4, 1]] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]  # the last update of row 1 stays
    np.testing.assert_array_equal(replaced, expected)
    assert columns.shape == (6, 3)
    np.testing.assert_array_equal(columns, x[:, rows % 3])


def test_python_lists_of_ints_index_like_numpy():
    x = np.arange(12.0).reshape(4, 3)

    @dl.function
    def f(x):
        return x[[0, -1]], x[:, [2, 0, 2]], x[[1, 3], [0, 2]]

    for got, want in zip(f(x), (x[[0, -1]], x[:, [2, 0, 2]], x[[1, 3], [0, 2]])):
        np.testing.assert_array_equal(got, want)


MATMUL_SHAPES = [
    ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((1, 1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)),
    ((2, 3, 4), (2, 4, 5)), ((6, 2, 3, 4), (1, 4, 5)), ((2, 3, 4), (1, 1, 4, 5)), ((8, 10, 64), (64, 33)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_follows_numpy_and_its_gradient_matches_finite_differences(sa, sb):
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)

    @dl.function
    def f(a, b):
        return dl.reduce_sum(dl.tanh(a @ b))

    np.testing.assert_allclose(dl.function(lambda a, b: a @ b)(a, b), a @ b, rtol=1e-12, atol=1e-12)
    ga, gb = dl.gradient(f, wrt=(0, 1))(a, b)
    ref = lambda a, b: np.tanh(a @ b).sum()  # noqa: E731
    for x, g, at in ((a, ga, 0), (b, gb, 1)):
        for flat in {0, x.size // 2, x.size - 1}:
            plus, minus = [a.copy(), b.copy()], [a.copy(), b.copy()]
            plus[at].flat[flat] += 1e-6
            minus[at].flat[flat] -= 1e-6
            assert g.flat[flat] == pytest.approx((ref(*plus) - ref(*minus)) / 2e-6, rel=1e-6, abs=1e-9)


def test_dot_general_and_tensordot_follow_lax_and_numpy():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 4, 5, 8)), rng.standard_normal((2, 4, 6, 8))
    x, y = rng.standard_normal((3, 4, 5)), rng.standard_normal((4, 5, 6))

    @dl.function
    def f(q, k, x, y):
        return (dl.dot_general(q, k, (([3], [3]), ([0, 1], [0, 1]))), dl.tensordot(x, y),
                dl.tensordot(x, y, axes=([1], [0])), dl.tensordot(x, y, axes=0))

    scores, two, one, outer = f(q, k, x, y)
    np.testing.assert_allclose(scores, np.einsum("bhsd,bhtd->bhst", q, k), rtol=1e-12, atol=1e-14)
    for got, axes in ((two, 2), (one, ([1], [0])), (outer, 0)):
        np.testing.assert_allclose(got, np.tensordot(x, y, axes), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "fn,message",
    [
        (lambda a, b: a @ dl.reshape(b, [5, 4]), "dl.matmul: the contracted dimensions differ \\(4 and 5\\)"),
        (lambda a, b: dl.matmul(a, 2.0), "dl.matmul: operands must have rank 1 or more"),
        (lambda a, b: dl.dot_general(a, b, (([0], [0]),)), "dl.dot_general: dimension_numbers must be"),
        (lambda a, b: dl.dot_general(a, b, (([0], [0]), ([], []))), "contracting dimensions differ in size"),
        (lambda a, b: dl.dot_general(a, b, (([3], [0]), ([], []))), "axis 3 is out of range"),
    ],
)
def test_contraction_errors_are_located(fn, message):
    with pytest.raises(dl.StagingError, match=message) as info:
        dl.function(fn)(np.ones((3, 4)), np.ones((4, 5)))
    assert "test_nnkit.py" in str(info.value)


def test_sort_argsort_top_k_follow_numpy_and_lax():
    rng = np.random.default_rng(0)
    x = np.round(rng.standard_normal((5, 40)), 1)  # ties
    x[1, 3] = np.nan
    w = rng.standard_normal((5, 40))

    @dl.function
    def f(x, w):
        keys, values = dl.sort((x, w), axis=0, descending=True)
        top_values, top_indices = dl.top_k(x, 7)
        return dl.sort(x, axis=1), x.sort(0), x.argsort(0), values, top_values, top_indices

    s, s0, a, v, tv, ti = f(x, w)
    np.testing.assert_array_equal(s, np.sort(x, 1))
    np.testing.assert_array_equal(s0, np.sort(x, 0))
    np.testing.assert_array_equal(a, np.argsort(x, 0, kind="stable"))
    nan_first = np.argsort(np.where(np.isnan(x), -np.inf, -x), 0, kind="stable")  # NaN largest, ties stable
    np.testing.assert_array_equal(v, np.take_along_axis(w, nan_first, 0))
    top = np.argsort(np.where(np.isnan(x), -np.inf, -x), 1, kind="stable")[:, :7]
    np.testing.assert_array_equal(ti, top)
    np.testing.assert_array_equal(tv, np.take_along_axis(x, top, 1))


def test_sort_and_top_k_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 20)), rng.standard_normal((3, 20))

    @dl.function
    def loss(x, w):
        top, _ = dl.top_k(x, 5)
        keys, values = dl.sort((x, w), axis=1)
        return dl.reduce_sum(top * top) + dl.reduce_sum(dl.sin(keys) * values)

    def ref(x, w):
        top = np.take_along_axis(x, np.argsort(-x, 1, kind="stable")[:, :5], 1)
        p = np.argsort(x, 1, kind="stable")
        return (top * top).sum() + (np.sin(np.take_along_axis(x, p, 1)) * np.take_along_axis(w, p, 1)).sum()

    grads = dl.gradient(loss, wrt=(0, 1))(x, w)
    for which in (0, 1):
        for flat in (0, 7, 33, 59):
            plus, minus = [x.copy(), w.copy()], [x.copy(), w.copy()]
            plus[which].flat[flat] += 1e-6
            minus[which].flat[flat] -= 1e-6
            fd = (ref(*plus) - ref(*minus)) / 2e-6
            assert grads[which].flat[flat] == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_unsigned_dtypes_compute_as_unsigned():
    """dl.ui8 ... dl.ui64 are numpy's uint8 ... uint64: wrapping arithmetic, unsigned
    division and order, constants checked against the type's range."""
    @dl.function
    def f(x, y):
        return (x + 250) // y, x > y, dl.maximum(x, y), x.astype(dl.f64)

    x = np.array([1, 10, 200, 255], np.uint8)
    y = np.array([3, 0, 201, 128], np.uint8)
    q, gt, mx, asf = f(x, y)
    wrapped = (x.astype(np.int64) + 250) & 0xFF
    np.testing.assert_array_equal(q, np.where(y == 0, 255, wrapped // np.maximum(y, 1)).astype(np.uint8))
    np.testing.assert_array_equal(gt, x > y)
    np.testing.assert_array_equal(mx, np.maximum(x, y))
    np.testing.assert_array_equal(asf, x.astype(np.float64))
    assert q.dtype == np.uint8

    big = np.array([2**64 - 1, 2**63], np.uint64)
    @dl.function
    def g(v):
        return dl.minimum(v, 2**64 - 2)
    np.testing.assert_array_equal(g(big), np.array([2**64 - 2, 2**63], np.uint64))

    @dl.function
    def h(v):
        return v + (-1)
    with pytest.raises(dl.DTypeError, match="does not fit element type ui8"):
        h(x)
