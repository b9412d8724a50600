"""Every dlvm op as a staged function: ``dl.tanh(x)``, ``dl.softmax(x, axis=1)``, ...

Operands may be :class:`Tensor`\\ s, Python numbers or numpy arrays; the
non-tensors become ``dlvm.constant`` ops of the other operand's element type
(a number alone: bool -> i1, int -> i32, float -> f32). Tensors of different
element types are never mixed implicitly: convert with :func:`cast`.

The elementwise ops are generated from tables (:data:`UNARY`, :data:`BINARY`,
:data:`COMPARISONS`); axes may be negative, as in numpy.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from mlir import ir

from dlvm_mlir.dialects import dlvm

from .dtypes import DType, dtype_of, f32, i1, i32
from .errors import DTypeError, ShapeError, TracingError
from .tensor import Tensor
from .tracing import build_op, require_trace

ArrayLike = Union[Tensor, np.ndarray, float, int, bool, Sequence[Any]]
Axes = Union[int, Sequence[int], None]

__all__ = [
    "ArrayLike",
    "BINARY",
    "COMPARISONS",
    "UNARY",
    "bitcast",
    "argmax",
    "argmin",
    "argsort",
    "broadcast_to",
    "clip",
    "cast",
    "concatenate",
    "constant",
    "convolve",
    "cumprod",
    "cummax",
    "cummin",
    "cumsum",
    "dot",
    "dot_general",
    "dynamic_slice",
    "dynamic_update_slice",
    "expand_dims",
    "full",
    "gather",
    "getitem",
    "iota",
    "lift",
    "matmul",
    "ones",
    "ones_like",
    "random",
    "reduce",
    "reduce_all",
    "reduce_any",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "reduce_window",
    "reshape",
    "reverse",
    "scan",
    "scatter",
    "slice",
    "softmax",
    "sort",
    "log_softmax",
    "logsumexp",
    "squeeze",
    "pad",
    "take",
    "take_along_axis",
    "tensordot",
    "top_k",
    "transpose",
    "where",
    "zeros",
    "zeros_like",
]


def _emit(what: str, build: Callable[[ir.Location], ir.Value]) -> Tensor:
    trace = require_trace(what)
    return Tensor(build_op(what, build), trace.scope)


# -- constants -----------------------------------------------------------------

_KIND_ORDER = {"b": 0, "i": 1, "u": 1, "f": 2}


def _default_dtype(array: np.ndarray, from_python: bool) -> DType:
    if array.dtype.kind == "b":
        return i1
    if from_python:
        return f32 if array.dtype.kind == "f" else i32
    return dtype_of(array.dtype)


def _splat_attr(dtype: DType, value: Any) -> ir.Attribute:
    if dtype.is_float:
        return ir.FloatAttr.get(dtype.mlir(), float(value))
    value = int(value)
    if dtype.unsigned:
        if not 0 <= value < 1 << dtype.bits:
            raise DTypeError(f"constant {value} does not fit element type {dtype}")
        if value >= 1 << 63:  # the C API takes an int64: the same 64 bits
            value -= 1 << 64
    return ir.IntegerAttr.get(dtype.mlir(), value)


def constant(value: Any, dtype: Any = None) -> Tensor:
    """A ``dlvm.constant`` holding ``value`` (a number, nested lists or a numpy array)."""
    if isinstance(value, Tensor):
        return value if dtype is None else cast(value, dtype)
    from_python = not isinstance(value, (np.ndarray, np.generic))
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise DTypeError(f"cannot stage {type(value).__name__} value {value!r} as a tensor constant") from None
    if array.dtype.kind not in _KIND_ORDER:
        raise DTypeError(f"cannot stage {type(value).__name__} value {value!r} as a tensor constant")
    try:
        target = _default_dtype(array, from_python) if dtype is None else dtype_of(dtype)
    except TypeError as err:
        raise DTypeError(str(err)) from None
    target_kind = "b" if target.is_bool else "i" if target.is_int else "f"
    if _KIND_ORDER[array.dtype.kind] > _KIND_ORDER[target_kind]:
        raise DTypeError(f"constant {value!r} does not fit element type {target} without losing its fraction")
    flat = array.reshape(-1)
    shape = list(array.shape)
    if flat.size and builtins.all(flat == flat[0]):
        def build(loc: ir.Location) -> ir.Value:
            tensor_type = ir.RankedTensorType.get(shape, target.mlir())
            return dlvm.constant(ir.DenseElementsAttr.get_splat(tensor_type, _splat_attr(target, flat[0])), loc=loc)
    elif target.is_bool:
        def build(loc: ir.Location) -> ir.Value:
            return dlvm.constant(ir.DenseElementsAttr.get(np.ascontiguousarray(array.astype(np.bool_))), loc=loc)
    elif target.numpy is None:
        return cast(constant(array, f32), target)
    else:
        def build(loc: ir.Location) -> ir.Value:
            tensor_type = ir.RankedTensorType.get(shape, target.mlir())
            data = np.ascontiguousarray(array.astype(target.numpy))
            return dlvm.constant(ir.DenseElementsAttr.get(data, type=tensor_type), loc=loc)
    return _emit("dl.constant", build)


def lift(value: ArrayLike, dtype: DType | None = None) -> Tensor:
    """``value`` as a Tensor: tensors as they are, anything else as a constant (of ``dtype``)."""
    if isinstance(value, Tensor):
        return value
    return constant(value, dtype)


def full(shape: Sequence[int], value: float | int | bool, dtype: Any = f32) -> Tensor:
    """A tensor of ``shape`` filled with ``value``."""
    return constant(np.full(tuple(shape), value), dtype)


def zeros(shape: Sequence[int], dtype: Any = f32) -> Tensor:
    return full(shape, 0, dtype)


def ones(shape: Sequence[int], dtype: Any = f32) -> Tensor:
    return full(shape, 1, dtype)


def zeros_like(x: Tensor) -> Tensor:
    return full(x.shape, 0, x.dtype)


def ones_like(x: Tensor) -> Tensor:
    return full(x.shape, 1, x.dtype)


def random(
    shape: Sequence[int], low: float = 0.0, high: float = 1.0, seed: int = 0, dtype: Any = f32
) -> Tensor:
    """``dlvm.random``: uniform in [low, high), a pure function of ``seed`` and the element index."""
    element = dtype_of(dtype)
    dims = [int(d) for d in shape]
    return _emit(
        "dl.random",
        lambda loc: dlvm.random(dims, float(low), float(high), ir.TypeAttr.get(element.mlir()), seed=int(seed), loc=loc),
    )


# -- elementwise ops from tables ---------------------------------------------

UNARY: dict[str, tuple[Callable[..., ir.Value], str]] = {
    "neg": (dlvm.neg, "-x"),
    "exp": (dlvm.exp, "e^x"),
    "log": (dlvm.log, "ln(x)"),
    "tanh": (dlvm.tanh, "tanh(x)"),
    "sigmoid": (dlvm.sigmoid, "1 / (1 + e^-x)"),
    "relu": (dlvm.relu, "max(x, 0)"),
    "sqrt": (dlvm.sqrt, "sqrt(x)"),
    "rsqrt": (dlvm.rsqrt, "1 / sqrt(x)"),
    "square": (dlvm.square, "x * x"),
    "sign": (dlvm.sign, "sign(x)"),
    "abs": (dlvm.abs, "|x|"),
    "sin": (dlvm.sin, "sin(x)"),
    "cos": (dlvm.cos, "cos(x)"),
    "tan": (dlvm.tan, "tan(x)"),
    "asin": (dlvm.asin, "asin(x)"),
    "acos": (dlvm.acos, "acos(x)"),
    "atan": (dlvm.atan, "atan(x)"),
    "sinh": (dlvm.sinh, "sinh(x)"),
    "cosh": (dlvm.cosh, "cosh(x)"),
    "floor": (dlvm.floor, "floor(x)"),
    "ceil": (dlvm.ceil, "ceil(x)"),
    "round": (dlvm.round, "round(x), halfway cases away from zero"),
    "rint": (dlvm.rint, "rint(x), halfway cases to even"),
    "erf": (dlvm.erf, "erf(x)"),
    "erfc": (dlvm.erfc, "1 - erf(x)"),
    "lgamma": (dlvm.lgamma, "ln|Gamma(x)|"),
    "digamma": (dlvm.digamma, "d/dx ln Gamma(x)"),
    "log1p": (dlvm.log1p, "ln(1 + x)"),
    "expm1": (dlvm.expm1, "e^x - 1"),
    "logical_not": (dlvm.not_, "not x (bitwise on integers)"),
    "arcsinh": (dlvm.asinh, "asinh(x)"),
    "arccosh": (dlvm.acosh, "acosh(x)"),
    "arctanh": (dlvm.atanh, "atanh(x)"),
    "exp2": (dlvm.exp2, "2^x"),
    "log2": (dlvm.log2, "log2(x)"),
    "log10": (dlvm.log10, "log10(x)"),
    "cbrt": (dlvm.cbrt, "x^(1/3)"),
    "isfinite": (dlvm.is_finite, "x is neither infinite nor NaN"),
    "popcount": (dlvm.popcount, "the number of set bits of x"),
}
"""Python name -> (dlvm op builder, formula)."""

BINARY: dict[str, tuple[Callable[..., ir.Value], str]] = {
    "add": (dlvm.add, "x + y"),
    "sub": (dlvm.sub, "x - y"),
    "mul": (dlvm.mul, "x * y"),
    "div": (dlvm.div, "x / y"),
    "pow": (dlvm.pow, "x ^ y"),
    "minimum": (dlvm.min, "min(x, y)"),
    "maximum": (dlvm.max, "max(x, y)"),
    "mod": (dlvm.mod, "x mod y (the sign of y)"),
    "floor_div": (dlvm.floor_div, "floor(x / y)"),
    "trunc_div": (dlvm.trunc_div, "trunc(x / y)"),
    "logical_and": (dlvm.and_, "x & y"),
    "logical_or": (dlvm.or_, "x | y"),
    "logical_xor": (dlvm.xor, "x ^ y"),
    "remainder": (dlvm.rem, "x rem y (the sign of x, as C's fmod)"),
    "arctan2": (dlvm.atan2, "atan2(x, y)"),
    "left_shift": (dlvm.shift_left, "x << y"),
    "right_shift": (dlvm.shift_right_arithmetic, "x >> y (the sign bit fills)"),
    "right_shift_logical": (dlvm.shift_right_logical, "x >> y (zeros fill)"),
}
"""Python name -> (dlvm op builder, formula); the operands broadcast (DLVM rules)."""

COMPARISONS: dict[str, str] = {
    "less": "lt",
    "less_equal": "le",
    "greater": "gt",
    "greater_equal": "ge",
    "equal": "eq",
    "not_equal": "ne",
}
"""Python name -> ``dlvm.cmp`` predicate; the result is an ``i1`` tensor."""


def _common(what: str, values: Sequence[ArrayLike], promote: bool = True) -> list[Tensor]:
    """Lift operands to tensors of one element type (that of the first tensor), their
    ranks promoted as numpy does (leading 1s; DLVM broadcasts equal ranks and rank 0)."""
    anchor = next((v for v in values if isinstance(v, Tensor)), None)
    if anchor is None:
        first = constant(values[0])
        return [first, *(constant(v, first.dtype) for v in values[1:])]
    lifted = [lift(v, anchor.dtype) for v in values]
    dtypes = {t.dtype for t in lifted}
    if len(dtypes) > 1:
        names = " and ".join(str(t.dtype) for t in lifted)
        raise DTypeError(f"{what}: operands have element types {names}; convert one with dl.cast")
    return _promote_ranks(lifted) if promote else lifted


def _promote_ranks(tensors: Sequence[Tensor]) -> list[Tensor]:
    """numpy's rank promotion: leading 1s up to the largest rank (rank 0 broadcasts as it is)."""
    rank = builtins.max(t.ndim for t in tensors)
    return [reshape(t, [1] * (rank - t.ndim) + list(t.shape)) if 0 < t.ndim < rank else t for t in tensors]


