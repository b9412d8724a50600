"""Every derivative rule against central finite differences (float64, reference interpreter).

Each case is a one-op (or few-op) function; ``check_gradients`` synthesizes a
seedable gradient with a random seed and ``check_tangents`` a JVP along a
random direction, and both must match finite differences.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from dlvm_mlir.testing import check_gradients, check_tangents

TOLERANCE = 1e-6


@dataclass
class Case:
    name: str
    body: str  # uses %a, %b, ... and ends with `return`
    args: list[tuple[tuple[int, ...], str]]  # (shape, distribution) per argument
    wrt: list[int] | None = None
    forward: bool = True
    result: str = ""
    types: list[str] = field(default_factory=list)


def _type(shape: tuple[int, ...], elt: str = "f64") -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{elt}>"


def _sample(shape, kind: str, rng: np.random.Generator) -> np.ndarray:
    if kind == "normal":
        return rng.standard_normal(shape)
    if kind == "positive":
        return rng.uniform(0.5, 2.0, shape)
    if kind == "unit":
        return rng.uniform(-0.8, 0.8, shape)
    if kind == "distinct":
        # Well separated values, so max/min/relu/abs are away from their kinks.
        n = int(np.prod(shape)) if shape else 1
        values = rng.permutation(n).astype(np.float64) * 0.7 - 0.35 * n + rng.uniform(0.05, 0.3)
        return values.reshape(shape)
    if kind == "mask":
        return rng.uniform(size=shape) < 0.5
    if kind == "above_one":
        return rng.uniform(1.5, 3.0, shape)
    if kind.startswith("index="):
        return np.int64(kind.split("=")[1]) if not shape else np.full(shape, int(kind.split("=")[1]))
    if kind.startswith("i32="):
        return np.int32(kind.split("=")[1])
    if kind == "true":
        return np.bool_(True)
    raise ValueError(kind)


def _module(case: Case) -> str:
    names = [f"%{chr(ord('a') + i)}" for i in range(len(case.args))]
    types = case.types or [_type(shape, "i1" if kind == "mask" else "f64") for shape, kind in case.args]
    params = ", ".join(f"{n}: {t}" for n, t in zip(names, types))
    return f"func.func @f({params}) -> {case.result} {{\n{case.body}\n}}\n"


def _unary(op: str, shape=(2, 3), kind="normal") -> Case:
    t = _type(shape)
    return Case(op, f"  %r = dlvm.{op} %a : {t}\n  return %r : {t}", [(shape, kind)], result=t)


def _binary(op: str, lhs=(2, 3), rhs=(2, 3), kinds=("normal", "normal"), out=None) -> Case:
    tl, tr = _type(lhs), _type(rhs)
    to = _type(out or tuple(max(a, b) for a, b in zip(lhs, rhs)) if lhs and rhs else (out or lhs or rhs))
    return Case(
        f"{op}_{'x'.join(map(str, lhs)) or 's'}_{'x'.join(map(str, rhs)) or 's'}",
        f"  %r = dlvm.{op} %a, %b : {tl}, {tr}\n  return %r : {to}",
        [(lhs, kinds[0]), (rhs, kinds[1])],
        result=to,
    )


def _op(name: str, line: str, args, result: str, forward: bool = True, wrt=None) -> Case:
    return Case(name, f"  %r = {line}\n  return %r : {result}", args, result=result, forward=forward, wrt=wrt)


CASES: list[Case] = [
    # Elementwise unary.
    *(_unary(op) for op in ("neg", "exp", "tanh", "sigmoid", "sin", "cos", "sinh", "cosh", "atan", "erf", "erfc", "square")),
    *(_unary(op, kind="positive") for op in ("log", "sqrt", "rsqrt", "lgamma", "digamma", "log1p", "tan")),
    _unary("expm1"),
    *(_unary(op, kind="unit") for op in ("asin", "acos")),
    *(_unary(op, kind="distinct") for op in ("relu", "abs")),
    _unary("digamma", shape=(5,), kind="unit"),
    # Elementwise binary, with broadcasting.
    *(_binary(op) for op in ("add", "sub", "mul")),
    _binary("div", kinds=("normal", "positive")),
    _binary("pow", kinds=("positive", "normal")),
    _binary("max", kinds=("distinct", "distinct")),
    _binary("min", kinds=("distinct", "distinct")),
    _binary("mod", kinds=("positive", "positive")),
    _binary("add", (2, 3), (1, 3)),
    _binary("mul", (2, 1), (1, 3), out=(2, 3)),
    _binary("sub", (2, 3), (), out=(2, 3)),
    _binary("div", (), (2, 3), kinds=("normal", "positive"), out=(2, 3)),
    _binary("pow", (2, 3), (1, 3), kinds=("positive", "normal")),
    _binary("max", (3, 1), (1, 4), kinds=("distinct", "distinct"), out=(3, 4)),
    _op(
        "select_broadcast",
        "dlvm.select %a, %b, %c : tensor<2x3xi1>, tensor<2x3xf64>, tensor<f64>",
        [((2, 3), "mask"), ((2, 3), "normal"), ((), "normal")],
        "tensor<2x3xf64>",
        wrt=[1, 2],
    ),
    # dot in every form.
    _op("dot_matmul", "dlvm.dot %a, %b : tensor<2x3xf64>, tensor<3x4xf64>", [((2, 3), "normal"), ((3, 4), "normal")], "tensor<2x4xf64>"),
    _op(
        "dot_batched",
        "dlvm.dot %a, %b : tensor<2x2x3xf64>, tensor<2x3x4xf64>",
        [((2, 2, 3), "normal"), ((2, 3, 4), "normal")],
        "tensor<2x2x4xf64>",
    ),
    _op("dot_matvec", "dlvm.dot %a, %b : tensor<2x3xf64>, tensor<3xf64>", [((2, 3), "normal"), ((3,), "normal")], "tensor<2xf64>"),
    _op("dot_vecmat", "dlvm.dot %a, %b : tensor<3xf64>, tensor<3x4xf64>", [((3,), "normal"), ((3, 4), "normal")], "tensor<4xf64>"),
    _op("dot_vecvec", "dlvm.dot %a, %b : tensor<3xf64>, tensor<3xf64>", [((3,), "normal"), ((3,), "normal")], "tensor<f64>"),
    # Shape ops.
    _op("transpose", "dlvm.transpose %a : tensor<2x3xf64>", [((2, 3), "normal")], "tensor<3x2xf64>"),
    _op("transpose_perm", "dlvm.transpose %a perm [1, 2, 0] : tensor<2x3x4xf64>", [((2, 3, 4), "normal")], "tensor<3x4x2xf64>"),
    _op("reverse", "dlvm.reverse %a dims [1] : tensor<2x3xf64>", [((2, 3), "normal")], "tensor<2x3xf64>"),
    _op(
        "concatenate",
        "dlvm.concatenate %a, %b axis 1 : tensor<2x3xf64>, tensor<2x2xf64>",
        [((2, 3), "normal"), ((2, 2), "normal")],
        "tensor<2x5xf64>",
    ),
    _op("slice", "dlvm.slice %a offsets [1, 0] sizes [2, 2] : tensor<3x4xf64>", [((3, 4), "normal")], "tensor<2x2xf64>"),
    _op(
        "slice_strided",
        "dlvm.slice %a offsets [0, 1] sizes [2, 2] strides [2, 2] : tensor<3x5xf64>",
        [((3, 5), "normal")],
        "tensor<2x2xf64>",
    ),
    _op("reshape", "dlvm.reshape %a to [3, 2] : tensor<2x3xf64>", [((2, 3), "normal")], "tensor<3x2xf64>"),
    _op("pad_shape", "dlvm.pad_shape %a at 1 : tensor<3xf64>", [((3,), "normal")], "tensor<3x1xf64>"),
    _op("squeeze_shape", "dlvm.squeeze_shape %a at 0 : tensor<1x3xf64>", [((1, 3), "normal")], "tensor<3xf64>"),
    _op("broadcast_to", "dlvm.broadcast_to %a to [4, 3] : tensor<1x3xf64>", [((1, 3), "normal")], "tensor<4x3xf64>"),
    _op("broadcast_scalar", "dlvm.broadcast_to %a to [2, 3] : tensor<f64>", [((), "normal")], "tensor<2x3xf64>"),
    # Reductions.
    _op("reduce_add", "dlvm.reduce add %a dims [1] : tensor<2x3xf64>", [((2, 3), "normal")], "tensor<2xf64>"),
    _op(
        "reduce_add_init",
        "dlvm.reduce add %a init %b dims [0, 1] : tensor<2x3xf64>, tensor<f64>",
        [((2, 3), "normal"), ((), "normal")],
        "tensor<f64>",
    ),
    _op("reduce_mean", "dlvm.reduce mean %a dims [0] : tensor<2x3xf64>", [((2, 3), "normal")], "tensor<3xf64>"),
    _op(
        "reduce_mean_init",
        "dlvm.reduce mean %a init %b dims [1] : tensor<2x3xf64>, tensor<f64>",
        [((2, 3), "normal"), ((), "normal")],
        "tensor<2xf64>",
    ),
    _op("reduce_mul", "dlvm.reduce mul %a dims [1] : tensor<2x3xf64>", [((2, 3), "normal")], "tensor<2xf64>"),
    _op(
        "reduce_mul_multi",
        "dlvm.reduce mul %a init %b dims [0, 2] : tensor<2x3x2xf64>, tensor<f64>",
        [((2, 3, 2), "normal"), ((), "normal")],
        "tensor<3xf64>",
    ),
    _op("reduce_max", "dlvm.reduce max %a dims [1] : tensor<3x4xf64>", [((3, 4), "distinct")], "tensor<3xf64>"),
    _op("reduce_min", "dlvm.reduce min %a dims [0, 1] : tensor<3x4xf64>", [((3, 4), "distinct")], "tensor<f64>"),
    _op(
        "reduce_max_init",
        "dlvm.reduce max %a init %b dims [1] : tensor<3x4xf64>, tensor<f64>",
        [((3, 4), "distinct"), ((), "distinct")],
        "tensor<3xf64>",
    ),
    # Padding (negative crops, interior between elements); both operands differentiable.
    _op("pad", "dlvm.pad %a, %b low [1, -1] high [-2, 2] interior [1, 2] : tensor<4x3xf64>, tensor<f64>",
        [((4, 3), "normal"), ((), "normal")], "tensor<6x8xf64>"),
    _op("pad_crop_all", "dlvm.pad %a, %b low [-5] high [1] interior [0] : tensor<4xf64>, tensor<f64>",
        [((4,), "normal"), ((), "normal")], "tensor<0xf64>"),
    _op("pad_into_nothing_of_the_operand", "dlvm.pad %a, %b low [-3] high [0] interior [3] : tensor<2xf64>, tensor<f64>",
        [((2,), "normal"), ((), "normal")], "tensor<2xf64>"),
    # Scans.
    _op("scan_add", "dlvm.scan add %a dim 1 : tensor<2x4xf64>", [((2, 4), "normal")], "tensor<2x4xf64>"),
    _op("scan_mul", "dlvm.scan mul %a dim 0 : tensor<4x2xf64>", [((4, 2), "normal")], "tensor<4x2xf64>"),
    _op("scan_max", "dlvm.scan max %a dim 1 : tensor<2x5xf64>", [((2, 5), "distinct")], "tensor<2x5xf64>"),
    _op("scan_min", "dlvm.scan min %a dim 1 : tensor<2x5xf64>", [((2, 5), "distinct")], "tensor<2x5xf64>"),
    _op("scan_add_exclusive", "dlvm.scan add %a dim 1 exclusive : tensor<2x4xf64>", [((2, 4), "normal")],
        "tensor<2x4xf64>"),
    _op("scan_add_reverse", "dlvm.scan add %a dim 0 reverse : tensor<5x2xf64>", [((5, 2), "normal")],
        "tensor<5x2xf64>"),
    _op("scan_add_exclusive_reverse", "dlvm.scan add %a dim 1 exclusive reverse : tensor<2x4xf64>",
        [((2, 4), "normal")], "tensor<2x4xf64>"),
    _op("scan_mul_exclusive", "dlvm.scan mul %a dim 0 exclusive : tensor<4x2xf64>", [((4, 2), "normal")],
        "tensor<4x2xf64>"),
    _op("scan_mul_reverse", "dlvm.scan mul %a dim 1 reverse : tensor<2x4xf64>", [((2, 4), "normal")],
        "tensor<2x4xf64>"),
    _op("scan_mul_exclusive_reverse", "dlvm.scan mul %a dim 0 exclusive reverse : tensor<4x3xf64>",
        [((4, 3), "normal")], "tensor<4x3xf64>"),
    # the first exclusive max is -inf: compared with 0 to stay finite for the differences
    Case(
        "scan_max_exclusive",
        "  %s = dlvm.scan max %a dim 1 exclusive : tensor<2x5xf64>\n"
        "  %z = dlvm.constant dense<-4.0> : tensor<f64>\n"
        "  %r = dlvm.max %s, %z : tensor<2x5xf64>, tensor<f64>\n  return %r : tensor<2x5xf64>",
        [((2, 5), "distinct")], result="tensor<2x5xf64>",
    ),
    _op("scan_min_reverse", "dlvm.scan min %a dim 1 reverse : tensor<2x5xf64>", [((2, 5), "distinct")],
        "tensor<2x5xf64>"),
    Case(
        "scan_min_exclusive_reverse",
        "  %s = dlvm.scan min %a dim 0 exclusive reverse : tensor<5x2xf64>\n"
        "  %z = dlvm.constant dense<4.0> : tensor<f64>\n"
        "  %r = dlvm.min %s, %z : tensor<5x2xf64>, tensor<f64>\n  return %r : tensor<5x2xf64>",
        [((5, 2), "distinct")], result="tensor<5x2xf64>",
    ),
    _op("scan_mul_exclusive_single", "dlvm.scan mul %a dim 0 exclusive : tensor<1x3xf64>", [((1, 3), "normal")],
        "tensor<1x3xf64>"),
    # Window reductions.
    # explicit padding pairs, window and base dilation (lax.reduce_window's general form)
    _op("reduce_window_add_dilated",
        "dlvm.reduce_window add %a window [2, 3] strides [1, 2] padding none low [1, 0] high [2, 1] "
        "window_dilation [2, 1] base_dilation [1, 2] : tensor<4x5xf64>",
        [((4, 5), "normal")], "tensor<5x4xf64>"),
    _op("reduce_window_mean_dilated",
        "dlvm.reduce_window mean %a window [3] strides [1] padding none low [2] high [1] base_dilation [2] "
        ": tensor<4xf64>",
        [((4,), "normal")], "tensor<8xf64>"),
    _op("reduce_window_max_dilated",
        "dlvm.reduce_window max %a window [2, 2] strides [2, 1] padding half window_dilation [2, 2] "
        ": tensor<5x6xf64>",
        [((5, 6), "distinct")], "tensor<3x6xf64>"),
    _op("reduce_window_mul_base_dilated",
        "dlvm.reduce_window mul %a window [2] strides [1] padding full base_dilation [3] : tensor<3xf64>",
        [((3,), "normal")], "tensor<8xf64>"),
    _op(
        "reduce_window_add",
        "dlvm.reduce_window add %a window [2, 2] strides [1, 1] padding none : tensor<4x5xf64>",
        [((4, 5), "normal")],
        "tensor<3x4xf64>",
    ),
    _op(
        "reduce_window_mean_half",
        "dlvm.reduce_window mean %a window [3, 3] strides [2, 2] padding half : tensor<5x6xf64>",
        [((5, 6), "normal")],
        "tensor<3x3xf64>",
    ),
    _op(
        "reduce_window_max",
        "dlvm.reduce_window max %a window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : tensor<1x2x4x4xf64>",
        [((1, 2, 4, 4), "distinct")],
        "tensor<1x2x2x2xf64>",
    ),
    # windows that tile the input: the gradient interleaves the positions' parts (no scatter)
    _op("reduce_window_add_tiled",
        "dlvm.reduce_window add %a window [2, 3] strides [2, 3] padding none : tensor<4x6xf64>",
        [((4, 6), "normal")], "tensor<2x2xf64>"),
    _op("reduce_window_mean_tiled",
        "dlvm.reduce_window mean %a window [1, 2, 1] strides [1, 2, 1] padding none : tensor<3x4x2xf64>",
        [((3, 4, 2), "normal")], "tensor<3x2x2xf64>"),
    _op("reduce_window_min_tiled",
        "dlvm.reduce_window min %a window [3, 1] strides [3, 1] padding none : tensor<6x5xf64>",
        [((6, 5), "distinct")], "tensor<2x5xf64>"),
    _op(
        "reduce_window_max_full",
        "dlvm.reduce_window max %a window [3] strides [2] padding full : tensor<6xf64>",
        [((6,), "distinct")],
        "tensor<4xf64>",
    ),
    _op(
        "reduce_window_min_half",
        "dlvm.reduce_window min %a window [2, 3] strides [1, 2] padding half : tensor<4x5xf64>",
        [((4, 5), "distinct")],
        "tensor<4x3xf64>",
    ),
    _op(
        "reduce_window_mul",
        "dlvm.reduce_window mul %a window [2] strides [1] padding half : tensor<5xf64>",
        [((5,), "normal")],
        "tensor<5xf64>",
    ),
    # Softmax.
    _op("softmax", "dlvm.softmax %a axis 1 : tensor<2x4xf64>", [((2, 4), "normal")], "tensor<2x4xf64>"),
    _op("log_softmax", "dlvm.log_softmax %a axis 0 : tensor<3x2xf64>", [((3, 2), "normal")], "tensor<3x2xf64>"),
    # Convolution.
    _op(
        "convolve",
        "dlvm.convolve %a, %b : tensor<2x3x5x5xf64>, tensor<4x3x3x3xf64>",
        [((2, 3, 5, 5), "normal"), ((4, 3, 3, 3), "normal")],
        "tensor<2x4x3x3xf64>",
    ),
    _op(
        "convolve_strided_padded",
        "dlvm.convolve %a, %b strides [2, 1] padding [1, 2, 0, 1] : tensor<1x2x6x5xf64>, tensor<3x2x3x2xf64>",
        [((1, 2, 6, 5), "normal"), ((3, 2, 3, 2), "normal")],
        "tensor<1x3x4x5xf64>",
    ),
    _op(
        "convolve_dilated",
        "dlvm.convolve %a, %b strides [2] padding [2, 1] lhs_dilation [2] rhs_dilation [2] : tensor<2x2x4xf64>, tensor<2x2x2xf64>",
        [((2, 2, 4), "normal"), ((2, 2, 2), "normal")],
        "tensor<2x2x4xf64>",
    ),
    _op(
        "convolve_groups",
        "dlvm.convolve %a, %b padding [1, 1] groups 2 : tensor<2x4x5xf64>, tensor<6x2x3xf64>",
        [((2, 4, 5), "normal"), ((6, 2, 3), "normal")],
        "tensor<2x6x5xf64>",
    ),
    _op(
        "convolve_big_padding",
        "dlvm.convolve %a, %b strides [3] padding [4, 3] : tensor<1x1x5xf64>, tensor<1x1x2xf64>",
        [((1, 1, 5), "normal"), ((1, 1, 2), "normal")],
        "tensor<1x1x4xf64>",
    ),
    # Strided without dilations: the input and kernel gradients by phases (one convolution per phase).
    _op(
        "convolve_phases_kernel_5x4_stride_3x2",  # taps per phase 2,2,1 x 2,2; an input size no stride divides
        "dlvm.convolve %a, %b strides [3, 2] padding [2, 1, 1, 2] : tensor<2x3x11x9xf64>, tensor<2x3x5x4xf64>",
        [((2, 3, 11, 9), "normal"), ((2, 3, 5, 4), "normal")],
        "tensor<2x2x4x5xf64>",
    ),
    _op(
        "convolve_phases_input_unreached",  # stride 4 > window 2 and high padding: some input rows unused
        "dlvm.convolve %a, %b strides [4] padding [0, 3] : tensor<1x2x10xf64>, tensor<3x2x2xf64>",
        [((1, 2, 10), "normal"), ((3, 2, 2), "normal")],
        "tensor<1x3x3xf64>",
    ),
    _op(
        "convolve_phases_2d_groups",
        "dlvm.convolve %a, %b strides [2, 3] padding [1, 0, 2, 1] groups 2 : tensor<2x4x7x8xf64>, tensor<6x2x3x4xf64>",
        [((2, 4, 7, 8), "normal"), ((6, 2, 3, 4), "normal")],
        "tensor<2x6x3x3xf64>",
    ),
    _op(
        "convolve_phases_window_below_stride",  # a 1x2 window with strides 2x3: phases without taps
        "dlvm.convolve %a, %b strides [2, 3] : tensor<1x2x5x7xf64>, tensor<3x2x1x2xf64>",
        [((1, 2, 5, 7), "normal"), ((3, 2, 1, 2), "normal")],
        "tensor<1x3x3x2xf64>",
    ),
    _op(
        "convolve_phases_negative_padding",
        "dlvm.convolve %a, %b strides [2] padding [-1, 3] : tensor<1x1x9xf64>, tensor<2x1x3xf64>",
        [((1, 1, 9), "normal"), ((2, 1, 3), "normal")],
        "tensor<1x2x5xf64>",
    ),
    # Negative padding crops the (dilated) input.
    _op(
        "convolve_negative_padding",
        "dlvm.convolve %a, %b padding [-1, 1, 0, -2] : tensor<2x3x9x8xf64>, tensor<4x3x3x2xf64>",
        [((2, 3, 9, 8), "normal"), ((4, 3, 3, 2), "normal")],
        "tensor<2x4x7x5xf64>",
    ),
    _op(
        "convolve_negative_strided",
        "dlvm.convolve %a, %b strides [3] padding [-4, -3] : tensor<1x1x12xf64>, tensor<1x1x2xf64>",
        [((1, 1, 12), "normal"), ((1, 1, 2), "normal")],
        "tensor<1x1x2xf64>",
    ),
    _op(
        "convolve_negative_dilated",
        "dlvm.convolve %a, %b strides [2] padding [-4, 1] lhs_dilation [2] rhs_dilation [2]"
        " : tensor<1x2x6xf64>, tensor<3x2x3xf64>",
        [((1, 2, 6), "normal"), ((3, 2, 3), "normal")],
        "tensor<1x3x2xf64>",
    ),
    _op(
        "convolve_negative_groups",
        "dlvm.convolve %a, %b strides [2, 1] padding [-1, -2, 2, -1] lhs_dilation [2, 1] rhs_dilation [1, 2]"
        " groups 2 : tensor<1x2x7x7xf64>, tensor<2x1x2x3xf64>",
        [((1, 2, 7, 7), "normal"), ((2, 1, 2, 3), "normal")],
        "tensor<1x2x5x4xf64>",
    ),
    # Casts.
    Case(
        "cast_f32",
        "  %c = dlvm.cast %a to f32 : tensor<3xf64>\n  %d = dlvm.exp %c : tensor<3xf32>\n"
        "  %r = dlvm.cast %d to f64 : tensor<3xf32>\n  return %r : tensor<3xf64>",
        [((3,), "normal")],
        result="tensor<3xf64>",
    ),
]




def _scalar(op: str, line: str, kinds: tuple[str, ...], shape: tuple[int, ...] = ()) -> Case:
    """One arith/math op on f64 scalars, or on tensors of ``shape``."""
    t = _type(shape) if shape else "f64"
    return Case(op, f"  %r = {line}\n  return %r : {t}", [(shape, k) for k in kinds], result=t, types=[t] * len(kinds))


SCALAR_CASES: list[Case] = [
    # arith on f64 scalars.
    *(
        _scalar(f"arith.{op}", f"arith.{op} %a, %b : f64", kinds)
        for op, kinds in [
            ("addf", ("normal", "normal")),
            ("subf", ("normal", "normal")),
            ("mulf", ("normal", "normal")),
            ("divf", ("normal", "positive")),
            ("maximumf", ("distinct", "distinct")),
            ("minimumf", ("distinct", "distinct")),
            ("maxnumf", ("distinct", "distinct")),
            ("minnumf", ("distinct", "distinct")),
            ("remf", ("positive", "positive")),
        ]
    ),
    _scalar("arith.negf", "arith.negf %a : f64", ("normal",)),
    _scalar("arith.negf_tensor", "arith.negf %a : tensor<3xf64>", ("normal",), (3,)),
    _scalar("arith.mulf_tensor", "arith.mulf %a, %b : tensor<3xf64>", ("normal", "normal"), (3,)),
    Case(
        "arith.select",
        "  %r = arith.select %a, %b, %c : f64\n  return %r : f64",
        [((), "true"), ((), "normal"), ((), "normal")],
        wrt=[1, 2],
        result="f64",
        types=["i1", "f64", "f64"],
    ),
    Case(
        "arith.extf_truncf",
        "  %t = arith.truncf %a : f64 to f32\n  %s = math.sin %t : f32\n  %r = arith.extf %s : f32 to f64\n  return %r : f64",
        [((), "normal")],
        result="f64",
        types=["f64"],
    ),
    # math on f64 scalars.
    *(
        _scalar(f"math.{op}", f"math.{op} %a : f64", (kind,))
        for op, kind in [
            ("exp", "normal"),
            ("exp2", "normal"),
            ("expm1", "normal"),
            ("log", "positive"),
            ("log2", "positive"),
            ("log10", "positive"),
            ("log1p", "positive"),
            ("sqrt", "positive"),
            ("rsqrt", "positive"),
            ("cbrt", "positive"),
            ("tanh", "normal"),
            ("sin", "normal"),
            ("cos", "normal"),
            ("tan", "unit"),
            ("asin", "unit"),
            ("acos", "unit"),
            ("atan", "normal"),
            ("sinh", "normal"),
            ("cosh", "normal"),
            ("asinh", "normal"),
            ("acosh", "above_one"),
            ("atanh", "unit"),
            ("erf", "normal"),
            ("erfc", "normal"),
            ("absf", "distinct"),
        ]
    ),
    _scalar("math.tanh_tensor", "math.tanh %a : tensor<2x2xf64>", ("normal",), (2, 2)),
    _scalar("math.powf", "math.powf %a, %b : f64", ("positive", "normal")),
    _scalar("math.atan2", "math.atan2 %a, %b : f64", ("normal", "normal")),
    Case("math.copysign", "  %r = math.copysign %a, %b : f64\n  return %r : f64", [((), "normal"), ((), "positive")],
         wrt=[0], result="f64", types=["f64", "f64"]),
    _scalar("math.fma", "math.fma %a, %b, %c : f64", ("normal", "normal", "normal")),
    Case("math.fpowi", "  %r = math.fpowi %a, %b : f64, i32\n  return %r : f64", [((), "normal"), ((), "i32=3")],
         wrt=[0], result="f64", types=["f64", "i32"]),
    # tensor ops.
    Case("tensor.extract", "  %c1 = arith.constant 1 : index\n  %r = tensor.extract %a[%b, %c1] : tensor<2x3xf64>\n  return %r : f64",
         [((2, 3), "normal"), ((), "index=1")], wrt=[0], result="f64", types=["tensor<2x3xf64>", "index"]),
    Case("tensor.insert", "  %r = tensor.insert %a into %b[%c] : tensor<3xf64>\n  return %r : tensor<3xf64>",
         [((), "normal"), ((3,), "normal"), ((), "index=2")], wrt=[0, 1], result="tensor<3xf64>", types=["f64", "tensor<3xf64>", "index"]),
    Case("tensor.extract_slice",
         "  %r = tensor.extract_slice %a[%b, 1] [2, 2] [1, 1] : tensor<4x3xf64> to tensor<2x2xf64>\n  return %r : tensor<2x2xf64>",
         [((4, 3), "normal"), ((), "index=1")], wrt=[0], result="tensor<2x2xf64>", types=["tensor<4x3xf64>", "index"]),
    Case("tensor.extract_slice_rank_reducing",
         "  %r = tensor.extract_slice %a[1, 0] [1, 3] [1, 1] : tensor<4x3xf64> to tensor<3xf64>\n  return %r : tensor<3xf64>",
         [((4, 3), "normal")], result="tensor<3xf64>", types=["tensor<4x3xf64>"]),
    Case("tensor.insert_slice",
         "  %r = tensor.insert_slice %a into %b[%c, 0] [1, 3] [1, 1] : tensor<3xf64> into tensor<4x3xf64>\n  return %r : tensor<4x3xf64>",
         [((3,), "normal"), ((4, 3), "normal"), ((), "index=2")], wrt=[0, 1], result="tensor<4x3xf64>",
         types=["tensor<3xf64>", "tensor<4x3xf64>", "index"]),
    Case("tensor.from_elements", "  %r = tensor.from_elements %a, %b, %c, %a : tensor<2x2xf64>\n  return %r : tensor<2x2xf64>",
         [((), "normal")] * 3, result="tensor<2x2xf64>", types=["f64"] * 3),
    Case("tensor.splat", "  %r = tensor.splat %a : tensor<2x3xf64>\n  return %r : tensor<2x3xf64>",
         [((), "normal")], result="tensor<2x3xf64>", types=["f64"]),
    Case("tensor.cast", "  %c = tensor.cast %a : tensor<3xf64> to tensor<?xf64>\n  %r = tensor.cast %c : tensor<?xf64> to tensor<3xf64>\n"
         "  return %r : tensor<3xf64>", [((3,), "normal")], result="tensor<3xf64>", types=["tensor<3xf64>"]),
    Case("tensor.collapse_expand",
         "  %c = tensor.collapse_shape %a [[0, 1]] : tensor<2x3xf64> into tensor<6xf64>\n"
         "  %s = dlvm.sin %c : tensor<6xf64>\n"
         "  %r = tensor.expand_shape %s [[0, 1]] output_shape [3, 2] : tensor<6xf64> into tensor<3x2xf64>\n"
         "  return %r : tensor<3x2xf64>", [((2, 3), "normal")], result="tensor<3x2xf64>", types=["tensor<2x3xf64>"]),
    Case("tensor.concat", "  %r = tensor.concat dim(0) %a, %b : (tensor<2x2xf64>, tensor<1x2xf64>) -> tensor<3x2xf64>\n"
         "  return %r : tensor<3x2xf64>", [((2, 2), "normal"), ((1, 2), "normal")], result="tensor<3x2xf64>",
         types=["tensor<2x2xf64>", "tensor<1x2xf64>"]),
]
CASES += SCALAR_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gradient_matches_finite_differences(case: Case) -> None:
    rng = np.random.default_rng(0)
    args = [_sample(shape, kind, rng) for shape, kind in case.args]
    wrt = case.wrt if case.wrt is not None else [i for i, (_, kind) in enumerate(case.args) if kind not in ("mask", "true")]
    report = check_gradients(_module(case), "f", *args, wrt=wrt)
    report.assert_close(TOLERANCE)


@pytest.mark.parametrize("case", [c for c in CASES if c.forward], ids=[c.name for c in CASES if c.forward])
def test_tangent_matches_finite_differences(case: Case) -> None:
    rng = np.random.default_rng(1)
    args = [_sample(shape, kind, rng) for shape, kind in case.args]
    wrt = case.wrt if case.wrt is not None else [i for i, (_, kind) in enumerate(case.args) if kind not in ("mask", "true")]
    report = check_tangents(_module(case), "f", *args, wrt=wrt)
    report.assert_close(TOLERANCE)


CONVOLVE_NEGATIVE_PADDING = """
func.func @f(%x: tensor<2x3x20x19xDT>, %k: tensor<4x3x3x2xDT>) -> tensor<DT> {
  %y = dlvm.convolve %x, %k strides [2, 1] padding [-2, 1, 0, -3] : tensor<2x3x20x19xDT>, tensor<4x3x3x2xDT>
  %t = dlvm.tanh %y : tensor<2x4x9x15xDT>
  %r = dlvm.reduce add %t dims [0, 1, 2, 3] : tensor<2x4x9x15xDT>
  return %r : tensor<DT>
}
func.func private @f_grad(tensor<2x3x20x19xDT>, tensor<4x3x3x2xDT>) -> (tensor<2x3x20x19xDT>, tensor<4x3x3x2xDT>)
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [0, 1]>}
"""


def test_convolve_negative_padding_gradient_compiled() -> None:
    """The gradient of a convolution with negative padding compiles (it was rejected) and
    matches central differences of the compiled f64 function; f32 agrees with f64."""
    import dlvm_mlir

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 20, 19))
    k = rng.standard_normal((4, 3, 3, 2)) * 0.3
    exe = dlvm_mlir.compile(CONVOLVE_NEGATIVE_PADDING.replace("DT", "f64"))
    dx, dk = exe["f_grad"](x, k)
    f = exe["f"]
    h = 1e-6
    for grad, arg, position in ((dx, x, 0), (dk, k, 1)):
        flat = rng.choice(arg.size, 40, replace=False)
        for j in flat:
            plus, minus = arg.copy(), arg.copy()
            plus.reshape(-1)[j] += h
            minus.reshape(-1)[j] -= h
            args_plus = (plus, k) if position == 0 else (x, plus)
            args_minus = (minus, k) if position == 0 else (x, minus)
            numeric = (float(f(*args_plus)) - float(f(*args_minus))) / (2 * h)
            assert abs(grad.reshape(-1)[j] - numeric) <= 1e-6 * max(1.0, abs(numeric)), (position, j)
    # the cropped rows/columns get no gradient: the first two input rows, the last three columns
    np.testing.assert_array_equal(dx[:, :, :2, :], 0.0)
    np.testing.assert_array_equal(dx[:, :, :, -3:], 0.0)
    assert np.count_nonzero(dx[:, :, 2:, :-3]) == dx[:, :, 2:, :-3].size  # every other element is read
    exe32 = dlvm_mlir.compile(CONVOLVE_NEGATIVE_PADDING.replace("DT", "f32"))
    dx32, dk32 = exe32["f_grad"](x.astype(np.float32), k.astype(np.float32))
    np.testing.assert_allclose(dx32, dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dk32, dk, rtol=1e-4, atol=1e-4)
