"""Element types of staged tensors: ``dl.f32``, ``dl.i1``, ... and conversions.

A :class:`DType` names an element type once for every layer: the MLIR type
used in the IR, the numpy dtype used for arguments and results (``bf16`` has
none), and the promotion of Python scalars.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

__all__ = [
    "DType",
    "bf16",
    "bool_",
    "dtype_of",
    "f16",
    "f32",
    "f64",
    "from_mlir",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "ui8",
    "ui16",
    "ui32",
    "ui64",
]


@dataclass(frozen=True)
class DType:
    """An element type: ``kind`` is "float", "int" or "bool"; ``unsigned`` integers
    (``ui8`` ... ``ui64``) order, divide and convert as unsigned."""

    name: str
    kind: str
    bits: int
    numpy: np.dtype | None
    unsigned: bool = False

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    def mlir(self) -> ir.Type:
        """The MLIR element type, in the current context."""
        if self.is_float:
            return {"f16": ir.F16Type, "bf16": ir.BF16Type, "f32": ir.F32Type, "f64": ir.F64Type}[
                self.name
            ].get()
        if self.unsigned:
            return ir.IntegerType.get_unsigned(self.bits)
        return ir.IntegerType.get_signless(self.bits)

    def __repr__(self) -> str:
        return f"dl.{self.name}"

    def __str__(self) -> str:
        return self.name


f16 = DType("f16", "float", 16, np.dtype(np.float16))
bf16 = DType("bf16", "float", 16, None)
f32 = DType("f32", "float", 32, np.dtype(np.float32))
f64 = DType("f64", "float", 64, np.dtype(np.float64))
i1 = DType("i1", "bool", 1, np.dtype(np.bool_))
bool_ = i1
i8 = DType("i8", "int", 8, np.dtype(np.int8))
i16 = DType("i16", "int", 16, np.dtype(np.int16))
i32 = DType("i32", "int", 32, np.dtype(np.int32))
i64 = DType("i64", "int", 64, np.dtype(np.int64))
ui8 = DType("ui8", "int", 8, np.dtype(np.uint8), unsigned=True)
ui16 = DType("ui16", "int", 16, np.dtype(np.uint16), unsigned=True)
ui32 = DType("ui32", "int", 32, np.dtype(np.uint32), unsigned=True)
ui64 = DType("ui64", "int", 64, np.dtype(np.uint64), unsigned=True)

_ALL = (f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
_BY_NAME = {d.name: d for d in _ALL} | {"bool": i1}
_BY_NUMPY = {d.numpy: d for d in _ALL if d.numpy is not None}


def dtype_of(value: Any) -> DType:
    """The DType named by a DType, a name ("f32"), a numpy dtype or scalar type, or a Python type.

    Raises TypeError for anything else (callers turn it into a DTypeError at
    the user's line).
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, np.dtype) and value in _BY_NUMPY:
        return _BY_NUMPY[value]
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value is bool:
        return i1
    if value is int:
        return i32
    if value is float:
        return f32
    try:
        npd = np.dtype(value)
    except TypeError:
        npd = None
    if npd is not None and npd in _BY_NUMPY:
        return _BY_NUMPY[npd]
    raise TypeError(f"unsupported element type {value!r} (expected one of {', '.join(_BY_NAME)})")


def from_mlir(element_type: ir.Type) -> DType:
    """The DType of an MLIR element type."""
    text = str(element_type)
    if text in _BY_NAME:
        return _BY_NAME[text]
    raise TypeError(f"element type {text} has no nnkit DType")
