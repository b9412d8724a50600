"""Contractions: ``dot_general`` and ``conv_general_dilated``."""

from __future__ import annotations

from typing import Any

import dlvm_mlir.nnkit as dl
from dlvm_mlir.nnkit import Tensor

from .importer import Unsupported, aval_dtype, register


def _operands(eqn: Any, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Both operands in the result's element type (``preferred_element_type``: int8 x int8 ->
    int32, or mixed operand types), so that NNKit contracts in that type."""
    out = aval_dtype(eqn.outvars[0])
    return (a if a.dtype == out else dl.cast(a, out)), (b if b.dtype == out else dl.cast(b, out))


@register("linalg", "dot_general")
def _dot_general(eqn: Any, a: Tensor, b: Tensor) -> Tensor:
    a, b = _operands(eqn, a, b)
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    return dl.dot_general(a, b, ((list(lc), list(rc)), (list(lb), list(rb))))


def _inverse(perm: list[int]) -> list[int]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return out


def _transposed(x: Tensor, perm: list[int]) -> Tensor:
    return x if perm == list(range(x.ndim)) else dl.transpose(x, perm)


@register("linalg", "conv_general_dilated")
def _conv(eqn: Any, x: Tensor, k: Tensor) -> Tensor:
    """``dl.convolve`` (NC... input, OI... kernel) between transposes to and from the
    dimension numbers' layouts."""
    p = eqn.params
    if int(p.get("batch_group_count", 1)) != 1:
        raise Unsupported("batch_group_count > 1 (the kernel gradient of a grouped convolution)")
    x, k = _operands(eqn, x, k)
    numbers = p["dimension_numbers"]
    lhs, rhs, out = (list(s) for s in (numbers.lhs_spec, numbers.rhs_spec, numbers.out_spec))
    y = dl.convolve(
        _transposed(x, lhs),
        _transposed(k, rhs),
        strides=list(p["window_strides"]),
        padding=[(int(lo), int(hi)) for lo, hi in p["padding"]],
        lhs_dilation=list(p["lhs_dilation"]),
        rhs_dilation=list(p["rhs_dilation"]),
        groups=int(p.get("feature_group_count", 1)),
    )
    return _transposed(y, _inverse(out))
