"""Derivative rules of the arith dialect (float scalars and float tensors, no broadcasting).

Integer arithmetic, comparisons, constants and int<->float conversions carry
no derivative: their results are integers or do not depend on a float input.
"""

from __future__ import annotations

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.registry import adjoint, inactive, tangent
from dlvm_mlir.ad.rules.common import elementwise_binary, elementwise_unary, linear_tangent
from dlvm_mlir.ad.vocab import div, mul, neg, select

inactive(
    [
        "arith.constant",
        "arith.cmpf",
        "arith.cmpi",
        "arith.sitofp",
        "arith.uitofp",
        "arith.fptosi",
        "arith.fptoui",
        "arith.bitcast",
        "arith.index_cast",
        "arith.index_castui",
    ]
)

elementwise_unary("arith.negf", lambda x, y, g: neg(g))

elementwise_binary("arith.addf", lambda x, y, z, g: g, lambda x, y, z, g: g)
elementwise_binary("arith.subf", lambda x, y, z, g: g, lambda x, y, z, g: neg(g))
elementwise_binary("arith.mulf", lambda x, y, z, g: mul(g, y), lambda x, y, z, g: mul(g, x))
elementwise_binary("arith.divf", lambda x, y, z, g: div(g, y), lambda x, y, z, g: neg(div(mul(g, z), y)))
# As dlvm.max/min (JAX's rule): the operand equal to the result gets g, each
# g / 2 at a tie (maxnumf(NaN, y) = y gives y all of it).
for _name in ("arith.maximumf", "arith.maxnumf", "arith.minimumf", "arith.minnumf"):
    elementwise_binary(
        _name,
        lambda x, y, z, g: vocab.extremum_derivative(x, y, z, g),
        lambda x, y, z, g: vocab.extremum_derivative(y, x, z, g),
    )


def _trunc(v):
    """trunc(v) = sign(v) * floor(|v|)."""
    return mul(vocab.sign(v), vocab.floor(vocab.abs_(v)))


# remf: x - trunc(x / y) * y (the result has the sign of x).
elementwise_binary("arith.remf", lambda x, y, z, g: g, lambda x, y, z, g: neg(mul(g, _trunc(div(x, y)))))


@adjoint("arith.select")
def _select(r) -> None:
    mask, g = r.x(0), r.g
    if r.wants(1):
        r.accumulate(1, select(mask, g, 0.0))
    if r.wants(2):
        r.accumulate(2, select(mask, 0.0, g))


@adjoint("arith.extf", "arith.truncf")
def _float_cast(r) -> None:
    r.accumulate(0, vocab.cast(r.g, vocab.element_type(r.x(0))))


for _name in ("arith.select", "arith.extf", "arith.truncf"):
    tangent(_name)(linear_tangent)
