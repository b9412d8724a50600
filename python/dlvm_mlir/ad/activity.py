"""Activity analysis: which values of a primal function carry derivatives.

A value is *varied* when it depends on a differentiated argument and *useful*
when a differentiated result depends on it; it is *active* when both hold.
Adjoint and tangent code is generated for active values only.

Both are fixpoints over the whole function (nested regions included), with
the data flow of ``scf`` loops and branches made explicit. Only values of
float type (float scalars, float tensors) can be varied; ops listed as
inactive (comparisons, rounding, random, constants) stop variation.

For diagnostics, every varied value remembers the op and operand that made it
varied, so ``explain`` can show how an op became active.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mlir import ir

from dlvm_mlir.ad.cloning import defined_inside, terminator, walk_ops
from dlvm_mlir.ad.registry import is_inactive_op
from dlvm_mlir.ad.vocab import is_float

__all__ = ["Activity", "Step"]


@dataclass(frozen=True)
class Step:
    """One link of an activity chain: ``value`` became varied at ``op`` (None for an argument)."""

    value: ir.Value
    op: ir.Operation | None


class Activity:
    """Varied/useful sets of one primal function for given arguments and results."""

    def __init__(self, func: ir.Operation, wrt: Iterable[int], results: Iterable[int]):
        self.func = func.operation
        entry = self.func.regions[0].blocks[0]
        self._varied: dict[ir.Value, Step] = {}
        self._useful: set[ir.Value] = set()
        for index in wrt:
            arg = entry.arguments[index]
            if is_float(arg.type):
                self._varied[arg] = Step(arg, None)
        returns = [op for op in walk_ops(self.func) if op.name == "func.return"]
        for ret in returns:
            for index in results:
                self._useful.add(ret.operands[index])
        self._ops = list(walk_ops(self.func))
        self._fixpoint(self._propagate_varied)
        self._fixpoint(self._propagate_useful)

    # ----------------------------------------------------------------------
    # Queries
    # ----------------------------------------------------------------------

    def varied(self, value: ir.Value) -> bool:
        return value in self._varied

    def useful(self, value: ir.Value) -> bool:
        return value in self._useful

    def active(self, value: ir.Value) -> bool:
        return value in self._varied and value in self._useful

    def any_active(self, values: Iterable[ir.Value]) -> bool:
        return any(self.active(v) for v in values)

    def explain(self, value: ir.Value, limit: int = 12) -> list[Step]:
        """The chain from a differentiated argument to ``value`` (argument first)."""
        chain: list[Step] = []
        seen: set[ir.Value] = set()
        current = value
        while current in self._varied and current not in seen and len(chain) < limit:
            seen.add(current)
            step = self._varied[current]
            chain.append(step)
            if step.op is None:
                break
            current = step.value
        chain.reverse()
        return chain

    def sinks(self, has_rule) -> list[tuple[ir.Operation, ir.Value]]:
        """Ops without derivative rules that consume a varied value but produce no float result.

        Through such an op (a store to memory, a print, ...) a derivative would
        be dropped silently, so differentiation rejects the function.
        ``has_rule(name)`` tells whether the mode at hand has a rule for an op.
        """
        found = []
        for op in self._ops:
            if op.name in _TERMINATORS or is_inactive_op(op.name) or has_rule(op.name):
                continue
            if any(is_float(r.type) for r in op.results):
                continue
            source = self._first_varied(_inputs(op))
            if source is not None:
                found.append((op, source))
        return found

    def source(self, value: ir.Value) -> ir.Value | None:
        """The value that made ``value`` varied (None for an argument or a non-varied value)."""
        step = self._varied.get(value)
        return None if step is None or step.op is None else step.value

    # ----------------------------------------------------------------------
    # Fixpoints
    # ----------------------------------------------------------------------

    def _fixpoint(self, step) -> None:
        changed = True
        while changed:
            changed = False
            for op in self._ops:
                changed |= step(op)

    def _mark_varied(self, value: ir.Value, source: ir.Value, op: ir.Operation) -> bool:
        if value in self._varied or not is_float(value.type):
            return False
        self._varied[value] = Step(source, op)
        return True

    def _first_varied(self, values: Iterable[ir.Value]) -> ir.Value | None:
        return next((v for v in values if v in self._varied), None)

    def _propagate_varied(self, op: ir.Operation) -> bool:
        if is_inactive_op(op.name):
            return False
        flows = _flows(op)
        if flows is not None:
            changed = False
            for sources, target in flows:
                source = self._first_varied(sources)
                if source is not None:
                    changed |= self._mark_varied(target, source, op)
            return changed
        source = self._first_varied(_inputs(op))
        if source is None:
            return False
        changed = False
        for result in op.results:
            changed |= self._mark_varied(result, source, op)
        return changed

    def _mark_useful(self, values: Iterable[ir.Value]) -> bool:
        changed = False
        for v in values:
            if v not in self._useful and is_float(v.type):
                self._useful.add(v)
                changed = True
        return changed

    def _propagate_useful(self, op: ir.Operation) -> bool:
        if is_inactive_op(op.name) or op.name == "func.return":
            return False
        flows = _flows(op)
        if flows is not None:
            changed = False
            for sources, target in flows:
                if target in self._useful:
                    changed |= self._mark_useful(sources)
            return changed
        if op.name in _TERMINATORS:
            return False
        if any(r in self._useful for r in op.results):
            return self._mark_useful(_inputs(op))
        return False


# --------------------------------------------------------------------------
# Data flow through structured control flow
# --------------------------------------------------------------------------

_TERMINATORS = frozenset({"scf.yield", "scf.condition", "func.return"})


def _inputs(op: ir.Operation) -> list[ir.Value]:
    """Operands of ``op`` plus values its regions use from outside (for unknown region ops)."""
    values = list(op.operands)
    if len(op.regions):
        inner = defined_inside(op)
        for nested in walk_ops(op):
            values += [v for v in nested.operands if v not in inner]
    return values


def _flows(op: ir.Operation) -> list[tuple[list[ir.Value], ir.Value]] | None:
    """(sources, target) edges of the structured ops; None for other ops.

    A terminator's operand edges are listed by its parent op, so a terminator
    itself yields an empty list.
    """
    name = op.name
    if name in ("scf.yield", "scf.condition"):
        return []
    if name == "scf.for":
        return _for_flows(op)
    if name == "scf.while":
        return _while_flows(op)
    if name in ("scf.if", "scf.index_switch", "scf.execute_region"):
        return _branch_flows(op)
    return None


def _for_flows(op: ir.Operation) -> list[tuple[list[ir.Value], ir.Value]]:
    body = op.regions[0].blocks[0]
    inits = list(op.operands)[3:]
    yields = list(terminator(body).operands)
    flows = []
    for i, init in enumerate(inits):
        flows.append(([init, yields[i]], body.arguments[i + 1]))
        flows.append(([init, yields[i]], op.results[i]))
    return flows


def _while_flows(op: ir.Operation) -> list[tuple[list[ir.Value], ir.Value]]:
    before = op.regions[0].blocks[0]
    after = op.regions[1].blocks[0]
    inits = list(op.operands)
    forwarded = list(terminator(before).operands)[1:]
    nexts = list(terminator(after).operands)
    flows = []
    for i, init in enumerate(inits):
        flows.append(([init, nexts[i]], before.arguments[i]))
    for j, value in enumerate(forwarded):
        flows.append(([value], after.arguments[j]))
        flows.append(([value], op.results[j]))
    return flows


def _branch_flows(op: ir.Operation) -> list[tuple[list[ir.Value], ir.Value]]:
    yields = [list(terminator(region.blocks[0]).operands) for region in op.regions if len(region.blocks)]
    return [([ys[i] for ys in yields], result) for i, result in enumerate(op.results)]
