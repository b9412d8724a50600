"""Errors of automatic differentiation: an op location plus notes explaining why."""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from dlvm_mlir.errors import PassError, source_location

__all__ = ["DifferentiationError", "describe_location"]


class DifferentiationError(PassError):
    """Differentiation rejected its input at ``at``; ``notes`` say why (location, text).

    The MLIR Python bindings can emit an error but not attach notes to it, so
    the notes are folded into the message, one ``note:`` line each.
    """

    def __init__(
        self,
        message: str,
        at: ir.Operation | ir.OpView | ir.Location | None = None,
        notes: Sequence[tuple[ir.Location | None, str]] = (),
    ):
        self.summary = message
        self.notes = tuple(notes)
        lines = [message]
        for location, text in self.notes:
            where = describe_location(location)
            lines.append(f"note: {where}{': ' if where else ''}{text}")
        super().__init__("\n".join(lines), at)


def describe_location(location: ir.Location | None) -> str:
    """``file:line:col`` of a location, or '' when it has no file position."""
    if location is None:
        return ""
    found = source_location(location)
    return str(found) if found else ""
