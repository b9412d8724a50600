"""Reverse mode: synthesize a gradient function by adjoint code generation.

The body of a gradient function is the primal body copied once (the forward
sweep), followed by the reverse sweep: the primal ops in reverse order, each
contributing, through its adjoint rule, to the adjoints of its active
operands. Loops are copied with a tape (``augmented_forward`` rules); in the
reverse sweep the body of a loop or branch is recomputed from the tape and
then reversed, so every value a rule reads is available where it is emitted.

Adjoints and forward values are keyed by *primal* values: the primal
function is read, never modified, while its derivative is built.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import func

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.activity import Activity
from dlvm_mlir.ad.adjoints import Adjoints
from dlvm_mlir.ad.cloning import Scope, body_ops, clone_mapped, free_values, terminator
from dlvm_mlir.ad.errors import DifferentiationError, describe_location
from dlvm_mlir.ad.registry import adjoint_rule, augmented_forward_rule
from dlvm_mlir.ad.sweeps import adjoint_location
from dlvm_mlir.dialects.dlvm import DerivativeDecl

if TYPE_CHECKING:
    from dlvm_mlir.ad.synthesis import Synthesizer

__all__ = ["Adjoints", "Reverse", "ReverseSweep", "activity_notes", "append_entry_block", "function_type"]


class Reverse:
    """What an adjoint rule sees of one primal op in the reverse sweep."""

    def __init__(self, sweep: ReverseSweep, op: ir.Operation, scope: Scope, adjoints: Adjoints):
        self.sweep = sweep
        self.op = op.opview if isinstance(op, ir.Operation) else op
        self.scope = scope
        self.adjoints = adjoints

    @property
    def operation(self) -> ir.Operation:
        return self.op.operation

    def x(self, i: int = 0) -> ir.Value:
        """Forward value of operand ``i``."""
        return self.scope[self.operation.operands[i]]

    def y(self, i: int = 0) -> ir.Value:
        """Forward value of result ``i``."""
        return self.scope[self.operation.results[i]]

    def grad(self, i: int = 0) -> ir.Value | None:
        """Adjoint of result ``i`` (None when it is zero)."""
        return self.adjoints.get(self.operation.results[i])

    @property
    def g(self) -> ir.Value:
        """Adjoint of the first result (zeros when none reached it)."""
        return self.grad_or_zeros(0)

    def grad_or_zeros(self, i: int) -> ir.Value:
        return self.adjoints.get_or_zeros(self.operation.results[i], self.y(i))

    def wants(self, i: int) -> bool:
        """Whether operand ``i`` is active (needs an adjoint)."""
        return self.sweep.activity.active(self.operation.operands[i])

    def accumulate(self, i: int, adjoint: ir.Value) -> None:
        if self.wants(i):
            self.adjoints.accumulate(self.operation.operands[i], adjoint)

    def accumulate_window(self, i: int, adjoint: ir.Value, indices: list[ir.Value]) -> None:
        """Add ``adjoint`` into a window of operand ``i``'s adjoint (see :meth:`Adjoints.accumulate_window`)."""
        if self.wants(i):
            self.adjoints.accumulate_window(self.operation.operands[i], adjoint, indices)

    def fail(self, reason: str) -> DifferentiationError:
        return DifferentiationError(f"'{self.operation.name}' is not differentiable {reason}", self.operation)