def _make_unary(name: str, builder: Callable[..., ir.Value], formula: str) -> Callable[[ArrayLike], Tensor]:
    what = f"dl.{name}"

    def op(x: ArrayLike) -> Tensor:
        value = lift(x).checked()
        return _emit(what, lambda loc: builder(value, loc=loc))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{formula}`` (``dlvm.{builder.__name__.rstrip('_')}``)."
    return op


def _make_binary(name: str, builder: Callable[..., ir.Value], formula: str) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    what = f"dl.{name}"

    def op(x: ArrayLike, y: ArrayLike) -> Tensor:
        lhs, rhs = (t.checked() for t in _common(what, [x, y]))
        return _emit(what, lambda loc: builder(lhs, rhs, loc=loc))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{formula}`` with broadcasting (``dlvm.{builder.__name__.rstrip('_')}``)."
    return op


def _make_comparison(name: str, predicate: str) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    what = f"dl.{name}"
    pred = getattr(dlvm.CmpPredicate, predicate)

    def op(x: ArrayLike, y: ArrayLike) -> Tensor:
        lhs, rhs = (t.checked() for t in _common(what, [x, y]))
        return _emit(what, lambda loc: dlvm.cmp(pred, lhs, rhs, loc=loc))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``x {predicate} y`` with broadcasting, an ``i1`` tensor (``dlvm.cmp {predicate}``)."
    return op


def _install() -> None:
    namespace = globals()
    for name, (builder, formula) in UNARY.items():
        namespace[name] = _make_unary(name, builder, formula)
    for name, (builder, formula) in BINARY.items():
        namespace[name] = _make_binary(name, builder, formula)
    for name, predicate in COMPARISONS.items():
        namespace[name] = _make_comparison(name, predicate)
    __all__.extend([*UNARY, *BINARY, *COMPARISONS])


_install()


def clip(x: ArrayLike, low: ArrayLike, high: ArrayLike) -> Tensor:
    """``dlvm.clamp``: ``min(max(x, low), high)``, the bounds broadcast (numpy's ``clip``)."""
    lo, t, hi = _common("dl.clip", [low, x, high])
    a, b, c = lo.checked(), t.checked(), hi.checked()
    return _emit("dl.clip", lambda loc: dlvm.clamp(a, b, c, loc=loc))


