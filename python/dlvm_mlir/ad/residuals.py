"""The residuals of a gradient function: forward values its reverse sweep reads.

In a synthesized gradient body (see :mod:`dlvm_mlir.ad.sweeps`) every
forward value that a reverse-sweep op reads must stay in memory from the
forward sweep until that read: it is a *residual* (JAX's word; "saved value",
"activation" in other systems). ``dlvm-checkpoint`` trades residuals for
recomputation; ``dlvm-report-residuals`` lists them.

Cost model (the same numbers the checkpointing decision minimizes):

- bytes of a value: elements x element size (``i1`` takes a byte), None for
  dynamic shapes (unknown, not counted in totals);
- flops of an op: ``2*M*N*K`` for ``dlvm.dot``, ``2 * output elements *
  kernel elements / output channels`` for ``dlvm.convolve``, otherwise one
  per element of its largest operand or result (elementwise math,
  reductions, data movement alike).

Constants are not residuals (they are literals, not memory the sweep holds),
nor are function arguments (the caller holds them).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from dlvm_mlir.ad.sweeps import Sweep, forward_location, sweep_of

__all__ = [
    "RECOMPUTE_ATTR",
    "Residual",
    "Sweeps",
    "is_constant",
    "is_recomputable",
    "op_flops",
    "residuals",
    "type_bytes",
]

RECOMPUTE_ATTR = "dlvm.recompute"
"""Unit attribute of a recomputed copy: keeps CSE from merging it with the forward op."""

_CONSTANTS = {"dlvm.constant", "arith.constant"}
_RECOMPUTABLE_DIALECTS = {"dlvm", "arith", "math", "tensor"}


def type_bytes(t: ir.Type) -> int | None:
    """Bytes a value of type ``t`` occupies; None when its shape is dynamic."""
    if isinstance(t, ir.ShapedType):
        if not t.has_static_shape:
            return None
        return math.prod(t.shape) * _element_bytes(t.element_type)
    return _element_bytes(t)


def _element_bytes(t: ir.Type) -> int:
    if isinstance(t, ir.ComplexType):
        return 2 * _element_bytes(t.element_type)
    if isinstance(t, (ir.IntegerType, ir.FloatType)):
        return (t.width + 7) // 8
    return 8  # index and anything else: a machine word


def _elements(t: ir.Type) -> int:
    if isinstance(t, ir.ShapedType):
        return math.prod(t.shape) if t.has_static_shape else 1
    return 1


def _shape(v: ir.Value) -> list[int]:
    return list(v.type.shape)


def op_flops(op: ir.Operation) -> int:
    """Estimated cost of running ``op`` once (see the module docstring)."""
    op = op.operation
    if op.name == "dlvm.dot":
        lhs = _shape(op.operands[0])
        contracted = lhs[-1] if lhs else 1
        return 2 * _elements(op.results[0].type) * contracted
    if op.name == "dlvm.convolve":
        kernel = _shape(op.operands[1])
        per_output = math.prod(kernel) // max(kernel[0], 1)
        return 2 * _elements(op.results[0].type) * per_output
    sizes = [_elements(v.type) for v in [*op.operands, *op.results]]
    return max(sizes, default=1)


def is_constant(op: ir.Operation) -> bool:
    return op.operation.name in _CONSTANTS


def is_recomputable(op: ir.Operation) -> bool:
    """Whether a copy of ``op`` may run again later: region-free ops of value-semantics dialects."""
    op = op.operation
    return len(op.regions) == 0 and op.name.split(".", 1)[0] in _RECOMPUTABLE_DIALECTS


@dataclass(frozen=True)
class Residual:
    """One value of the report: a saved forward value, or a recomputed copy's result."""

    value: ir.Value
    op: ir.Operation
    status: str  # "saved" or "recomputed"
    bytes: int | None
    flops: int

    @property
    def location(self) -> ir.Location:
        """Where the value is computed in the source (sweep tags removed)."""
        return forward_location(self.op.location)

    def describe(self) -> str:
        size = "dynamic size" if self.bytes is None else f"{self.bytes} bytes"
        if self.status == "recomputed":
            return f"recomputed: '{self.op.name}' {self.value.type} ({size} not stored, {self.flops} flops)"
        return f"saved: '{self.op.name}' {self.value.type} ({size})"


class Sweeps:
    """The top-level ops of one function body split into forward and reverse sweep."""

    def __init__(self, fn: func.FuncOp | ir.Operation):
        self.fn = fn.operation
        block = self.fn.regions[0].blocks[0]
        ops = [op.operation for op in block.operations]
        self.terminator = ops[-1]
        self.ops = ops[:-1]
        self.sweep = {op: sweep_of(op) for op in self.ops}
        self.position = {op: i for i, op in enumerate(self.ops)}

    @property
    def has_reverse_sweep(self) -> bool:
        """Whether this is a gradient body to analyze: one block (what dlvm-differentiate
        emits; control flow is in scf ops) with reverse-sweep ops."""
        return len(self.fn.regions[0].blocks) == 1 and any(s.is_reverse for s in self.sweep.values())

    def forward_ops(self) -> list[ir.Operation]:
        return [op for op in self.ops if self.sweep[op] is Sweep.FORWARD]

    def reverse_ops(self) -> list[ir.Operation]:
        return [op for op in self.ops if self.sweep[op].is_reverse]

    def top_level_user(self, use_owner: ir.Operation) -> ir.Operation | None:
        """The top-level op of this body that contains ``use_owner`` (None: the terminator)."""
        op = use_owner.operation if not isinstance(use_owner, ir.Operation) else use_owner
        while op.parent is not None and op.parent != self.fn:
            op = op.parent
        return op if op in self.position else None

    def reverse_users(self, value: ir.Value) -> Iterator[ir.Operation]:
        for use in value.uses:
            user = self.top_level_user(use.owner)
            if user is not None and self.sweep[user].is_reverse:
                yield user

    def reads_in_reverse(self, op: ir.Operation) -> bool:
        """Whether a reverse-sweep op reads a result of the forward op ``op``."""
        return any(next(self.reverse_users(r), None) is not None for r in op.results)


def residuals(fn: func.FuncOp | ir.Operation) -> list[Residual]:
    """The saved forward values and the recomputed copies of ``fn``, in body order.

    Empty for a function without a reverse sweep.
    """
    sweeps = Sweeps(fn)
    found: list[Residual] = []
    for op in sweeps.ops:
        kind = sweeps.sweep[op]
        if kind is Sweep.FORWARD and not is_constant(op):
            for result in op.results:
                if next(sweeps.reverse_users(result), None) is not None:
                    found.append(Residual(result, op, "saved", type_bytes(result.type), op_flops(op)))
        elif kind is Sweep.RECOMPUTE or RECOMPUTE_ATTR in op.attributes:
            for result in op.results:
                found.append(Residual(result, op, "recomputed", type_bytes(result.type), op_flops(op)))
    return found