class ReverseSweep:
    """Builds the body of one gradient function from its primal."""

    def __init__(self, synthesizer: Synthesizer, primal: ir.Operation, decl: DerivativeDecl):
        self.synthesizer = synthesizer
        self.primal = primal.operation
        self.decl = decl
        primal_type = function_type(self.primal)
        self.num_args = len(primal_type.inputs)
        self.wrt = decl.wrt_indices(self.num_args)
        self.froms = decl.from_indices(len(primal_type.results))
        self.activity = Activity(self.primal, self.wrt, self.froms)
        reject_sinks(self.activity, self.primal, adjoint_rule)

    def synthesize(self, target: ir.Operation) -> None:
        """Give ``target`` (a body-less declaration) the gradient body."""
        entry = append_entry_block(target)
        primal_entry = self.primal.regions[0].blocks[0]
        scope = Scope()
        scope.bind_all(primal_entry.arguments, list(entry.arguments)[: self.num_args])
        seeds = list(entry.arguments)[self.num_args :]
        with ir.InsertionPoint(entry), self.primal.location:
            self.emit_forward_block(primal_entry, scope)
            returned = list(terminator(primal_entry).operands)
            adjoints = Adjoints()
            for k, index in enumerate(self.froms):
                value = returned[index]
                if not self.activity.varied(value):
                    continue
                seed = seeds[k] if self.decl.seedable else vocab.full_like(scope[value], 1.0)
                adjoints.accumulate(value, seed)
            self.reverse_block(primal_entry, scope, adjoints)
            args = [primal_entry.arguments[i] for i in self.wrt]
            grads = [adjoints.get_or_zeros(arg, scope[arg]) for arg in args]
            kept = [scope[returned[k]] for k in self.decl.keeping]
            func.ReturnOp(grads + kept)

    # ----------------------------------------------------------------------
    # Forward sweep
    # ----------------------------------------------------------------------

    def emit_forward_block(self, block: ir.Block, scope: Scope, plain: bool = False) -> None:
        """Copy the ops of a primal block (not its terminator) at the insertion point.

        Active loops are copied with their tapes unless ``plain``: a loop body
        copied inside a taped loop needs no tapes of its own, as the reverse
        sweep recomputes each iteration (and tapes the inner loops then).
        """
        for op in body_ops(block):
            self.emit_forward_op(op, scope, plain)

    def emit_forward_op(self, op: ir.Operation, scope: Scope, plain: bool = False) -> None:
        augmented = None if plain else augmented_forward_rule(op.name)
        if augmented is not None and self.activity.any_active(op.results):
            with op.location:
                augmented(self, op, scope)
            return
        clone_mapped(op, scope)

    # ----------------------------------------------------------------------
    # Reverse sweep
    # ----------------------------------------------------------------------

    def reverse_block(self, block: ir.Block, scope: Scope, adjoints: Adjoints) -> None:
        """Emit the adjoints of the ops of a primal block (not its terminator), last op first."""
        for op in reversed(body_ops(block)):
            self.reverse_op(op, scope, adjoints)

    def reverse_op(self, op: ir.Operation, scope: Scope, adjoints: Adjoints) -> None:
        if not any(self.activity.active(r) and adjoints.has(r) for r in op.results):
            return
        rule = adjoint_rule(op.name)
        if rule is None:
            raise self.no_rule(op)
        with adjoint_location(op.location), dynamic_shapes_unsupported(op, "reverse"):
            rule(Reverse(self, op, scope, adjoints))

    def active_free_values(self, op: ir.Operation) -> list[ir.Value]:
        """Active values defined outside ``op`` and used inside its regions."""
        return [v for v in free_values(op) if self.activity.active(v)]

    def no_rule(self, op: ir.Operation) -> DifferentiationError:
        source = next((r for r in op.results if self.activity.active(r)), op.results[0])
        return DifferentiationError(
            f"cannot differentiate '{op.name}': it has no adjoint rule (reverse mode)",
            op,
            activity_notes(self.activity, self.primal, source),
        )


def has_dynamic_shape(op: ir.Operation) -> bool:
    """Whether an operand or result of ``op`` is a tensor with a dynamic size."""
    return any(
        isinstance(v.type, ir.RankedTensorType) and not ir.RankedTensorType(v.type).has_static_shape
        for v in [*op.operands, *op.results]
    )


@contextlib.contextmanager
def dynamic_shapes_unsupported(op: ir.Operation, mode: str):
    """Report a rule that cannot build its derivative of dynamically shaped tensors (a
    binding refusing a dynamic type, a static size it needs) as an error at ``op``."""
    try:
        yield
    except (ValueError, TypeError) as err:
        if not has_dynamic_shape(op):
            raise
        raise DifferentiationError(
            f"cannot differentiate '{op.name}' ({mode} mode) on dynamically shaped tensors: "
            "its derivative rule needs static shapes",
            op,
        ) from err


def function_type(fn: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(fn.operation.attributes["function_type"]).value)


def append_entry_block(fn: ir.Operation) -> ir.Block:
    """Give a body-less function an entry block with its argument types."""
    with fn.location:
        return fn.operation.regions[0].blocks.append(*function_type(fn).inputs)


def reject_sinks(activity: Activity, primal: ir.Operation, has_rule) -> None:
    """Raise at the first op through which a derivative would silently be lost."""
    for op, source in activity.sinks(has_rule):
        raise DifferentiationError(
            f"cannot differentiate through '{op.name}': it consumes a value that depends on a "
            "differentiated argument but has no derivative rule (derivatives do not flow through memory "
            "or side effects)",
            op,
            activity_notes(activity, primal, source, include_last=True),
        )


def activity_notes(
    activity: Activity, primal: ir.Operation, value: ir.Value, include_last: bool = False
) -> list[tuple[ir.Location | None, str]]:
    """Notes tracing how ``value`` came to depend on a differentiated argument.

    The path lists the ops between the argument and ``value``'s defining op
    (and that op too with ``include_last``, when the error is at a later op).
    """
    chain = activity.explain(value)
    if not chain or chain[0].op is not None:
        return []
    name = ir.StringAttr(primal.attributes["sym_name"]).value
    index = ir.BlockArgument(chain[0].value).arg_number
    notes: list[tuple[ir.Location | None, str]] = [
        (primal.location, f"it is active: it depends on argument #{index} of @{name}")
    ]
    steps = [step.op for step in (chain[1:] if include_last else chain[1:-1]) if step.op is not None]
    if steps:
        path = " -> ".join(_describe_op(op) for op in steps)
        notes.append((steps[0].location, f"through {path}"))
    return notes


def _describe_op(op: ir.Operation) -> str:
    where = describe_location(op.location)
    return f"'{op.name}'" + (f" ({where})" if where else "")
