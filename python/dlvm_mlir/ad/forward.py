"""Forward mode: synthesize a Jacobian-vector product (``#dlvm.tangent``).

One sweep over the primal copies each op and, for active ops, emits its
tangent next to it through the op's tangent rule. Loops and branches carry
tangents as extra loop-carried values and results. Tangents are keyed by
primal values, like the forward values, so nested regions see their
enclosing tangents through scope chaining.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import func

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.activity import Activity
from dlvm_mlir.ad.cloning import Scope, body_ops, clone_mapped, terminator
from dlvm_mlir.ad.core import (
    activity_notes,
    append_entry_block,
    dynamic_shapes_unsupported,
    function_type,
    reject_sinks,
)
from dlvm_mlir.ad.errors import DifferentiationError
from dlvm_mlir.ad.registry import tangent_emits_primal, tangent_rule
from dlvm_mlir.dialects.dlvm import DerivativeDecl

if TYPE_CHECKING:
    from dlvm_mlir.ad.synthesis import Synthesizer

__all__ = ["ForwardSweep", "Tangent"]


class Tangent:
    """What a tangent rule sees of one primal op."""

    def __init__(self, sweep: ForwardSweep, op: ir.Operation, scope: Scope, tangents: Scope):
        self.sweep = sweep
        self.operation = op.operation
        self.op = self.operation.opview
        self.scope = scope
        self.tangents = tangents

    def x(self, i: int = 0) -> ir.Value:
        """Forward value of operand ``i``."""
        return self.scope[self.operation.operands[i]]

    def y(self, i: int = 0) -> ir.Value:
        """Forward value of result ``i``."""
        return self.scope[self.operation.results[i]]

    def dx(self, i: int = 0) -> ir.Value | None:
        """Tangent of operand ``i`` (None when it is zero)."""
        return self.tangents.get(self.operation.operands[i])

    def dx_or_zeros(self, i: int) -> ir.Value:
        found = self.dx(i)
        return found if found is not None else vocab.zeros_like(self.x(i))

    def set(self, i: int, value: ir.Value) -> None:
        """Set the tangent of result ``i``."""
        result = self.operation.results[i]
        if value.type != result.type:
            raise DifferentiationError(
                f"internal error: tangent of type {value.type} for a value of type {result.type}", self.operation
            )
        self.tangents.bind(result, value)

    def reapply(self, operands: list[ir.Value]) -> list[ir.Value]:
        """Emit the op again on other operands (of the same types); return its results."""
        new = self.operation.clone()
        for i, v in enumerate(operands):
            new.operands[i] = v
        return list(new.results)

    def emit_primal(self) -> None:
        clone_mapped(self.operation, self.scope)

    def bind_results(self, values: list[ir.Value]) -> None:
        self.scope.bind_all(self.operation.results, values)

    def nested(self) -> tuple[Scope, Scope]:
        """Fresh (values, tangents) scopes for a region of this op."""
        return Scope(self.scope), Scope(self.tangents)

    def fail(self, reason: str) -> DifferentiationError:
        return DifferentiationError(f"'{self.operation.name}' is not differentiable {reason}", self.operation)


class ForwardSweep:
    """Builds the body of one JVP function from its primal."""

    def __init__(self, synthesizer: Synthesizer, primal: ir.Operation, decl: DerivativeDecl):
        self.synthesizer = synthesizer
        self.primal = primal.operation
        self.decl = decl
        primal_type = function_type(self.primal)
        self.num_args = len(primal_type.inputs)
        self.wrt = decl.wrt_indices(self.num_args)
        self.froms = decl.from_indices(len(primal_type.results))
        self.activity = Activity(self.primal, self.wrt, self.froms)
        reject_sinks(self.activity, self.primal, tangent_rule)

    def synthesize(self, target: ir.Operation) -> None:
        entry = append_entry_block(target)
        primal_entry = self.primal.regions[0].blocks[0]
        args = list(entry.arguments)
        scope, tangents = Scope(), Scope()
        scope.bind_all(primal_entry.arguments, args[: self.num_args])
        for k, index in enumerate(self.wrt):
            if vocab.is_float(args[index].type):
                tangents.bind(primal_entry.arguments[index], args[self.num_args + k])
        with ir.InsertionPoint(entry), self.primal.location:
            self.emit_block(primal_entry, scope, tangents)
            returned = list(terminator(primal_entry).operands)
            outputs = [self._tangent_or_zeros(returned[r], scope, tangents) for r in self.froms]
            kept = [scope[returned[k]] for k in self.decl.keeping]
            func.ReturnOp(outputs + kept)

    def emit_block(self, block: ir.Block, scope: Scope, tangents: Scope) -> None:
        """Copy a primal block's ops (not its terminator) with the tangents of the active ones."""
        for op in body_ops(block):
            self.emit_op(op, scope, tangents)

    def emit_op(self, op: ir.Operation, scope: Scope, tangents: Scope) -> None:
        if not self.activity.any_active(op.results):
            clone_mapped(op, scope)
            return
        rule = tangent_rule(op.name)
        if rule is None:
            source = next(r for r in op.results if self.activity.active(r))
            raise DifferentiationError(
                f"cannot differentiate '{op.name}': it has no tangent rule (forward mode)",
                op,
                activity_notes(self.activity, self.primal, source),
            )
        with op.location:
            if not tangent_emits_primal(op.name):
                clone_mapped(op, scope)
            with dynamic_shapes_unsupported(op, "forward"):
                rule(Tangent(self, op, scope, tangents))

    @staticmethod
    def _tangent_or_zeros(value: ir.Value, scope: Scope, tangents: Scope) -> ir.Value:
        found = tangents.get(value)
        return found if found is not None else vocab.zeros_like(scope[value])
