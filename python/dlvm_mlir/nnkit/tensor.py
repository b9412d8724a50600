"""``Tensor``: a staged value (an SSA value of the function being traced) with operators.

Inside a staged function every tensor is a :class:`Tensor`: arithmetic on it
emits dlvm ops (``+ - * / // % **``, ``@`` for ``dlvm.dot``, unary ``-``,
comparisons giving ``i1`` tensors, ``& | ~`` on booleans), indexing with ints
and slices emits ``dlvm.slice`` and ``dlvm.reshape``. Python numbers and numpy
arrays mixed in become constants of the tensor's element type.

``Tensor[f32, (None, 784)]`` is the annotation for a staged function's
parameter (see :class:`~dlvm_mlir.nnkit.specs.TensorAnnotation`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mlir import ir

from .dtypes import DType, from_mlir
from .errors import ShapeError, TracingError
from .specs import Spec, TensorAnnotation
from .tracing import Scope, current_trace

__all__ = ["Scalar", "Tensor"]


class Tensor:
    """A staged tensor value: ``shape`` and ``dtype`` are static; the data exists at run time."""

    __slots__ = ("scope", "value")
    __array_ufunc__ = None  # numpy defers to our reflected operators: ndarray + Tensor -> Tensor

    def __init__(self, value: ir.Value, scope: Scope) -> None:
        self.value = value
        self.scope = scope

    def __class_getitem__(cls, params: Any) -> TensorAnnotation:
        return TensorAnnotation.parse(params)

    # -- static type --------------------------------------------------------

    @property
    def type(self) -> ir.RankedTensorType:
        return ir.RankedTensorType(self.value.type)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.shape)

    @property
    def dtype(self) -> DType:
        return from_mlir(self.type.element_type)

    @property
    def spec(self) -> Spec:
        return Spec(self.shape, self.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count

    def checked(self) -> ir.Value:
        """The SSA value, after checking it may be used where code is emitted now."""
        trace = current_trace()
        if trace is None or trace is not self.scope.trace:
            where = "outside any staged function" if trace is None else f"in staged function '{trace.name}'"
            raise TracingError(
                f"a tensor of staged function '{self.scope.trace.name}' is used {where}; "
                "pass it as an argument instead of capturing it"
            )
        if not trace.scope.within(self.scope):
            raise TracingError(
                "a tensor computed inside a dl.cond branch or loop body is used outside it; "
                "return it from the branch or body instead"
            )
        return self.value

    def __repr__(self) -> str:
        return f"Tensor({self.spec}, staged in '{self.scope.trace.name}')"

    # -- Python protocols that cannot be staged ------------------------------

    def __bool__(self) -> bool:
        raise TracingError(
            "the truth value of a staged tensor is not known while tracing; "
            "use dl.cond(pred, true_fn, false_fn, ...) or dl.where(mask, a, b)"
        )

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TracingError("a staged tensor has no data while tracing; use dl.* ops instead of numpy")

    def __index__(self) -> int:
        raise TracingError("a staged tensor cannot be used as a Python int")

    __int__ = __float__ = __index__

    def __hash__(self) -> int:
        return id(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a rank-0 tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        """Unrolls over the first dimension (``x[0], x[1], ...``)."""
        for index in range(len(self)):
            yield self[index]

    # -- operators -----------------------------------------------------------

    def __add__(self, other: Any) -> Tensor:
        return ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return ops.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return ops.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return ops.div(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return ops.floor_div(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return ops.floor_div(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return ops.mod(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return ops.mod(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return ops.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return ops.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return ops.abs(self)

    def __invert__(self) -> Tensor:
        return ops.logical_not(self)

    def __and__(self, other: Any) -> Tensor:
        return ops.logical_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return ops.logical_and(other, self)

    def __or__(self, other: Any) -> Tensor:
        return ops.logical_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return ops.logical_or(other, self)

    def __xor__(self, other: Any) -> Tensor:
        return ops.logical_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return ops.logical_xor(other, self)

    def __lshift__(self, other: Any) -> Tensor:
        return ops.left_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        return ops.left_shift(other, self)

    def __rshift__(self, other: Any) -> Tensor:
        return ops.right_shift(self, other)

    def __rrshift__(self, other: Any) -> Tensor:
        return ops.right_shift(other, self)

    def argmax(self, axis: int = -1) -> Tensor:
        """The position of the largest element along ``axis`` (``dl.argmax``)."""
        return ops.argmax(self, axis)

    def argmin(self, axis: int = -1) -> Tensor:
        """The position of the smallest element along ``axis`` (``dl.argmin``)."""
        return ops.argmin(self, axis)

    @property
    def at(self) -> _At:
        """JAX's functional updates: ``x.at[i].set(v)``, ``.add(v)``, ``.max(v)``, ``.min(v)``
        at a window (ints, rank-0 integer tensors, step-1 slices, ``...``: a dynamic update
        slice) or at integer arrays (advanced indexing: a scatter; repeated positions add
        up, and with ``set`` the last one stays)."""
        return _At(self)

    def sort(self, axis: int = -1) -> Tensor:
        """Sorted along ``axis``, ascending (``dl.sort``; returns the result, as JAX's ``.sort``)."""
        return ops.sort(self, axis)

    def argsort(self, axis: int = -1) -> Tensor:
        """The stable sorting positions along ``axis`` (``dl.argsort``)."""
        return ops.argsort(self, axis)

    def take(self, indices: Any, axis: int | None = None) -> Tensor:
        """The elements at integer ``indices`` along ``axis`` (``None``: of the flattened tensor),
        numpy's ``ndarray.take`` (``dl.take``)."""
        return ops.take(self, indices, axis)

    def clip(self, low: Any, high: Any) -> Tensor:
        """``min(max(self, low), high)`` (numpy's ``ndarray.clip``)."""
        return ops.clip(self, low, high)

    def __lt__(self, other: Any) -> Tensor:
        return ops.less(self, other)

    def __le__(self, other: Any) -> Tensor:
        return ops.less_equal(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return ops.greater(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return ops.greater_equal(self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return ops.equal(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return ops.not_equal(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return ops.getitem(self, index)

    # -- methods -------------------------------------------------------------

    @property
    def T(self) -> Tensor:  # noqa: N802 - numpy's name
        return ops.transpose(self)

    def transpose(self, *perm: int) -> Tensor:
        return ops.transpose(self, perm or None)

    def reshape(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return ops.reshape(self, shape)

    def astype(self, dtype: Any) -> Tensor:
        return ops.cast(self, dtype)

    def dot(self, other: Any) -> Tensor:
        return ops.dot(self, other)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return ops.reduce_sum(self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return ops.reduce_mean(self, axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return ops.reduce_max(self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return ops.reduce_min(self, axis, keepdims)

    def prod(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return ops.reduce_prod(self, axis, keepdims)


class _ScalarAnnotation:
    """``Scalar[f32]`` is ``Tensor[f32, ()]``."""

    def __getitem__(self, dtype: Any) -> TensorAnnotation:
        return TensorAnnotation.parse((dtype, ()))


Scalar = _ScalarAnnotation()

from . import ops  # noqa: E402  (operators call into ops, which builds on Tensor)


class _At:
    """``x.at``: indexing it gives the updates of that window."""

    def __init__(self, tensor: Tensor) -> None:
        self._tensor = tensor

    def __getitem__(self, index: Any) -> _AtWindow:
        return _AtWindow(self._tensor, index)


class _AtWindow:
    """The updates of one window of a tensor (each returns a new tensor)."""

    def __init__(self, tensor: Tensor, index: Any) -> None:
        self._tensor, self._index = tensor, ops._boolean_masks(tensor, index, "x.at[...]")

    def _update(self, values: Any, kind: str, what: str) -> Tensor:
        x = self._tensor
        layout = ops._advanced_layout(x, self._index)
        if layout is not None:  # separated arrays: update the transposed tensor, transpose back
            if layout.sliced:
                raise ShapeError(f"{what}: with integer arrays, the other positions must be ':' (whole dimensions)")
            updated = _AtWindow(layout.tensor, layout.index)._update(values, kind, what)
            return ops.transpose(updated, [layout.perm.index(d) for d in range(x.ndim)])
        advanced = ops._advanced(x, self._index, what)
        if advanced is not None:  # integer arrays: dlvm.scatter
            starts, dims = advanced
            window, _ = ops._advanced_numbers(x, starts, dims)
            shape = list(ops.getitem(x, self._index).shape)
            v = self._fitted(values, shape, what)
            return ops.scatter(kind, x, starts, v, window, dims, dims, starts.ndim - 1)
        starts, sizes, shape = ops._box(x, self._index, what)
        v = self._fitted(values, shape, what)
        if kind != "replace":
            combine = {"add": ops.add, "max": ops.maximum, "min": ops.minimum}[kind]
            v = combine(ops.reshape(ops.dynamic_slice(x, starts, sizes), shape), v)
        return ops.dynamic_update_slice(x, ops.reshape(v, sizes), starts)

    def _fitted(self, values: Any, shape: list[int], what: str) -> Tensor:
        """``values`` broadcast to the window's shape (numpy's rank promotion, then DLVM's rules)."""
        v = ops.lift(values, self._tensor.dtype)
        if v.ndim > len(shape):
            raise ShapeError(f"{what}: values of shape {tuple(v.shape)} for a window of shape {tuple(shape)}")
        if v.ndim < len(shape):
            v = ops.reshape(v, [1] * (len(shape) - v.ndim) + list(v.shape))
        return v if list(v.shape) == shape else ops.broadcast_to(v, shape)

    def set(self, values: Any) -> Tensor:
        return self._update(values, "replace", "x.at[...].set")

    def add(self, values: Any) -> Tensor:
        return self._update(values, "add", "x.at[...].add")

    def max(self, values: Any) -> Tensor:
        return self._update(values, "max", "x.at[...].max")

    def min(self, values: Any) -> Tensor:
        return self._update(values, "min", "x.at[...].min")
