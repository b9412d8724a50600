"""Elementwise ATen ops: unary math, binary arithmetic, comparisons, ``where``, ``clamp``.

PyTorch promotes operand types (``int + float`` is float, a Python float
times an f16 tensor is f16); NNKit's elementwise ops take one element type.
Each rule computes in the type PyTorch computes in: the node's result type
for arithmetic, ``torch.result_type`` of the operands for comparisons.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

import dlvm_mlir.nnkit as dl

from . import dtype, meta, out_dtype, rule

aten = torch.ops.aten


def _operands(compute: dl.DType, *values: Any) -> list[dl.Tensor]:
    """Tensors cast to ``compute``; Python scalars as rank-0 constants of it."""
    lifted = []
    for value in values:
        if isinstance(value, dl.Tensor):
            lifted.append(value if value.dtype == compute else dl.cast(value, compute))
        else:
            lifted.append(dl.constant(value, compute))
    return lifted


def _promoted(node: torch.fx.Node, a: Any, b: Any) -> dl.DType:
    """The type PyTorch compares ``a`` and ``b`` in."""
    return dtype(torch.result_type(meta(node.args[0]), meta(node.args[1])))


_UNARY = {
    aten.relu.default: dl.relu,
    aten.neg.default: dl.neg,
    aten.exp.default: dl.exp,
    aten.exp2.default: dl.exp2,
    aten.expm1.default: dl.expm1,
    aten.log.default: dl.log,
    aten.log2.default: dl.log2,
    aten.log10.default: dl.log10,
    aten.log1p.default: dl.log1p,
    aten.tanh.default: dl.tanh,
    aten.sigmoid.default: dl.sigmoid,
    aten.sqrt.default: dl.sqrt,
    aten.rsqrt.default: dl.rsqrt,
    aten.abs.default: dl.abs,
    aten.sign.default: dl.sign,
    aten.sin.default: dl.sin,
    aten.cos.default: dl.cos,
    aten.tan.default: dl.tan,
    aten.asin.default: dl.asin,
    aten.acos.default: dl.acos,
    aten.atan.default: dl.atan,
    aten.sinh.default: dl.sinh,
    aten.cosh.default: dl.cosh,
    aten.asinh.default: dl.arcsinh,
    aten.acosh.default: dl.arccosh,
    aten.atanh.default: dl.arctanh,
    aten.erf.default: dl.erf,
    aten.erfc.default: dl.erfc,
    aten.lgamma.default: dl.lgamma,
    aten.digamma.default: dl.digamma,
    aten.floor.default: dl.floor,
    aten.ceil.default: dl.ceil,
    aten.round.default: dl.rint,  # torch.round: halfway cases to even
    aten.isfinite.default: dl.isfinite,
}


def _unary(node: torch.fx.Node, x: dl.Tensor) -> dl.Tensor:
    compute = out_dtype(node)
    if not compute.is_float:  # sign/abs/neg of integers; isfinite's bool result
        compute = x.dtype
    (x,) = _operands(compute, x)
    return _UNARY[node.target](x)


rule(*_UNARY)(_unary)


@rule(aten.logical_not.default, aten.bitwise_not.default)
def _not(node: torch.fx.Node, x: dl.Tensor) -> dl.Tensor:
    if node.target is aten.logical_not.default and not x.dtype.is_bool:
        x = dl.not_equal(x, dl.constant(0, x.dtype))
    return dl.logical_not(x)


@rule(aten.reciprocal.default)
def _reciprocal(node: torch.fx.Node, x: dl.Tensor) -> dl.Tensor:
    (x,) = _operands(out_dtype(node), x)
    return dl.div(dl.constant(1, x.dtype), x)


@rule(aten.trunc.default)
def _trunc(node: torch.fx.Node, x: dl.Tensor) -> dl.Tensor:
    return dl.where(dl.less(x, dl.constant(0, x.dtype)), dl.ceil(x), dl.floor(x))


@rule(aten.gelu.default)
def _gelu(node: torch.fx.Node, x: dl.Tensor, approximate: str = "none") -> dl.Tensor:
    half = dl.constant(0.5, x.dtype)
    if approximate == "tanh":
        inner = dl.mul(dl.constant(0.7978845608028654, x.dtype), x + dl.constant(0.044715, x.dtype) * x * x * x)
        return half * x * (dl.constant(1, x.dtype) + dl.tanh(inner))
    return half * x * (dl.constant(1, x.dtype) + dl.erf(x * dl.constant(0.7071067811865476, x.dtype)))


@rule(aten.hardtanh.default)
def _hardtanh(node: torch.fx.Node, x: dl.Tensor, low: float = -1.0, high: float = 1.0) -> dl.Tensor:
    return dl.clip(x, dl.constant(low, x.dtype), dl.constant(high, x.dtype))


@rule(aten.leaky_relu.default)
def _leaky_relu(node: torch.fx.Node, x: dl.Tensor, slope: float = 0.01) -> dl.Tensor:
    zero = dl.constant(0, x.dtype)
    return dl.where(dl.greater(x, zero), x, x * dl.constant(slope, x.dtype))


@rule(aten.elu.default)
def _elu(node: torch.fx.Node, x: dl.Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> dl.Tensor:
    zero = dl.constant(0, x.dtype)
    negative = dl.constant(alpha, x.dtype) * dl.expm1(x * dl.constant(input_scale, x.dtype))
    return dl.constant(scale, x.dtype) * dl.where(dl.greater(x, zero), x, negative)


# -- binary ------------------------------------------------------------------------


def _scaled(b: Any, alpha: Any) -> Any:
    return b if alpha == 1 else (b * alpha if not isinstance(b, dl.Tensor) else b * dl.constant(alpha, b.dtype))


@rule(aten.add.Tensor, aten.add.Scalar)
def _add(node: torch.fx.Node, a: Any, b: Any, alpha: Any = 1) -> dl.Tensor:
    x, y = _operands(out_dtype(node), a, b)
    return dl.add(x, _scaled(y, alpha))


@rule(aten.sub.Tensor, aten.sub.Scalar)
def _sub(node: torch.fx.Node, a: Any, b: Any, alpha: Any = 1) -> dl.Tensor:
    x, y = _operands(out_dtype(node), a, b)
    return dl.sub(x, _scaled(y, alpha))


@rule(aten.mul.Tensor, aten.mul.Scalar)
def _mul(node: torch.fx.Node, a: Any, b: Any) -> dl.Tensor:
    compute = out_dtype(node)
    x, y = _operands(compute, a, b)
    return dl.logical_and(x, y) if compute.is_bool else dl.mul(x, y)


@rule(aten.div.Tensor, aten.div.Scalar)
def _div(node: torch.fx.Node, a: Any, b: Any) -> dl.Tensor:
    x, y = _operands(out_dtype(node), a, b)
    return dl.div(x, y)


@rule(aten.div.Tensor_mode, aten.div.Scalar_mode)
def _div_mode(node: torch.fx.Node, a: Any, b: Any, rounding_mode: str | None = None) -> dl.Tensor:
    x, y = _operands(out_dtype(node), a, b)
    if rounding_mode is None:
        return dl.div(x, y)
    if x.dtype.is_float:
        quotient = dl.div(x, y)
        return dl.floor(quotient) if rounding_mode == "floor" else _trunc(node, quotient)
    return dl.floor_div(x, y) if rounding_mode == "floor" else dl.trunc_div(x, y)


@rule(aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, aten.pow.Scalar)
def _pow(node: torch.fx.Node, a: Any, b: Any) -> dl.Tensor:
    compute = out_dtype(node)
    if node.target is aten.pow.Tensor_Scalar and b == 2:
        (x,) = _operands(compute, a)
        return dl.square(x)
    if node.target is aten.pow.Tensor_Scalar and b == 0.5 and compute.is_float:
        (x,) = _operands(compute, a)
        return dl.sqrt(x)
    x, y = _operands(compute, a, b)
    return dl.pow(x, y)


def _binary(op: Any) -> Any:
    def build(node: torch.fx.Node, a: Any, b: Any) -> dl.Tensor:
        x, y = _operands(out_dtype(node), a, b)
        return op(x, y)

    return build


rule(aten.maximum.default)(_binary(dl.maximum))
rule(aten.minimum.default)(_binary(dl.minimum))
rule(aten.remainder.Tensor, aten.remainder.Scalar)(_binary(dl.mod))  # Python's %: the sign of the divisor
rule(aten.fmod.Tensor, aten.fmod.Scalar)(_binary(dl.remainder))  # C's fmod: the sign of the dividend
rule(aten.atan2.default)(_binary(dl.arctan2))
rule(aten.bitwise_and.Tensor, aten.bitwise_and.Scalar)(_binary(dl.logical_and))  # bitwise on integers
rule(aten.bitwise_or.Tensor, aten.bitwise_or.Scalar)(_binary(dl.logical_or))
rule(aten.bitwise_xor.Tensor, aten.bitwise_xor.Scalar)(_binary(dl.logical_xor))


def _bool_operands(node: torch.fx.Node, a: Any, b: Any) -> list[dl.Tensor]:
    """logical_and/or/xor of non-bool tensors: their truth values."""
    out = []
    for value in _operands(_promoted(node, a, b), a, b):
        out.append(value if value.dtype.is_bool else dl.not_equal(value, dl.constant(0, value.dtype)))
    return out


for _target, _op in (
    (aten.logical_and.default, dl.logical_and),
    (aten.logical_or.default, dl.logical_or),
    (aten.logical_xor.default, dl.logical_xor),
):
    rule(_target)(lambda node, a, b, _op=_op: _op(*_bool_operands(node, a, b)))


_COMPARISONS = {
    "eq": dl.equal,
    "ne": dl.not_equal,
    "lt": dl.less,
    "le": dl.less_equal,
    "gt": dl.greater,
    "ge": dl.greater_equal,
}

for _name, _cmp in _COMPARISONS.items():
    _overloads = [getattr(aten, _name).Tensor, getattr(aten, _name).Scalar]
    rule(*_overloads)(lambda node, a, b, _cmp=_cmp: _cmp(*_operands(_promoted(node, a, b), a, b)))


@rule(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(node: torch.fx.Node, condition: Any, a: Any, b: Any) -> dl.Tensor:
    x, y = _operands(out_dtype(node), a, b)
    if not condition.dtype.is_bool:
        condition = dl.not_equal(condition, dl.constant(0, condition.dtype))
    return dl.where(condition, x, y)


@rule(aten.clamp.default, aten.clamp.Tensor)
def _clamp(node: torch.fx.Node, x: dl.Tensor, low: Any = None, high: Any = None) -> dl.Tensor:
    compute = out_dtype(node)
    (x,) = _operands(compute, x)
    if low is not None:
        x = dl.maximum(x, _operands(compute, low)[0])
    if high is not None:
        x = dl.minimum(x, _operands(compute, high)[0])
    return x
