"""Rule shapes shared by the per-dialect rule files.

Most ops fall into a few shapes, each registered from one formula for both
modes:

- ``elementwise_unary(name, d)``: ``d(x, y, g)`` is linear in ``g`` and
  multiplies it by the derivative at ``x``; the adjoint is ``d(x, y, g)`` and
  the tangent ``d(x, y, dx)``.
- ``elementwise_binary(name, dlhs, drhs)``: same per operand, with
  ``d(x, y, z, g)``; adjoints are summed back over broadcast dimensions.
- ``linear_tangent`` / ``multilinear_tangent``: the tangent of an op that is
  linear (jointly, or in each operand separately) is the op itself applied to
  tangents.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.registry import adjoint, tangent

__all__ = [
    "attr_int",
    "attr_ints",
    "elementwise_binary",
    "elementwise_unary",
    "enum_name",
    "linear_tangent",
    "multilinear_tangent",
]

UnaryD = Callable[[ir.Value, ir.Value, ir.Value], ir.Value]
BinaryD = Callable[[ir.Value, ir.Value, ir.Value, ir.Value], ir.Value]


def elementwise_unary(name: str, d: UnaryD) -> None:
    @adjoint(name)
    def _adjoint(r) -> None:
        r.accumulate(0, d(r.x(0), r.y(0), r.g))

    @tangent(name)
    def _tangent(t) -> None:
        t.set(0, d(t.x(0), t.y(0), t.dx(0)))


def elementwise_binary(name: str, dlhs: BinaryD | None, drhs: BinaryD | None) -> None:
    """``None`` for an operand the op is not differentiable in (it must be inactive)."""
    partials = (dlhs, drhs)

    @adjoint(name)
    def _adjoint(r) -> None:
        x, y, z, g = r.x(0), r.x(1), r.y(0), r.g
        for i, d in enumerate(partials):
            if r.wants(i):
                if d is None:
                    raise r.fail(f"with respect to operand #{i}")
                r.accumulate(i, vocab.sum_to(d(x, y, z, g), r.x(i).type))

    @tangent(name)
    def _tangent(t) -> None:
        x, y, z = t.x(0), t.x(1), t.y(0)
        terms = []
        for i, d in enumerate(partials):
            dt = t.dx(i)
            if dt is None:
                continue
            if d is None:
                raise t.fail(f"with respect to operand #{i}")
            terms.append(vocab.broadcast_to(d(x, y, z, dt), vocab.shape(z)) if vocab.is_tensor(z) else d(x, y, z, dt))
        t.set(0, vocab.add_all(terms))


def linear_tangent(t) -> None:
    """The op applied to the operands' tangents (zeros for inactive float operands)."""
    operands = [
        _tangent_or_zeros(t, i) if vocab.is_float(v.type) else t.x(i) for i, v in enumerate(t.operation.operands)
    ]
    results = t.reapply(operands)
    for i, result in enumerate(results):
        if vocab.is_float(result.type):
            t.set(i, result)


def multilinear_tangent(t) -> None:
    """Sum over active operands i of the op with operand i replaced by its tangent."""
    base = [t.x(i) for i in range(len(t.operation.operands))]
    terms: list[ir.Value] = []
    for i in range(len(base)):
        dt = t.dx(i)
        if dt is None:
            continue
        operands = list(base)
        operands[i] = dt
        terms.append(t.reapply(operands)[0])
    t.set(0, vocab.add_all(terms))


def _tangent_or_zeros(t, i: int) -> ir.Value:
    dt = t.dx(i)
    return dt if dt is not None else vocab.zeros_like(t.x(i))


def attr_ints(op, name: str) -> list[int] | None:
    """A DenseI64ArrayAttr attribute as a list (None when absent)."""
    attrs = op.operation.attributes
    if name not in attrs:
        return None
    return list(ir.DenseI64ArrayAttr(attrs[name]))


def attr_int(op, name: str, default: int | None = None) -> int | None:
    attrs = op.operation.attributes
    if name not in attrs:
        return default
    return ir.IntegerAttr(attrs[name]).value


def enum_name(op, name: str, enum) -> str:
    return str(enum(ir.IntegerAttr(op.operation.attributes[name]).value))
