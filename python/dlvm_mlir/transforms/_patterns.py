"""The small vocabulary the dlvm rewrite rules share: matchers, shapes, builders.

Rules read as guard-first code over these helpers::

    neg = producer(op.rhs, dlvm.NegOp)
    if neg is None:
        return None
    return dlvm.add(op.lhs, neg.operand)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlir import ir

from dlvm_mlir.dialects import dlvm

__all__ = [
    "BINARY_OPS",
    "BROADCASTING_OPS",
    "CONSTANT_OPS",
    "constant_attr",
    "keeps_result_shape",
    "rebuilt",
    "with_operands",
    "broadcast_shapes",
    "commuted",
    "element_type",
    "is_float",
    "is_matrix_transpose",
    "is_splat",
    "num_elements",
    "producer",
    "reduction_kind",
    "shape",
    "single_use",
    "splat_like",
    "splat_value",
    "transpose",
    "transpose_perm",
]

BINARY_OPS = (
    dlvm.AddOp,
    dlvm.SubOp,
    dlvm.MulOp,
    dlvm.DivOp,
    dlvm.PowOp,
    dlvm.MinOp,
    dlvm.MaxOp,
    dlvm.ModOp,
    dlvm.FloorDivOp,
    dlvm.TruncDivOp,
    dlvm.AndOp,
    dlvm.OrOp,
    dlvm.CmpOp,
)
"""The elementwise ops with two broadcasting operands (``cmp`` included)."""

BROADCASTING_OPS = (*BINARY_OPS, dlvm.SelectOp)
"""Elementwise ops whose operands all broadcast to the result: BINARY_OPS and ``select``."""


# --------------------------------------------------------------------------
# Matchers
# --------------------------------------------------------------------------


def producer(value: ir.Value, *classes: type[ir.OpView]) -> ir.OpView | None:
    """The op defining ``value`` if it is one of ``classes`` (None for block arguments)."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    view = owner if isinstance(owner, ir.OpView) else owner.opview
    return view if isinstance(view, classes) else None


CONSTANT_OPS = ("dlvm.constant", "arith.constant")
"""The constant-like ops the rules look through (``value`` attribute)."""


