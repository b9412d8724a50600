"""The adjoint map of a reverse sweep: primal value -> its accumulated adjoint.

Shared by the driver (:mod:`dlvm_mlir.ad.core`) and the rules that reverse
nested blocks themselves (:mod:`dlvm_mlir.ad.rules.scf`).
"""

from __future__ import annotations

from mlir import ir

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.errors import DifferentiationError

__all__ = ["Adjoints"]


class Adjoints:
    """Primal value -> its accumulated adjoint (a value of the derivative function)."""

    def __init__(self) -> None:
        self._map: dict[ir.Value, ir.Value] = {}

    def get(self, primal: ir.Value) -> ir.Value | None:
        return self._map.get(primal)

    def has(self, primal: ir.Value) -> bool:
        return primal in self._map

    def set(self, primal: ir.Value, adjoint: ir.Value) -> None:
        self._map[primal] = adjoint

    def accumulate(self, primal: ir.Value, adjoint: ir.Value) -> None:
        if adjoint.type != primal.type:
            raise DifferentiationError(
                f"internal error: adjoint of type {adjoint.type} for a value of type {primal.type}"
            )
        previous = self._map.get(primal)
        self._map[primal] = adjoint if previous is None else vocab.add(previous, adjoint)

    def accumulate_window(self, primal: ir.Value, adjoint: ir.Value, indices: list[ir.Value]) -> None:
        """Add ``adjoint`` into the window of ``primal``'s adjoint that starts at
        ``indices`` (``dlvm.dynamic_slice``'s rule). The window is updated in place
        (a ``dlvm.dynamic_update_slice`` of the previous adjoint): in a loop that reads
        ``xs[t]``, each step touches its window, not a whole tensor of zeros."""
        from dlvm_mlir.dialects import dlvm

        previous = self._map.get(primal)
        if previous is None:
            self._map[primal] = dlvm.dynamic_update_slice(vocab.zeros(primal.type), adjoint, indices)
            return
        window = dlvm.dynamic_slice(previous, indices, list(ir.RankedTensorType(adjoint.type).shape))
        self._map[primal] = dlvm.dynamic_update_slice(previous, vocab.add(window, adjoint), indices)

    def get_or_zeros(self, primal: ir.Value, like: ir.Value | None = None) -> ir.Value:
        """The adjoint, or zeros (shaped like the forward value ``like`` when dynamic)."""
        found = self._map.get(primal)
        if found is not None:
            return found
        return vocab.zeros_like(like) if like is not None else vocab.zeros(primal.type)
