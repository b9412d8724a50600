"""Copying primal IR into a derivative function under a value mapping.

The primal function is never modified: every derivative body is built by
copying primal ops with ``clone_mapped``, which remaps the operands that
refer to primal values (including uses deep inside the op's regions) through
a ``Scope``. Recomputing a loop body in a reverse sweep is the same copy with
the body's arguments bound to values read from a tape.
"""

from __future__ import annotations

from collections.abc import Iterator

from mlir import ir

from dlvm_mlir.ad.sweeps import forward_location

__all__ = ["Scope", "clone_mapped", "defined_inside", "free_values", "terminator", "walk_ops"]


class Scope:
    """Primal value -> derivative-function value, falling back to an enclosing scope.

    A scope also keeps per-op records of the forward sweep (the tapes of
    loops), keyed by the primal op, for the reverse sweep of that op.
    """

    def __init__(self, parent: Scope | None = None):
        self.parent = parent
        self._values: dict[ir.Value, ir.Value] = {}
        self._records: dict[ir.Operation, object] = {}

    def bind(self, primal: ir.Value, value: ir.Value) -> None:
        self._values[primal] = value

    def bind_all(self, primals, values) -> None:
        for primal, value in zip(primals, values, strict=True):
            self.bind(primal, value)

    def get(self, primal: ir.Value) -> ir.Value | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope._values.get(primal)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def __getitem__(self, primal: ir.Value) -> ir.Value:
        found = self.get(primal)
        if found is None:
            raise KeyError(f"internal error: no value bound for {primal.get_name()} ({primal.type})")
        return found

    def record(self, op: ir.Operation, data: object) -> None:
        self._records[op.operation] = data

    def recorded(self, op: ir.Operation) -> object:
        scope: Scope | None = self
        while scope is not None:
            if op.operation in scope._records:
                return scope._records[op.operation]
            scope = scope.parent
        raise KeyError(f"internal error: no forward record for '{op.name}'")


def walk_ops(region_holder: ir.Operation) -> Iterator[ir.Operation]:
    """Every op nested in ``region_holder``'s regions, in pre-order."""
    for region in region_holder.regions:
        for block in region.blocks:
            for op in block.operations:
                yield op.operation
                yield from walk_ops(op.operation)


def terminator(block: ir.Block) -> ir.Operation:
    ops = block.operations
    return ops[len(ops) - 1].operation


def body_ops(block: ir.Block) -> list[ir.Operation]:
    """The ops of ``block`` except its terminator."""
    ops = [op.operation for op in block.operations]
    return ops[:-1]


def defined_inside(op: ir.Operation) -> set[ir.Value]:
    """Block arguments and results defined within ``op``'s regions."""
    values: set[ir.Value] = set()
    for holder in [op, *walk_ops(op)]:
        if holder is not op:
            values.update(holder.results)
        for region in holder.regions:
            for block in region.blocks:
                values.update(block.arguments)
    return values


def free_values(op: ir.Operation) -> list[ir.Value]:
    """Values used inside ``op``'s regions but defined outside ``op`` (first-use order)."""
    inner = defined_inside(op)
    seen: dict[ir.Value, None] = {}
    for nested in walk_ops(op):
        for v in nested.operands:
            if v not in inner:
                seen.setdefault(v)
    return list(seen)


def clone_mapped(op: ir.Operation, scope: Scope) -> ir.Operation:
    """Copy ``op`` at the current insertion point, remapping every outside value through ``scope``.

    The copy's results are bound in ``scope`` to the primal results.
    """
    op = op.operation
    new = op.clone()
    # A copy is forward code of the function being built, whatever sweep the
    # original belonged to (differentiating a gradient function).
    new.location = forward_location(op.location)
    for i, v in enumerate(op.operands):
        new.operands[i] = scope[v]
    if len(new.regions):
        inner = defined_inside(new)
        for nested in walk_ops(new):
            for i, v in enumerate(nested.operands):
                if v not in inner:
                    nested.operands[i] = scope[v]
    scope.bind_all(op.results, new.results)
    return new
