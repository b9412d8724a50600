"""Helpers shared by the CPU back end's rewrites of linalg ops (packing, reduction splitting)."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import structured

from .analysis import ops_where  # noqa: F401  (re-exported: the rewrites' walk)
from .schedule import run_transform_script

__all__ = ["affine_maps", "defining_op", "dense_ints", "generalize_tagged", "iterator_types", "map_dims", "ops_where",
           "rebind_operands", "reassociation", "result_linalg_ops", "zero_constant", "zero_fill"]


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The operation that defines ``value``, or None for a block argument."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def constant_index(value: ir.Value) -> int | None:
    """The value of an ``index``-typed ``arith.constant``, or None."""
    op = defining_op(value)
    if op is None or op.name != "arith.constant" or not isinstance(value.type, ir.IndexType):
        return None
    return ir.IntegerAttr(op.attributes["value"]).value


def rebind_operands(root: ir.Operation, mapping: dict[ir.Value, ir.Value]) -> None:
    """Every operand of an op nested in ``root`` that is a key of ``mapping`` becomes its value."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        for i, operand in enumerate(op.operands):
            if operand in mapping:
                op.operands[i] = mapping[operand]
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)


def zero_constant(value: ir.Value) -> bool:
    """Is ``value`` an ``arith.constant`` zero (float or integer)?"""
    op = defining_op(value)
    if op is None or op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    return ((isinstance(attr, ir.FloatAttr) and ir.FloatAttr(attr).value == 0.0)
            or (isinstance(attr, ir.IntegerAttr) and ir.IntegerAttr(attr).value == 0))


def zero_fill(value: ir.Value) -> bool:
    """Is ``value`` a ``linalg.fill`` of zero?"""
    owner = defining_op(value)
    return owner is not None and owner.name == "linalg.fill" and zero_constant(owner.operands[0])


def dense_ints(attr: ir.Attribute) -> list[int]:
    """The values of a dense integer attribute (a linalg convolution's strides, dilations)."""
    return [int(v) for v in ir.DenseIntElementsAttr(attr)]


def affine_maps(*maps: ir.AffineMap) -> ir.ArrayAttr:
    """``indexing_maps`` of a ``linalg.generic``."""
    return ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def result_linalg_ops(module: ir.Module) -> list[ir.Operation]:
    """The linalg ops with one result, in pre-order.

    Generalization keeps their order but drops discardable attributes, so a
    rewrite that generalizes tagged ops finds them again by position here.
    """
    ops: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("linalg.") and len(op.results) == 1:
            ops.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ops


def generalize_tagged(module: ir.Module, tag: str) -> None:
    """Turn every linalg op carrying the unit attribute ``tag`` into a ``linalg.generic``."""

    def body(root: ir.Value) -> None:
        any_op = transform.AnyOpType.get()
        ops = structured.MatchOp(any_op, root, op_attrs=ir.DictAttr.get({tag: ir.UnitAttr.get()})).result
        structured.GeneralizeOp(ops)

    run_transform_script(module, body)


def reassociation(groups: list[list[int]]) -> ir.ArrayAttr:
    """The reassociation attribute of ``tensor.expand_shape``/``collapse_shape``."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def iterator_types(kinds: list[str]) -> ir.ArrayAttr:
    """The ``iterator_types`` attribute of a ``linalg.generic`` ("parallel", "reduction")."""
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def map_dims(amap: ir.AffineMap) -> list[int] | None:
    """The loop dimensions an indexing map reads, in order (None unless every result is a plain dim)."""
    positions = []
    for expr in amap.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        positions.append(expr.position)
    return positions
