"""Derivative rules of the tensor dialect: element and slice access, packing, reshapes.

All these ops are linear in their float operands, so every tangent is the op
applied to tangents; each adjoint moves the adjoint back to where the value
came from (an extract's adjoint is an insert into zeros, and so on).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.registry import adjoint, inactive, tangent
from dlvm_mlir.ad.rules.common import linear_tangent

inactive(["tensor.empty", "tensor.dim", "tensor.rank"])

_SLICE_ATTRS = ("static_offsets", "static_sizes", "static_strides")


@adjoint("tensor.extract")
def _extract(r) -> None:
    indices = [r.x(i) for i in range(1, len(r.operation.operands))]
    r.accumulate(0, tensor.InsertOp(r.g, vocab.zeros_like(r.x(0)), indices).result)


@adjoint("tensor.insert")
def _insert(r) -> None:
    g = r.g
    indices = [r.x(i) for i in range(2, len(r.operation.operands))]
    if r.wants(0):
        r.accumulate(0, tensor.ExtractOp(g, indices).result)
    if r.wants(1):
        r.accumulate(1, tensor.InsertOp(vocab.zeros(r.x(0).type), g, indices).result)


def _slice_parameters(r, first: int) -> tuple[list[ir.Value], dict[str, ir.Attribute], list[int]]:
    """The dynamic offsets/sizes/strides (forward values), static attributes and segment sizes."""
    attrs = r.operation.attributes
    segments = list(ir.DenseI32ArrayAttr(attrs["operandSegmentSizes"]))[-3:]
    dynamic = [r.x(i) for i in range(first, len(r.operation.operands))]
    return dynamic, {name: attrs[name] for name in _SLICE_ATTRS}, segments


def _insert_slice(source: ir.Value, dest: ir.Value, r, first: int) -> ir.Value:
    dynamic, attrs, segments = _slice_parameters(r, first)
    attrs = dict(attrs, operandSegmentSizes=ir.DenseI32ArrayAttr.get([1, 1, *segments]))
    return vocab.create("tensor.insert_slice", [dest.type], [source, dest, *dynamic], attrs)


def _extract_slice(source: ir.Value, result_type: ir.Type, r, first: int) -> ir.Value:
    dynamic, attrs, segments = _slice_parameters(r, first)
    attrs = dict(attrs, operandSegmentSizes=ir.DenseI32ArrayAttr.get([1, *segments]))
    return vocab.create("tensor.extract_slice", [result_type], [source, *dynamic], attrs)


@adjoint("tensor.extract_slice")
def _extract_slice_adjoint(r) -> None:
    r.accumulate(0, _insert_slice(r.g, vocab.zeros_like(r.x(0)), r, 1))


@adjoint("tensor.insert_slice")
def _insert_slice_adjoint(r) -> None:
    g = r.g
    if r.wants(0):
        r.accumulate(0, _extract_slice(g, r.x(0).type, r, 2))
    if r.wants(1):
        r.accumulate(1, _insert_slice(vocab.zeros_like(r.x(0)), g, r, 2))


@adjoint("tensor.from_elements")
def _from_elements(r) -> None:
    g = r.g
    dims = vocab.shape(g)
    for i in range(len(r.operation.operands)):
        if r.wants(i):
            position = [vocab.index(p) for p in _unravel(i, dims)]
            r.accumulate(i, tensor.ExtractOp(g, position).result)


def _unravel(flat: int, dims: list[int]) -> list[int]:
    position = []
    for n in reversed(dims):
        position.append(flat % n)
        flat //= n
    return list(reversed(position))


@adjoint("tensor.splat")
def _splat(r) -> None:
    r.accumulate(0, tensor.ExtractOp(vocab.sum_all(r.g), []).result)


@adjoint("tensor.cast")
def _cast(r) -> None:
    r.accumulate(0, tensor.CastOp(r.x(0).type, r.g).result)


@adjoint("tensor.collapse_shape", "tensor.expand_shape")
def _reshape(r) -> None:
    source = r.x(0)
    if not ir.RankedTensorType(source.type).has_static_shape:
        raise r.fail("with a dynamic shape")
    r.accumulate(0, vocab.reshape(r.g, vocab.shape(source)))


@adjoint("tensor.concat")
def _concat(r) -> None:
    axis = ir.IntegerAttr(r.operation.attributes["dim"]).value
    g = r.g
    offset = 0
    for i, operand in enumerate(r.operation.operands):
        dims = vocab.shape(operand)
        if r.wants(i):
            offsets = [offset if d == axis else 0 for d in range(len(dims))]
            r.accumulate(i, vocab.extract_from(g, operand.type, offsets, dims))
        offset += dims[axis]


for _name in (
    "tensor.extract",
    "tensor.insert",
    "tensor.extract_slice",
    "tensor.insert_slice",
    "tensor.from_elements",
    "tensor.splat",
    "tensor.cast",
    "tensor.collapse_shape",
    "tensor.expand_shape",
    "tensor.concat",
):
    tangent(_name)(linear_tangent)