def where(mask: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Tensor:
    """``dlvm.select``: ``on_true`` where ``mask`` (an ``i1`` tensor) holds, else ``on_false``."""
    condition = lift(mask, i1)
    if not condition.dtype.is_bool:
        raise DTypeError(f"dl.where: the mask has element type {condition.dtype}, expected i1 (a comparison)")
    a, b = _common("dl.where", [on_true, on_false])
    condition, a, b = _promote_ranks([condition, a, b])
    values = condition.checked(), a.checked(), b.checked()
    return _emit("dl.where", lambda loc: dlvm.select(*values, loc=loc))


# -- linear algebra and shapes ---------------------------------------------------


def dot(x: ArrayLike, y: ArrayLike) -> Tensor:
    """``dlvm.dot``: matrix product (batched for rank > 2, equal batch dimensions),
    matrix-vector, or inner product; ``dl.matmul`` (``@``) broadcasts as numpy does."""
    lhs, rhs = (t.checked() for t in _common("dl.dot", [x, y], promote=False))
    return _emit("dl.dot", lambda loc: dlvm.dot(lhs, rhs, loc=loc))


def dot_general(x: ArrayLike, y: ArrayLike, dimension_numbers: Any) -> Tensor:
    """``lax.dot_general`` (``dlvm.dot_general``): ``dimension_numbers`` is
    ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``; the result has the
    batch dimensions, then the other dimensions of ``x``, then those of ``y``."""
    a, b = _common("dl.dot_general", [x, y], promote=False)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        numbers = [[_axis(int(d), t.ndim, "dl.dot_general") for d in dims]
                   for dims, t in ((lb, a), (rb, b), (lc, a), (rc, b))]
    except (TypeError, ValueError) as e:
        raise ShapeError(f"dl.dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
                         f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from e
    lhs, rhs = a.checked(), b.checked()
    return _emit("dl.dot_general", lambda loc: dlvm.dot_general(lhs, rhs, *numbers, loc=loc))


def matmul(x: ArrayLike, y: ArrayLike) -> Tensor:
    """numpy's ``matmul`` (``@``): stacks of matrices with broadcast batch dimensions, a
    vector operand is a matrix of one row (lhs) or column (rhs) dropped from the result.
    ``dlvm.dot`` where it has that form, else a ``dlvm.dot_general`` that contracts the
    whole stack against one matrix, or a batched dot over the broadcast stack."""
    a, b = _common("dl.matmul", [x, y], promote=False)
    if not a.ndim or not b.ndim:
        raise ShapeError(f"dl.matmul: operands must have rank 1 or more (use *), got {a.spec} and {b.spec}")
    k_a, k_b = a.shape[-1], b.shape[-2] if b.ndim > 1 else b.shape[0]
    if k_a != k_b:
        raise ShapeError(f"dl.matmul: the contracted dimensions differ ({k_a} and {k_b}) for {a.spec} @ {b.spec}")
    try:
        batch = list(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    except ValueError:
        raise ShapeError(f"dl.matmul: the batch dimensions of {a.spec} and {b.spec} do not broadcast") from None
    shape = batch + list(a.shape[-2:-1]) + list(b.shape[-1:] if b.ndim > 1 else [])
    if a.ndim <= 2 and b.ndim <= 2 or (a.ndim == b.ndim and a.shape[:-2] == b.shape[:-2]):
        return dot(a, b)
    a_single, b_single = math.prod(a.shape[:-2]) == 1, math.prod(b.shape[:-2]) == 1
    if b_single or a.ndim == 1:  # a stack times one matrix / vector, or a vector times a stack
        b2 = reshape(b, b.shape[-2:]) if b.ndim > 2 and b_single else b
        out = dot_general(a, b2, (([a.ndim - 1], [builtins.max(b2.ndim - 2, 0)]), ([], [])))
    elif a_single:  # one matrix times a stack: [m, batch..., n], then m moved in
        a2 = reshape(a, a.shape[-2:])
        out = dot_general(a2, b, (([1], [b.ndim - 2]), ([], [])))
        out = transpose(out, [*range(1, b.ndim - 1), 0, b.ndim - 1])
    else:
        out = dot(_stacked(a, batch), _stacked(b, batch))
    return reshape(out, shape) if list(out.shape) != shape else out


def _stacked(t: Tensor, batch: list[int]) -> Tensor:
    """A stack of matrices with its batch dimensions broadcast to ``batch``."""
    if list(t.shape[:-2]) == batch:
        return t
    t = reshape(t, [1] * (len(batch) + 2 - t.ndim) + list(t.shape))
    return broadcast_to(t, batch + list(t.shape[-2:]))


def tensordot(x: ArrayLike, y: ArrayLike, axes: int | Sequence[Any] = 2) -> Tensor:
    """numpy's ``tensordot``: the last ``axes`` dimensions of ``x`` with the first of ``y``,
    or the pairs ``(x_axes, y_axes)`` (``dlvm.dot_general`` without batch dimensions)."""
    a, b = _common("dl.tensordot", [x, y], promote=False)
    if isinstance(axes, (int, np.integer)):
        pairs = (list(range(a.ndim - int(axes), a.ndim)), list(range(int(axes))))
    else:
        pairs = tuple([axes_] if isinstance(axes_, (int, np.integer)) else list(axes_) for axes_ in axes)
    return dot_general(a, b, (pairs, ([], [])))


def _axis(axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"{what}: axis {axis} is out of range for a tensor of rank {rank}")
    return axis % rank


def _axes(axes: Axes, rank: int, what: str) -> list[int]:
    if axes is None:
        return list(range(rank))
    if isinstance(axes, int):
        axes = [axes]
    return sorted({_axis(int(a), rank, what) for a in axes})


def transpose(x: ArrayLike, perm: Sequence[int] | None = None) -> Tensor:
    """``dlvm.transpose``: result dimension i is dimension ``perm[i]`` (default: reversed)."""
    t = lift(x)
    value = t.checked()
    order = None if perm is None else [_axis(int(p), t.ndim, "dl.transpose") for p in perm]
    return _emit("dl.transpose", lambda loc: dlvm.transpose(value, perm=order, loc=loc))


def reverse(x: ArrayLike, axes: Axes) -> Tensor:
    """``dlvm.reverse``: reverses the order of elements along ``axes``."""
    t = lift(x)
    value, dims = t.checked(), _axes(axes, t.ndim, "dl.reverse")
    return _emit("dl.reverse", lambda loc: dlvm.reverse(value, dims, loc=loc))


def concatenate(xs: Sequence[ArrayLike], axis: int = 0) -> Tensor:
    """``dlvm.concatenate``: joins tensors of equal rank along ``axis``."""
    if not xs:
        raise ShapeError("dl.concatenate needs at least one tensor")
    tensors = _common("dl.concatenate", list(xs), promote=False)
    values = [t.checked() for t in tensors]
    dim = _axis(axis, tensors[0].ndim, "dl.concatenate")
    return _emit("dl.concatenate", lambda loc: dlvm.concatenate(values, dim, loc=loc))


def slice(  # noqa: A001 - DLVM's name
    x: ArrayLike, offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int] | None = None
) -> Tensor:
    """``dlvm.slice``: per dimension ``sizes[d]`` elements from ``offsets[d]``, every ``strides[d]``."""
    value = lift(x).checked()
    offs, szs = [int(o) for o in offsets], [int(s) for s in sizes]
    strd = None if strides is None else [int(s) for s in strides]
    return _emit("dl.slice", lambda loc: dlvm.slice(value, offs, szs, strides=strd, loc=loc))


def reshape(x: ArrayLike, shape: Sequence[int]) -> Tensor:
    """``dlvm.reshape``: the same elements in row-major order under ``shape`` (one -1 is inferred)."""
    t = lift(x)
    dims = [int(d) for d in shape]
    if dims.count(-1) > 1:
        raise ShapeError(f"dl.reshape: at most one dimension may be -1, got {dims}")
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0 or t.size % known:
            raise ShapeError(f"dl.reshape: cannot reshape {list(t.shape)} to {dims}")
        dims[dims.index(-1)] = t.size // known
    if int(np.prod(dims)) != t.size:
        raise ShapeError(f"dl.reshape: cannot reshape {list(t.shape)} ({t.size} elements) to {dims}")
    if tuple(dims) == t.shape:
        return t
    value = t.checked()
    return _emit("dl.reshape", lambda loc: dlvm.reshape(value, dims, loc=loc))


def expand_dims(x: ArrayLike, axis: int) -> Tensor:
    """``dlvm.pad_shape``: inserts a unit dimension at ``axis``."""
    t = lift(x)
    dim = _axis(axis, t.ndim + 1, "dl.expand_dims")
    value = t.checked()
    return _emit("dl.expand_dims", lambda loc: dlvm.pad_shape(value, dim, loc=loc))


def squeeze(x: ArrayLike, axis: int | None = None) -> Tensor:
    """``dlvm.squeeze_shape``: removes the unit dimension ``axis`` (None: every unit dimension)."""
    t = lift(x)
    if axis is None:
        return reshape(t, [d for d in t.shape if d != 1])
    dim = _axis(axis, t.ndim, "dl.squeeze")
    value = t.checked()
    return _emit("dl.squeeze", lambda loc: dlvm.squeeze_shape(value, dim, loc=loc))


def broadcast_to(x: ArrayLike, shape: Sequence[int]) -> Tensor:
    """``dlvm.broadcast_to``: DLVM broadcasting to ``shape``."""
    value = lift(x).checked()
    dims = [int(d) for d in shape]
    return _emit("dl.broadcast_to", lambda loc: dlvm.broadcast_to(value, dims, loc=loc))


_SUPPORTED_INDICES = (
    "tensors are indexed with Python ints, rank-0 integer tensors (a dl.fori_loop counter), slices "
    "with positive steps (bounds are Python ints), '...' and None"
)


def _is_staged_index(item: Any) -> bool:
    return isinstance(item, Tensor) and item.dtype.is_int and not item.dtype.is_bool and not item.shape


def _check_index_item(item: Any) -> None:
    """Rejects what ``x[...]`` cannot index with, naming what it can."""
    if item is None or item is Ellipsis or _is_staged_index(item):
        return
    if isinstance(item, Tensor):
        raise TracingError(
            f"indexing with a staged value of dtype {item.dtype} and shape {tuple(item.shape)} is not "
            f"supported: {_SUPPORTED_INDICES}"
        )
    if isinstance(item, builtins.slice):
        for part in (item.start, item.stop, item.step):
            if isinstance(part, Tensor):
                _check_index_item(part)  # the staged-value message
            if part is not None:
                if not isinstance(part, (int, np.integer)) or isinstance(part, bool):
                    raise TracingError(f"slice bound {part!r} is not a Python int: {_SUPPORTED_INDICES}")
        return
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
        shown = f"a {type(item).__name__}" if isinstance(item, (np.ndarray, list, tuple)) else repr(item)
        raise TracingError(f"cannot index with {shown}: {_SUPPORTED_INDICES}")


def _start(value: int | Tensor, what: str) -> Tensor:
    """A window start as a rank-0 i32 tensor (Python ints are staged as constants)."""
    if isinstance(value, Tensor):
        if not _is_staged_index(value):
            raise DTypeError(f"{what}: a start index must be a Python int or a rank-0 integer tensor, got {value.spec}")
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise DTypeError(f"{what}: a start index must be a Python int or a rank-0 integer tensor, got {value!r}")
    return constant(int(value), i32)


def dynamic_slice(x: ArrayLike, starts: Sequence[int | Tensor], sizes: Sequence[int]) -> Tensor:
    """``dlvm.dynamic_slice``: the window of ``sizes`` at run-time ``starts``, clamped
    into the tensor as XLA does (``lax.dynamic_slice``)."""
    t = lift(x)
    if len(starts) != t.ndim or len(sizes) != t.ndim:
        raise ShapeError(f"dl.dynamic_slice: {t.ndim} starts and sizes expected, got {len(starts)} and {len(sizes)}")
    indices = [_start(v, "dl.dynamic_slice").checked() for v in starts]
    value, window = t.checked(), [int(n) for n in sizes]
    return _emit("dl.dynamic_slice", lambda loc: dlvm.dynamic_slice(value, indices, window, loc=loc))


def dynamic_update_slice(x: ArrayLike, update: ArrayLike, starts: Sequence[int | Tensor]) -> Tensor:
    """``dlvm.dynamic_update_slice``: ``x`` with the window at ``starts`` replaced by ``update``."""
    t = lift(x)
    u = lift(update, t.dtype)
    if len(starts) != t.ndim:
        raise ShapeError(f"dl.dynamic_update_slice: {t.ndim} starts expected, got {len(starts)}")
    indices = [_start(v, "dl.dynamic_update_slice").checked() for v in starts]
    a, b = t.checked(), u.checked()
    return _emit("dl.dynamic_update_slice", lambda loc: dlvm.dynamic_update_slice(a, b, indices, loc=loc))


def iota(shape: Sequence[int], dim: int = 0, dtype: Any = i32) -> Tensor:
    """``dlvm.iota``: counts ``0, 1, ...`` along ``dim`` (``lax.broadcasted_iota``)."""
    dims = [int(n) for n in shape]
    element = _element(dtype, "dl.iota")
    axis = _axis(dim, len(dims), "dl.iota")
    return _emit("dl.iota", lambda loc: dlvm.iota(ir.RankedTensorType.get(dims, element.mlir()), axis, loc=loc))


def pad(x: ArrayLike, pad_width: Any, constant_values: ArrayLike = 0) -> Tensor:
    """numpy's ``pad`` in ``constant`` mode, with ``lax.pad``'s extensions (``dlvm.pad``).

    ``pad_width``: an int, a ``(before, after)`` pair for every axis, or one
    pair or ``(low, high, interior)`` triple per axis; negative widths crop,
    ``interior`` puts that many values between neighbouring elements. The
    value is differentiable, as the tensor is.
    """
    t = lift(x)
    value = cast(lift(constant_values), t.dtype) if not isinstance(constant_values, Tensor) else constant_values
    if value.ndim != 0:
        raise ShapeError(f"dl.pad: the padding value must be a scalar, got shape {value.shape}")
    if value.dtype != t.dtype:
        raise DTypeError(f"dl.pad: padding value of element type {value.dtype} for a tensor of {t.dtype}")
    whole = (int, np.integer)
    try:
        if isinstance(pad_width, whole):
            rows = [(pad_width, pad_width)] * t.ndim
        elif all(isinstance(w, whole) for w in pad_width):
            rows = [tuple(pad_width)] * t.ndim  # one pair (or triple) for every axis
        else:
            rows = [tuple(w) for w in pad_width]
    except TypeError:
        rows = []
    if (len(rows) != t.ndim or any(len(w) not in (2, 3) for w in rows)
            or not all(isinstance(v, whole) for w in rows for v in w)):
        raise ShapeError(
            f"dl.pad: pad_width {pad_width!r} is not an int, a (before, after) pair or one pair or "
            f"(low, high, interior) triple for each of the {t.ndim} axes"
        )
    low, high = [int(w[0]) for w in rows], [int(w[1]) for w in rows]
    interior = [int(w[2]) if len(w) == 3 else 0 for w in rows]
    operand, fill = t.checked(), value.checked()
    return _emit("dl.pad", lambda loc: dlvm.pad(operand, fill, low, high, interior, loc=loc))


def take(x: ArrayLike, indices: ArrayLike, axis: int | None = None) -> Tensor:
    """numpy's ``take``: ``x`` at integer ``indices`` (any shape) along ``axis`` (``None``: of
    the flattened ``x``); the result has ``indices``' shape in place of that axis
    (``dlvm.gather``: negative indices count from the end, others out of range are clamped
    as XLA does, not an error as numpy's default mode)."""
    t = lift(x)
    if axis is None:
        t, dim = reshape(t, [-1]), 0
    else:
        dim = _axis(axis, t.ndim, "dl.take")
    return t[(builtins.slice(None),) * dim + (lift(indices),)]


def take_along_axis(x: ArrayLike, indices: ArrayLike, axis: int) -> Tensor:
    """numpy's ``take_along_axis``: ``x`` at ``indices`` along ``axis`` (``indices`` has
    ``x``'s rank; e.g. the log-probabilities of integer labels, ``dlvm.gather``)."""
    t, i = lift(x), cast(lift(indices), i32)
    if i.ndim != t.ndim:
        raise ShapeError(f"dl.take_along_axis: indices of rank {i.ndim} for a tensor of rank {t.ndim}")
    dim = _axis(axis, t.ndim, "dl.take_along_axis")
    columns = [_wrap_negative(i, t.shape[d]) if d == dim else iota(list(i.shape), d) for d in range(t.ndim)]
    starts = concatenate([expand_dims(c, t.ndim) for c in columns], axis=t.ndim)
    every = list(range(t.ndim))
    return gather(t, starts, [], every, every, t.ndim, [1] * t.ndim)


def _arg(name: str, build: Callable[..., ir.Value]) -> Callable[..., Tensor]:
    def op(x: ArrayLike, axis: int = -1, dtype: Any = i32) -> Tensor:
        t = lift(x)
        dim = _axis(axis, t.ndim, f"dl.{name}")
        element = _element(dtype, f"dl.{name}")
        if not element.is_int or element.is_bool:
            raise DTypeError(f"dl.{name}: the index type must be an integer type, got {element}")
        shape = [n for d, n in enumerate(t.shape) if d != dim]
        value = t.checked()
        return _emit(f"dl.{name}", lambda loc: build(ir.RankedTensorType.get(shape, element.mlir()), value, dim, loc=loc))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``dlvm.{name}``: the position along ``axis`` of the {'largest' if name == 'argmax' else 'smallest'} "
                  "element (the first one at a tie; a NaN counts as one), as ``dtype``.")
    return op


argmax = _arg("argmax", dlvm.argmax)
argmin = _arg("argmin", dlvm.argmin)


def _emit_results(what: str, build: Callable[[ir.Location], ir.OpView]) -> tuple[Tensor, ...]:
    """Every result of the op ``build`` creates, as tensors."""
    trace = require_trace(what)
    return tuple(Tensor(v, trace.scope) for v in build_op(what, build).results)


def sort(x: ArrayLike | Sequence[ArrayLike], axis: int = -1, descending: bool = False) -> Any:
    """``dlvm.sort``: ``x`` sorted along ``axis`` (stable; ascending puts NaN last,
    descending first); given a tuple or list of tensors of one shape, all of them in
    the order that sorts the first (as ``lax.sort``), returned as a tuple."""
    several = isinstance(x, (tuple, list))
    tensors = [lift(t) for t in (x if several else [x])]
    if not tensors:
        raise ShapeError("dl.sort: nothing to sort")
    dim = _axis(axis, tensors[0].ndim, "dl.sort")
    values = [t.checked() for t in tensors]
    results = _emit_results("dl.sort", lambda loc: dlvm.SortOp(values, dim, descending=bool(descending) or None,
                                                                loc=loc))
    return results if several else results[0]


def argsort(x: ArrayLike, axis: int = -1, descending: bool = False) -> Tensor:
    """numpy's stable ``argsort`` (i32 positions; ``dlvm.sort`` of the positions with ``x``)."""
    t = lift(x)
    dim = _axis(axis, t.ndim, "dl.argsort")
    return sort((t, iota(list(t.shape), dim)), dim, descending)[1]


def top_k(x: ArrayLike, k: int) -> tuple[Tensor, Tensor]:
    """``lax.top_k`` (``dlvm.top_k``): the ``k`` largest elements along the last axis in
    descending order and their i32 positions (equal ones in order of position)."""
    t = lift(x)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ShapeError(f"dl.top_k: k must be a Python int, got {k!r}")
    value = t.checked()
    values, indices = _emit_results("dl.top_k", lambda loc: dlvm.TopKOp(value, int(k), loc=loc))
    return values, indices


def gather(
    x: ArrayLike, indices: ArrayLike, offset_dims: Sequence[int], collapsed_slice_dims: Sequence[int],
    start_index_map: Sequence[int], index_vector_dim: int, slice_sizes: Sequence[int],
) -> Tensor:
    """``dlvm.gather`` with XLA's dimension numbers (``lax.gather``; starts are clamped)."""
    t, i = lift(x), lift(indices)
    a, b = t.checked(), i.checked()
    return _emit("dl.gather", lambda loc: dlvm.gather(
        a, b, list(offset_dims), list(collapsed_slice_dims), list(start_index_map), int(index_vector_dim),
        list(slice_sizes), loc=loc))


def scatter(
    kind: str, x: ArrayLike, indices: ArrayLike, updates: ArrayLike, update_window_dims: Sequence[int],
    inserted_window_dims: Sequence[int], scatter_dims_to_operand_dims: Sequence[int], index_vector_dim: int,
) -> Tensor:
    """``dlvm.scatter`` (``kind``: add, replace, max, min) with XLA's dimension numbers."""
    if kind not in ("add", "replace", "max", "min"):
        raise ShapeError(f"dl.scatter: unknown kind {kind!r} (expected add, replace, max or min)")
    t = lift(x)
    i, u = lift(indices), lift(updates, t.dtype)
    a, b, c = t.checked(), i.checked(), u.checked()
    return _emit("dl.scatter", lambda loc: dlvm.scatter(
        getattr(dlvm.ScatterKind, kind), a, b, c, list(update_window_dims), list(inserted_window_dims),
        list(scatter_dims_to_operand_dims), int(index_vector_dim), loc=loc))


def _is_index_array(item: Any) -> bool:
    """An integer array indexes like numpy's advanced indexing (a ragged or non-integer
    list is left for ``_check_index_item`` to reject)."""
    if isinstance(item, list):
        item = np.asarray(item) if item and _rectangular(item) else None
    if not isinstance(item, (Tensor, np.ndarray)) or _is_staged_index(item):
        return False
    dtype = item.dtype if isinstance(item, Tensor) else lift(item).dtype
    return dtype.is_int and not dtype.is_bool


def _rectangular(items: list) -> bool:
    try:
        return np.asarray(items).dtype != object
    except ValueError:  # numpy >= 1.24 rejects ragged nesting
        return False


def _advanced(x: Tensor, index: Any, what: str) -> tuple[Tensor, list[int]] | None:
    """numpy's advanced indexing by integer arrays at consecutive positions, the other
    positions whole (``emb[tokens]``, ``logp[rows, labels]``, ``x[:, idx]``): the start
    vectors (an i32 tensor whose last dimension runs over the indexed dimensions) and
    those dimensions; None when ``index`` has no integer array."""
    items = list(index) if isinstance(index, tuple) else [index]
    arrays = [at for at, item in enumerate(items) if _is_index_array(item)]
    if not arrays:
        return None
    # ints next to the arrays index with them, broadcast (numpy: x[0, tokens], logp[i, labels])
    def plain_int(at: int) -> bool:
        return 0 <= at < len(items) and isinstance(items[at], (int, np.integer)) and not isinstance(items[at], bool)

    while plain_int(arrays[0] - 1):
        arrays.insert(0, arrays[0] - 1)
    while plain_int(arrays[-1] + 1):
        arrays.append(arrays[-1] + 1)
    for at in arrays:
        if plain_int(at):
            items[at] = np.asarray(items[at], np.int64)
    if arrays != list(range(arrays[0], arrays[-1] + 1)):
        raise ShapeError(f"{what}: integer arrays must index consecutive dimensions")
    if Ellipsis in [i for i in items if not isinstance(i, (Tensor, np.ndarray, list))]:
        at = [k for k, i in enumerate(items) if i is Ellipsis][0]
        items[at : at + 1] = [builtins.slice(None)] * (x.ndim - len(items) + 1)
        return _advanced(x, tuple(items), what)
    for at, item in enumerate(items):
        if at not in arrays and item != builtins.slice(None):
            raise ShapeError(f"{what}: with integer arrays, the other positions must be ':' (whole dimensions)")
    if len(items) > x.ndim:
        raise ShapeError(f"too many indices ({len(items)}) for a tensor of rank {x.ndim}")
    dims = [arrays[0] + k for k in range(len(arrays))]
    tensors = _promote_ranks([cast(lift(items[at]), i32) for at in arrays])
    rank = builtins.max(t.ndim for t in tensors)
    shape = [builtins.max(n) for n in zip(*(t.shape for t in tensors if t.ndim == rank))] if rank else []
    columns = []
    for t, d in zip(tensors, dims):
        t = broadcast_to(t, shape) if list(t.shape) != shape else t  # rank 0 (an int) broadcasts too
        columns.append(expand_dims(_wrap_negative(t, x.shape[d]), len(shape)))
    return concatenate(columns, axis=len(shape)), dims


@dataclass(frozen=True)
class _Layout:
    """numpy's general advanced indexing reduced to the consecutive case ``_advanced`` handles:
    ``x`` sliced by the index's slices (``sliced``: there were some besides ``:``), then
    transposed by ``perm`` (identity unless the advanced positions are separated: numpy then
    puts the broadcast index dimensions first), and the index for that tensor."""

    tensor: Tensor
    index: tuple
    perm: list[int]
    sliced: bool


def _advanced_layout(x: Tensor, index: Any) -> _Layout | None:
    """The :class:`_Layout` of an index with integer arrays whose other positions are not all
    ``:`` next to them (``x[i, :, j]``, ``x[0, :, i]``, ``x[i, 1:3]``); None otherwise (no
    arrays, the consecutive case, or an index ``_advanced`` reports the error for)."""
    items = list(index) if isinstance(index, tuple) else [index]
    if not builtins.any(_is_index_array(item) for item in items):
        return None
    if builtins.any(item is None for item in items if not isinstance(item, (Tensor, np.ndarray, list))):
        return None
    ellipsis = [at for at, item in enumerate(items) if not isinstance(item, (Tensor, np.ndarray, list)) and item is Ellipsis]
    if len(ellipsis) > 1 or len(items) - len(ellipsis) > x.ndim:
        return None
    if ellipsis:
        items[ellipsis[0] : ellipsis[0] + 1] = [builtins.slice(None)] * (x.ndim - len(items) + 1)
    items += [builtins.slice(None)] * (x.ndim - len(items))

    def advanced(item: Any) -> bool:
        return _is_index_array(item) or (isinstance(item, (int, np.integer)) and not isinstance(item, bool))

    adv = [at for at, item in enumerate(items) if advanced(item)]
    basic = [at for at in range(x.ndim) if at not in adv]
    if not builtins.all(isinstance(items[at], builtins.slice) for at in basic):
        return None
    sliced = builtins.any(items[at] != builtins.slice(None) for at in basic)
    consecutive = adv == list(range(adv[0], adv[-1] + 1))
    if consecutive and not sliced:
        return None
    y = getitem(x, tuple(items[at] if at in basic else builtins.slice(None) for at in range(x.ndim))) if sliced else x
    if consecutive:
        return _Layout(y, tuple(items[at] if at in adv else builtins.slice(None) for at in range(x.ndim)),
                       list(range(x.ndim)), sliced)
    perm = adv + basic
    return _Layout(transpose(y, perm), tuple(items[at] for at in adv) + (builtins.slice(None),) * len(basic),
                   perm, sliced)


def _advanced_numbers(x: Tensor, starts: Tensor, dims: list[int]) -> tuple[list[int], list[int]]:
    """(offset / update window dims, window sizes) of a gather / scatter at ``dims``."""
    batch = starts.ndim - 1
    window = [d if d < dims[0] else d + batch - len(dims) for d in range(x.ndim) if d not in dims]
    return window, [1 if d in dims else x.shape[d] for d in range(x.ndim)]


def _wrap_negative(index: Tensor, extent: int) -> Tensor:
    """numpy's negative positions, counted from the end (then XLA clamps)."""
    return where(less(index, 0), add(index, extent), index)


def _box(x: Tensor, index: Any, what: str) -> tuple[list[int | Tensor], list[int], list[int]]:
    """The window an index selects, for ints, staged ints, step-1 slices and ``...``:
    (starts, sizes, the shape of ``x[index]``)."""
    items = list(index) if isinstance(index, tuple) else [index]
    for item in items:
        _check_index_item(item)
        if item is None or (isinstance(item, builtins.slice) and item.step not in (None, 1)):
            raise ShapeError(f"{what}: only ints, rank-0 integer tensors, '...' and slices with step 1 select a window")
    if builtins.sum(1 for item in items if item is Ellipsis) > 1:
        raise ShapeError("an index can only have a single ellipsis ('...')")
    consumed = builtins.sum(1 for item in items if item is not Ellipsis)
    if consumed > x.ndim:
        raise ShapeError(f"too many indices ({consumed}) for a tensor of rank {x.ndim}")
    ellipsis = [at for at, item in enumerate(items) if item is Ellipsis]
    if ellipsis:
        items[ellipsis[0] : ellipsis[0] + 1] = [builtins.slice(None)] * (x.ndim - consumed)
    else:
        items += [builtins.slice(None)] * (x.ndim - consumed)
    starts: list[int | Tensor] = []
    sizes, shape = [], []
    for dim, item in enumerate(items):
        extent = x.shape[dim]
        if isinstance(item, builtins.slice):
            start, stop, _ = item.indices(extent)
            starts.append(start)
            sizes.append(max(0, stop - start))
            shape.append(sizes[-1])
        elif isinstance(item, Tensor):
            starts.append(_wrap_negative(item, extent))
            sizes.append(1)
        else:
            position = int(item)
            if not -extent <= position < extent:
                raise ShapeError(f"index {position} is out of bounds for dimension {dim} (size {extent})")
            starts.append(position % extent)
            sizes.append(1)
    return starts, sizes, shape


def _boolean_masks(x: Tensor, index: Any, what: str) -> Any:
    """``index`` with each boolean mask known at trace time (a numpy array or a list of bools)
    replaced by the integer arrays of its True positions (numpy's ``nonzero``), as numpy does;
    a staged boolean tensor is rejected: the result's shape would depend on its values."""
    items = list(index) if isinstance(index, tuple) else [index]
    out, dim, changed = [], 0, False
    for item in items:
        if isinstance(item, list) and item and _rectangular(item) and np.asarray(item).dtype == np.bool_:
            item = np.asarray(item)
        if isinstance(item, Tensor) and item.dtype.is_bool:
            raise ShapeError(
                f"{what}: a staged boolean mask gives a result whose shape depends on its values; "
                "use dl.where(mask, x, y), or a mask known when the function is traced (a numpy array)"
            )
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            if builtins.any(earlier is Ellipsis for earlier in out):
                raise ShapeError(f"{what}: a boolean mask after '...' is not supported; spell out the ':'s")
            covered = tuple(x.shape[dim : dim + item.ndim])
            if item.ndim == 0 or covered != item.shape:
                raise ShapeError(
                    f"{what}: a boolean mask of shape {item.shape} for dimensions of sizes {covered}"
                )
            out.extend(positions.astype(np.int32) for positions in np.nonzero(item))
            dim += item.ndim
            changed = True
            continue
        out.append(item)
        if item is not None and item is not Ellipsis:
            dim += 1
    return tuple(out) if changed else index


def getitem(x: Tensor, index: Any) -> Tensor:
    """``x[index]`` with ints, rank-0 integer tensors (``dlvm.dynamic_slice``; negative
    positions count from the end, then clamped as XLA does), slices (positive steps),
    ``...`` and ``None``: a slice, then a reshape; or with integer arrays at consecutive
    positions, the others ``:`` (numpy's advanced indexing: ``dlvm.gather``; arrays separated
    by slices put their broadcast dimensions first, as numpy does), boolean masks known at
    trace time being the arrays of their True positions."""
    index = _boolean_masks(x, index, "x[...]")
    layout = _advanced_layout(x, index)
    if layout is not None:  # separated arrays, or slices beside them: numpy's layout of the result
        x, index = layout.tensor, layout.index
    advanced = _advanced(x, index, "x[...]")
    if advanced is not None:
        starts, dims = advanced
        offsets, sizes = _advanced_numbers(x, starts, dims)
        return gather(x, starts, offsets, dims, dims, starts.ndim - 1, sizes)
    items = list(index) if isinstance(index, tuple) else [index]
    for item in items:
        _check_index_item(item)
    staged = [at for at, item in enumerate(items) if _is_staged_index(item)]
    if staged:
        # a window of size 1 at the staged positions (dlvm.dynamic_slice), then the rest
        # of the index statically, with 0 where the staged positions were
        boxed = tuple(item if at in staged or item is Ellipsis else builtins.slice(None)
                      for at, item in enumerate(items) if item is not None)
        starts, sizes, _ = _box(x, boxed, "x[...]")
        window = dynamic_slice(x, starts, sizes)
        return getitem(window, tuple(0 if at in staged else item for at, item in enumerate(items)))
    if builtins.sum(1 for item in items if item is Ellipsis) > 1:
        raise ShapeError("an index can only have a single ellipsis ('...')")
    consumed = builtins.sum(1 for item in items if item is not None and item is not Ellipsis)
    if consumed > x.ndim:
        raise ShapeError(f"too many indices ({consumed}) for a tensor of rank {x.ndim}")
    ellipsis = [at for at, item in enumerate(items) if item is Ellipsis]  # no `in`: Tensor.__eq__ stages
    if ellipsis:
        at = ellipsis[0]
        items[at : at + 1] = [builtins.slice(None)] * (x.ndim - consumed)
    else:
        items += [builtins.slice(None)] * (x.ndim - consumed)
    offsets, sizes, strides, result_shape = [], [], [], []
    dim = 0
    for item in items:
        if item is None:
            result_shape.append(1)
            continue
        extent = x.shape[dim]
        if isinstance(item, builtins.slice):
            start, stop, step = item.indices(extent)
            if step <= 0:
                raise ShapeError("negative slice steps are not supported; use dl.reverse")
            count = len(range(start, stop, step))
            if count == 0:
                raise ShapeError(f"the index {item} selects no elements of dimension {dim} (size {extent})")
            offsets.append(start), sizes.append(count), strides.append(step)
            result_shape.append(count)
        else:
            position = int(item)
            if not -extent <= position < extent:
                raise ShapeError(f"index {position} is out of bounds for dimension {dim} (size {extent})")
            offsets.append(position % extent), sizes.append(1), strides.append(1)
        dim += 1
    y = x
    if sizes != list(x.shape):
        y = slice(x, offsets, sizes, strides if builtins.any(s != 1 for s in strides) else None)
    return reshape(y, result_shape)


# -- reductions ----------------------------------------------------------------

_KINDS = {
    "add": "add", "sum": "add", "mul": "mul", "prod": "mul", "max": "max", "min": "min",
    "and": "and_", "all": "and_", "or": "or_", "any": "or_", "mean": "mean",
}


def _kind(kind: Any, what: str) -> Any:
    if isinstance(kind, dlvm.ReductionKind):
        return kind
    if isinstance(kind, str) and kind in _KINDS:
        return getattr(dlvm.ReductionKind, _KINDS[kind])
    raise ShapeError(f"{what}: unknown combinator {kind!r} (expected one of {', '.join(_KINDS)})")


def reduce(kind: Any, x: ArrayLike, axes: Axes = None, init: ArrayLike | None = None, keepdims: bool = False) -> Tensor:
    """``dlvm.reduce``: combines along ``axes`` (None: all) with add/mul/max/min/and/or/mean.

    ``init`` (a number or rank-0 tensor) replaces the combinator's identity.
    """
    t = lift(x)
    combinator = _kind(kind, "dl.reduce")
    dims = _axes(axes, t.ndim, "dl.reduce")
    if not dims:
        return t
    value = t.checked()
    init_value = None if init is None else lift(init, t.dtype).checked()
    y = _emit("dl.reduce", lambda loc: dlvm.reduce(combinator, value, dims, init=init_value, loc=loc))
    if keepdims:
        y = reshape(y, [1 if d in dims else n for d, n in enumerate(t.shape)])
    return y


def _reduction(kind: str, doc: str) -> Callable[..., Tensor]:
    def op(x: ArrayLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
        return reduce(kind, x, axis, keepdims=keepdims)

    op.__name__ = op.__qualname__ = f"reduce_{kind}"
    op.__doc__ = f"The {doc} along ``axis`` (None: all dimensions); ``keepdims`` keeps them as size 1."
    return op


reduce_sum = _reduction("sum", "sum")
reduce_mean = _reduction("mean", "mean")
reduce_max = _reduction("max", "maximum")
reduce_min = _reduction("min", "minimum")
reduce_prod = _reduction("prod", "product")
reduce_all = _reduction("all", "logical and")
reduce_any = _reduction("any", "logical or")


def scan(kind: Any, x: ArrayLike, axis: int, exclusive: bool = False, reverse: bool = False) -> Tensor:
    """``dlvm.scan``: prefix reduction along ``axis`` (``exclusive``: without the element itself,
    from the combinator's identity; ``reverse``: from the end, as ``lax.cumsum(reverse=True)``)."""
    t = lift(x)
    combinator, dim = _kind(kind, "dl.scan"), _axis(axis, t.ndim, "dl.scan")
    value = t.checked()
    flags = {"exclusive": True if exclusive else None, "reverse": True if reverse else None}
    return _emit("dl.scan", lambda loc: dlvm.scan(combinator, value, dim, **flags, loc=loc))


def cumsum(x: ArrayLike, axis: int, exclusive: bool = False, reverse: bool = False) -> Tensor:
    return scan("add", x, axis, exclusive, reverse)


def cumprod(x: ArrayLike, axis: int, exclusive: bool = False, reverse: bool = False) -> Tensor:
    return scan("mul", x, axis, exclusive, reverse)


def cummax(x: ArrayLike, axis: int, exclusive: bool = False, reverse: bool = False) -> Tensor:
    return scan("max", x, axis, exclusive, reverse)


def cummin(x: ArrayLike, axis: int, exclusive: bool = False, reverse: bool = False) -> Tensor:
    return scan("min", x, axis, exclusive, reverse)


_PADDINGS = {"none": "none", "valid": "none", "half": "half", "same": "half", "full": "full"}


def reduce_window(
    kind: Any,
    x: ArrayLike,
    window: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "none",
    window_dilation: Sequence[int] | None = None,
    base_dilation: Sequence[int] | None = None,
) -> Tensor:
    """``dlvm.reduce_window`` (pooling): ``padding`` is none/valid, half/same, full, or a
    ``(low, high)`` pair per dimension (as ``lax.reduce_window``); dilations default to 1."""
    t = lift(x)
    combinator = _kind(kind, "dl.reduce_window")
    explicit = None
    if isinstance(padding, str):
        if padding not in _PADDINGS:
            raise ShapeError(f"dl.reduce_window: unknown padding {padding!r} (expected one of {', '.join(_PADDINGS)})")
        pad = getattr(dlvm.Padding, _PADDINGS[padding])
    else:
        pairs = [tuple(p) for p in padding]
        if len(pairs) != t.ndim or any(len(p) != 2 for p in pairs):
            raise ShapeError(f"dl.reduce_window: padding {padding!r} is not one (low, high) pair per dimension")
        pad, explicit = dlvm.Padding.none, ([int(lo) for lo, _ in pairs], [int(hi) for _, hi in pairs])
    win = [int(w) for w in window]
    steps = [int(s) for s in (strides if strides is not None else [1] * len(win))]
    options = {
        "low": explicit[0] if explicit else None,
        "high": explicit[1] if explicit else None,
        "window_dilation": None if window_dilation is None else [int(d) for d in window_dilation],
        "base_dilation": None if base_dilation is None else [int(d) for d in base_dilation],
    }
    value = t.checked()
    return _emit("dl.reduce_window",
                 lambda loc: dlvm.reduce_window(combinator, value, win, steps, pad, **options, loc=loc))


def _along_axes(x: ArrayLike, axis: Axes, what: str, build: Callable[[ir.Value, int], ir.Value]) -> Tensor:
    """An op along one axis applied along several (``None``: all): they are moved last and
    merged into one (a transpose and reshapes, which fold away when they are already last)."""
    t = lift(x)
    if isinstance(axis, int):
        dim, value = _axis(axis, t.ndim, what), t.checked()
        return _emit(what, lambda loc: build(value, dim, loc))
    dims = _axes(axis, t.ndim, what)
    if not dims:
        raise ShapeError(f"{what}: no axes given")
    kept = [d for d in range(t.ndim) if d not in dims]
    order = kept + dims
    moved = t if order == list(range(t.ndim)) else transpose(t, order)
    merged = reshape(moved, [t.shape[d] for d in kept] + [-1])
    value = merged.checked()
    out = reshape(_emit(what, lambda loc: build(value, len(kept), loc)), list(moved.shape))
    return out if moved is t else transpose(out, [order.index(d) for d in range(t.ndim)])


def softmax(x: ArrayLike, axis: Axes = -1) -> Tensor:
    """``dlvm.softmax`` along ``axis`` (an int, several or ``None``: all; numerically stable)."""
    return _along_axes(x, axis, "dl.softmax", lambda v, d, loc: dlvm.softmax(v, d, loc=loc))


def log_softmax(x: ArrayLike, axis: Axes = -1) -> Tensor:
    """``dlvm.log_softmax`` along ``axis`` (an int, several or ``None``: all; numerically stable)."""
    return _along_axes(x, axis, "dl.log_softmax", lambda v, d, loc: dlvm.log_softmax(v, d, loc=loc))


def logsumexp(x: ArrayLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis`` (``None``: all), as ``scipy.special.logsumexp``:
    the maximum is taken out first; a slice that is all ``-inf`` gives ``-inf``."""
    t = lift(x)
    if not t.dtype.is_float:
        raise DTypeError(f"dl.logsumexp: element type {t.dtype} is not a float type")
    dims = _axes(axis, t.ndim, "dl.logsumexp")
    top = reduce_max(t, dims, keepdims=True)
    finite = where(isfinite(top), top, zeros_like(top))  # noqa: F821 - isfinite is generated above
    total = log(reduce_sum(exp(t - finite), dims, keepdims=True)) + finite
    return total if keepdims else reshape(total, [t.shape[d] for d in range(t.ndim) if d not in dims])


# -- convolution and casts -------------------------------------------------------


def _int_list(values: int | Sequence[int] | None, count: int) -> list[int] | None:
    if values is None:
        return None
    if isinstance(values, int):
        return [values] * count
    return [int(v) for v in values]


def convolve(
    x: ArrayLike,
    kernel: ArrayLike,
    strides: int | Sequence[int] | None = None,
    padding: int | Sequence[int] | Sequence[tuple[int, int]] | None = None,
    lhs_dilation: int | Sequence[int] | None = None,
    rhs_dilation: int | Sequence[int] | None = None,
    groups: int = 1,
) -> Tensor:
    """``dlvm.convolve``: XLA-style convolution of an NC... input with an OI... kernel.

    ``padding`` is one int for every side, low/high pairs per spatial
    dimension, or the flat list ``[lo0, hi0, lo1, hi1, ...]``.
    """
    inp, ker = _common("dl.convolve", [x, kernel])
    spatial = builtins.max(inp.ndim - 2, 0)
    pad: list[int] | None
    if padding is None:
        pad = None
    elif isinstance(padding, int):
        pad = [padding] * (2 * spatial)
    else:
        pad = [int(v) for item in padding for v in (item if isinstance(item, (tuple, list)) else (item,))]
    a, b = inp.checked(), ker.checked()
    return _emit(
        "dl.convolve",
        lambda loc: dlvm.convolve(
            a,
            b,
            strides=_int_list(strides, spatial),
            padding=pad,
            lhs_dilation=_int_list(lhs_dilation, spatial),
            rhs_dilation=_int_list(rhs_dilation, spatial),
            groups=None if groups == 1 else int(groups),
            loc=loc,
        ),
    )


def _element(dtype: Any, what: str) -> DType:
    try:
        return dtype_of(dtype)
    except TypeError as err:
        raise DTypeError(f"{what}: {err}") from None


def cast(x: ArrayLike, dtype: Any) -> Tensor:
    """``dlvm.cast``: converts element values to ``dtype`` (no-op when already of it)."""
    t, target = lift(x), _element(dtype, "dl.cast")
    if t.dtype == target:
        return t
    value = t.checked()
    return _emit("dl.cast", lambda loc: dlvm.cast(value, ir.TypeAttr.get(target.mlir()), loc=loc))


def bitcast(x: ArrayLike, dtype: Any) -> Tensor:
    """``dlvm.bitcast``: reinterprets the bits as ``dtype`` (same width)."""
    t, target = lift(x), _element(dtype, "dl.bitcast")
    value = t.checked()
    return _emit("dl.bitcast", lambda loc: dlvm.bitcast(value, ir.TypeAttr.get(target.mlir()), loc=loc))
