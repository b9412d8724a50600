"""Errors in staged user code, reported at the user's ``file:line:col``.

Every error nnkit raises for a mistake in user code is a :class:`StagingError`
(a :class:`dlvm_mlir.errors.DLVMError`). Its message starts with the position
of the user's Python line that caused it (an op with bad operands, a call with
the wrong arguments), followed by that line of source:

    model.py:12:9: error: dlvm.add: operand shapes are not broadcast-compatible: ...
        h = x @ w + b
"""

from __future__ import annotations

import linecache
import os
import sys
from types import FrameType

from dlvm_mlir.errors import DLVMError, SourceLocation

__all__ = [
    "ArityError",
    "DTypeError",
    "ShapeError",
    "StagingError",
    "TracingError",
    "user_location",
]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class StagingError(DLVMError):
    """A mistake in staged user code; ``location`` is the user's line (None if unknown)."""

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        self.message = message
        self.location = location if location is not None else user_location()
        super().__init__(self._text())

    def _text(self) -> str:
        if self.location is None:
            return f"error: {self.message}"
        text = f"{self.location}: error: {self.message}"
        line = linecache.getline(self.location.filename, self.location.line).rstrip()
        return f"{text}\n    {line.strip()}" if line.strip() else text


class ShapeError(StagingError):
    """Operand shapes an op rejects (broadcasting, dot, axes, seeds of a gradient, ...)."""


class DTypeError(StagingError):
    """Element types that do not fit (mixed operand types, a wrong argument dtype)."""


class ArityError(StagingError):
    """A staged function called with the wrong number of arguments or results."""


class TracingError(StagingError):
    """A staged value used in a way staging cannot express (``if tensor:``, a leaked value)."""


def _frame_column(frame: FrameType) -> int:
    """The 1-based column of the expression a frame is executing (0 if unknown)."""
    try:
        positions = list(frame.f_code.co_positions())
        column = positions[frame.f_lasti // 2][2]
    except (AttributeError, IndexError):
        return 0
    return column + 1 if column is not None else 0


def user_location() -> SourceLocation | None:
    """The innermost caller position outside the nnkit package, or None."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR):
            return SourceLocation(filename, frame.f_lineno or 0, _frame_column(frame))
        frame = frame.f_back
    return None