def constant_attr(value: ir.Value) -> ir.Attribute | None:
    """The ``value`` attribute of the ``dlvm.constant`` or ``arith.constant`` defining ``value``."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation
    if op.name not in CONSTANT_OPS or "value" not in op.attributes:
        return None
    return op.attributes["value"]


def splat_value(value: ir.Value) -> float | int | None:
    """The element of a splat constant (``dlvm.constant`` or ``arith.constant``; integers
    signed, ``true`` is -1), else None."""
    attr = constant_attr(value)
    if attr is None:
        return None
    if isinstance(attr, (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr)):
        element = attr  # a scalar arith.constant
    elif isinstance(attr, ir.DenseElementsAttr) and ir.DenseElementsAttr(attr).is_splat:
        element = ir.DenseElementsAttr(attr).get_splat_value()
    else:
        return None
    if isinstance(element, ir.FloatAttr):
        return element.value
    if isinstance(element, ir.IntegerAttr):
        return element.value
    if isinstance(element, ir.BoolAttr):
        return -1 if element.value else 0
    return None


def is_splat(value: ir.Value, x: float, *, negative_zero: bool | None = None) -> bool:
    """Whether ``value`` is a splat constant equal to ``x``.

    For ``x == 0`` on floats, ``negative_zero`` selects the sign (None: either);
    an integer zero matches whatever the sign asked for.
    """
    v = splat_value(value)
    if v is None or v != x:
        return False
    if x != 0 or negative_zero is None or not is_float(value):
        return True
    return (math.copysign(1.0, v) < 0) == negative_zero


def single_use(value: ir.Value) -> bool:
    uses = iter(value.uses)
    return next(uses, None) is not None and next(uses, None) is None


def commuted(op: ir.OpView) -> tuple[tuple[ir.Value, ir.Value], tuple[ir.Value, ir.Value]]:
    """Both operand orders of a commutative binary op."""
    return (op.lhs, op.rhs), (op.rhs, op.lhs)


def reduction_kind(op: ir.OpView) -> dlvm.ReductionKind:
    return dlvm.ReductionKind(ir.IntegerAttr(op.attributes["kind"]).value)


def transpose_perm(op: dlvm.TransposeOp) -> list[int]:
    """The permutation of a transpose, the default (reversal) made explicit."""
    rank = len(shape(op.operand))
    if op.perm is None:
        return list(range(rank - 1, -1, -1))
    return list(op.perm)


def is_matrix_transpose(value: ir.Value) -> dlvm.TransposeOp | None:
    """The transpose defining ``value`` if it swaps the two dimensions of a matrix."""
    t = producer(value, dlvm.TransposeOp)
    if t is None or len(shape(t.operand)) != 2 or transpose_perm(t) != [1, 0]:
        return None
    return t


# --------------------------------------------------------------------------
# Types and shapes
# --------------------------------------------------------------------------


def tensor_type(value: ir.Value) -> ir.RankedTensorType:
    return ir.RankedTensorType(value.type)


def shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(tensor_type(value).shape)


def element_type(value: ir.Value) -> ir.Type:
    return tensor_type(value).element_type


def is_float(value: ir.Value) -> bool:
    return isinstance(element_type(value), ir.FloatType)


def num_elements(dims: Sequence[int]) -> int:
    return math.prod(dims)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...] | None:
    """DLVM broadcasting: rank 0 goes anywhere; else equal ranks, each pair equal or 1."""
    ranked = [tuple(s) for s in shapes if len(s) > 0]
    if not ranked:
        return ()
    rank = len(ranked[0])
    if any(len(s) != rank for s in ranked):
        return None
    result = []
    for dims in zip(*ranked):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            return None
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def keeps_result_shape(op: ir.OpView, replaced: dict[int, Sequence[int]]) -> bool:
    """Whether a broadcasting op still has its result shape with operand ``i`` of shape ``replaced[i]``."""
    shapes = [replaced.get(i, shape(v)) for i, v in enumerate(op.operands)]
    return broadcast_shapes(*shapes) == shape(op.result)


# --------------------------------------------------------------------------
# Builders (call them inside a rule: insertion point and location are set)
# --------------------------------------------------------------------------


def splat_like(like: ir.Value | ir.Type, x: float, *, dims: Sequence[int] | None = None) -> ir.Value:
    """A splat ``dlvm.constant`` of ``x`` with the element type of ``like``.

    The shape is ``like``'s, or ``dims`` (``()`` for a rank-0 literal).
    """
    type_ = like.type if isinstance(like, ir.Value) else like
    element = ir.RankedTensorType(type_).element_type
    dims = list(ir.RankedTensorType(type_).shape) if dims is None else list(dims)
    if isinstance(element, ir.FloatType):
        attr = ir.FloatAttr.get(element, float(x))
    elif element.width == 1:
        attr = ir.IntegerAttr.get(element, int(x != 0))
    else:
        attr = ir.IntegerAttr.get(element, int(x))
    return dlvm.constant(ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get(dims, element), attr))


def with_operands(op: ir.OpView, operands: dict[int, ir.Value]) -> ir.Value:
    """A copy of single-result ``op`` (same attributes and result type) with some operands replaced."""
    copy = op.operation.clone()
    for index, value in operands.items():
        copy.operands[index] = value
    return copy.result


def rebuilt(op: ir.OpView, operands: Sequence[ir.Value], result_type: ir.Type) -> ir.Value:
    """A new op like single-result ``op`` (same name and attributes) on other operands and result type."""
    attributes = {name: op.attributes[name] for name in op.attributes}
    return ir.Operation.create(op.name, results=[result_type], operands=list(operands), attributes=attributes).result


def transpose(value: ir.Value, perm: Sequence[int]) -> ir.Value:
    """``dlvm.transpose`` by ``perm``, written without ``perm`` when it is the default reversal."""
    perm = list(perm)
    if perm == list(range(len(perm) - 1, -1, -1)):
        return dlvm.transpose(value)
    return dlvm.transpose(value, perm=perm)
