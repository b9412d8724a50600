"""Tensor types: concrete :class:`Spec` (shape and dtype) and parameter annotations.

``dl.Tensor[f32, (None, 784)]`` is a :class:`TensorAnnotation`: a dtype (or any)
and a shape whose dimensions are sizes, ``None`` (any size) or names (``"n"``:
any size, equal wherever the name appears in one call). A staged function is
specialized to the :class:`Spec` of each argument it is called with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from mlir import ir

from .dtypes import DType, dtype_of, f32, from_mlir, i1, i32
from .errors import DTypeError, ShapeError

__all__ = ["Dim", "Spec", "TensorAnnotation", "spec", "to_argument"]

Dim = Union[int, None, str]


@dataclass(frozen=True)
class Spec:
    """A concrete tensor type: static shape and element type (hashable; a cache key)."""

    shape: tuple[int, ...]
    dtype: DType

    def mlir(self) -> ir.RankedTensorType:
        """The builtin ranked tensor type, in the current context."""
        return ir.RankedTensorType.get(list(self.shape), self.dtype.mlir())

    @staticmethod
    def from_mlir(value_type: ir.Type) -> Spec:
        tensor = ir.RankedTensorType(value_type)
        return Spec(tuple(tensor.shape), from_mlir(tensor.element_type))

    def __str__(self) -> str:
        return f"{self.dtype}[{', '.join(map(str, self.shape))}]"


def spec(shape: Sequence[int], dtype: Any = f32) -> Spec:
    """A Spec from a shape and a dtype (for ``.ir(...)`` and ``.lower(...)`` without data)."""
    return Spec(tuple(int(d) for d in shape), dtype_of(dtype))


@dataclass(frozen=True)
class TensorAnnotation:
    """A parameter's declared type: ``dtype`` None means any; ``shape`` None means any rank."""

    dtype: DType | None = None
    shape: tuple[Dim, ...] | None = None

    @staticmethod
    def parse(params: Any) -> TensorAnnotation:
        """``Tensor[f32]``, ``Tensor[f32, (None, 784)]``, ``Tensor[f32, ()]`` (rank 0)."""
        if not isinstance(params, tuple):
            params = (params,)
        if len(params) > 2:
            raise TypeError("Tensor[...] takes a dtype and a shape: Tensor[f32, (None, 784)]")
        dtype = None if params[0] in (None, Any) else dtype_of(params[0])
        shape = None
        if len(params) == 2 and params[1] is not Ellipsis and params[1] is not None:
            dims = params[1] if isinstance(params[1], (tuple, list)) else (params[1],)
            for dim in dims:
                if not (dim is None or isinstance(dim, str) or (isinstance(dim, int) and dim >= 0)):
                    raise TypeError(f"bad dimension {dim!r} in Tensor[...] (a size, None or a name)")
            shape = tuple(dims)
        return TensorAnnotation(dtype, shape)

    def check(self, actual: Spec, bindings: dict[str, int], what: str) -> None:
        """Raise DTypeError / ShapeError if ``actual`` does not fit; bind named dimensions."""
        if self.dtype is not None and actual.dtype != self.dtype:
            raise DTypeError(f"{what} has element type {actual.dtype}, expected {self.dtype} ({self})")
        if self.shape is None:
            return
        if len(actual.shape) != len(self.shape):
            raise ShapeError(f"{what} has shape {list(actual.shape)}, expected rank {len(self.shape)} ({self})")
        for axis, (want, got) in enumerate(zip(self.shape, actual.shape)):
            if isinstance(want, int) and want != got:
                raise ShapeError(f"{what} has shape {list(actual.shape)}, expected {self} (dimension {axis})")
            if isinstance(want, str):
                bound = bindings.setdefault(want, got)
                if bound != got:
                    raise ShapeError(
                        f"{what} has shape {list(actual.shape)}: dimension '{want}' is {got} here "
                        f"but {bound} in an earlier argument"
                    )

    def default_spec(self) -> Spec | None:
        """The one Spec this annotation allows, when it is fully static."""
        if self.dtype is None or self.shape is None or not all(isinstance(d, int) for d in self.shape):
            return None
        return Spec(tuple(self.shape), self.dtype)  # type: ignore[arg-type]

    def __str__(self) -> str:
        dtype = "Any" if self.dtype is None else str(self.dtype)
        if self.shape is None:
            return f"Tensor[{dtype}]"
        dims = ", ".join("None" if d is None else repr(d) if isinstance(d, str) else str(d) for d in self.shape)
        return f"Tensor[{dtype}, ({dims}{',' if len(self.shape) == 1 else ''})]"


def _contiguous(array: np.ndarray) -> np.ndarray:
    """C-contiguous, keeping rank 0 (``np.ascontiguousarray`` makes it rank 1)."""
    return array if array.flags.c_contiguous else np.require(array, requirements="C")


def to_argument(value: Any, annotation: TensorAnnotation | None, what: str) -> tuple[np.ndarray, Spec]:
    """A call argument as a C-contiguous array of a supported dtype, and its Spec.

    numpy arrays keep their dtype (a mismatch with the annotation is the
    user's error); Python scalars and lists take the annotated dtype, else
    bool -> i1, int -> i32, float -> f32.
    """
    want = annotation.dtype if annotation is not None else None
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        try:
            dtype = dtype_of(array.dtype)
        except TypeError:
            raise DTypeError(f"{what} has unsupported element type {array.dtype}") from None
        if want is not None and want.numpy is not None and dtype != want:
            raise DTypeError(
                f"{what} has element type {dtype}, expected {want} (convert it with .astype(np.{want.numpy.name}))"
            )
        return _contiguous(array), Spec(array.shape, dtype)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise DTypeError(f"{what} is a {type(value).__name__}, expected an array or a number") from None
    if array.dtype.kind not in "biuf":
        raise DTypeError(f"{what} is a {type(value).__name__}, expected an array or a number")
    dtype = want if want is not None and want.numpy is not None else {"b": i1, "i": i32, "u": i32, "f": f32}[array.dtype.kind]
    return _contiguous(array.astype(dtype.numpy)), Spec(array.shape, dtype)
