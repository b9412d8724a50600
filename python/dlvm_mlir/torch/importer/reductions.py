"""Reductions: ``sum``, ``mean``, ``prod``, ``amax``/``amin``, ``max``/``min`` along a dim,
``argmax``/``argmin``, ``any``/``all``, ``var``/``var_mean`` (Bessel's correction),
``_softmax``/``_log_softmax``, ``cumsum``/``cumprod``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.fx

import dlvm_mlir.nnkit as dl

from . import out_dtype, rule

aten = torch.ops.aten


def _dims(x: dl.Tensor, dim: Any) -> tuple[int, ...]:
    """PyTorch's dim argument (None or [] means every dim) as non-negative axes."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(x.ndim))
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    return tuple(sorted({int(d) % max(x.ndim, 1) for d in dims}))


def _reduce(kind: str, node: torch.fx.Node, x: dl.Tensor, dim: Any, keepdim: bool) -> dl.Tensor:
    axes = _dims(x, dim)
    if x.ndim == 0:
        return x
    compute = out_dtype(node)
    if x.dtype != compute:
        x = dl.cast(x, compute)
    return dl.reduce(kind, x, axes, keepdims=keepdim)


@rule(aten.sum.dim_IntList, aten.sum.default)
def _sum(node: torch.fx.Node, x: dl.Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> dl.Tensor:
    return _reduce("sum", node, x, dim, keepdim)


@rule(aten.mean.dim, aten.mean.default)
def _mean(node: torch.fx.Node, x: dl.Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> dl.Tensor:
    return _reduce("mean", node, x, dim, keepdim)


@rule(aten.prod.dim_int, aten.prod.default)
def _prod(node: torch.fx.Node, x: dl.Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> dl.Tensor:
    return _reduce("prod", node, x, dim, keepdim)


@rule(aten.amax.default)
def _amax(node: torch.fx.Node, x: dl.Tensor, dim: Any = (), keepdim: bool = False) -> dl.Tensor:
    return _reduce("max", node, x, dim, keepdim)


@rule(aten.amin.default)
def _amin(node: torch.fx.Node, x: dl.Tensor, dim: Any = (), keepdim: bool = False) -> dl.Tensor:
    return _reduce("min", node, x, dim, keepdim)


@rule(aten.any.dim, aten.any.dims, aten.any.default)
def _any(node: torch.fx.Node, x: dl.Tensor, dim: Any = None, keepdim: bool = False) -> dl.Tensor:
    if not x.dtype.is_bool:
        x = dl.not_equal(x, dl.constant(0, x.dtype))
    return _reduce("any", node, x, dim, keepdim)


@rule(aten.all.dim, aten.all.dims, aten.all.default)
def _all(node: torch.fx.Node, x: dl.Tensor, dim: Any = None, keepdim: bool = False) -> dl.Tensor:
    if not x.dtype.is_bool:
        x = dl.not_equal(x, dl.constant(0, x.dtype))
    return _reduce("all", node, x, dim, keepdim)


def _arg(op: Any) -> Any:
    def build(node: torch.fx.Node, x: dl.Tensor, dim: Any = None, keepdim: bool = False) -> dl.Tensor:
        if dim is None:
            x, dim = dl.reshape(x, [-1]), 0
        if x.ndim == 0:
            return dl.constant(0, dl.i64)
        index = op(x, axis=int(dim) % x.ndim, dtype=dl.i64)
        if keepdim:
            index = dl.expand_dims(index, int(dim) % x.ndim)
        return index

    return build


rule(aten.argmax.default)(_arg(dl.argmax))
rule(aten.argmin.default)(_arg(dl.argmin))


@rule(aten.max.dim, aten.min.dim)
def _max_dim(node: torch.fx.Node, x: dl.Tensor, dim: int, keepdim: bool = False) -> tuple[dl.Tensor, dl.Tensor]:
    largest = node.target is aten.max.dim
    values = dl.reduce("max" if largest else "min", x, (int(dim) % x.ndim,), keepdims=keepdim)
    indices = _arg(dl.argmax if largest else dl.argmin)(node, x, dim, keepdim)
    return values, indices


def _variance(x: dl.Tensor, dims: Sequence[int], correction: float, keepdim: bool) -> tuple[dl.Tensor, dl.Tensor]:
    mean = dl.reduce_mean(x, axis=tuple(dims), keepdims=True)
    count = 1
    for d in dims:
        count *= x.shape[d]
    squares = dl.reduce_sum(dl.square(x - mean), axis=tuple(dims), keepdims=keepdim)
    var = squares / dl.constant(max(count - correction, 0), x.dtype)
    return var, mean if keepdim else dl.reshape(mean, list(var.shape))


@rule(aten.var_mean.correction, aten.var.correction)
def _var_mean(node: torch.fx.Node, x: dl.Tensor, dim: Any = None, correction: Any = None,
              keepdim: bool = False) -> Any:
    var, mean = _variance(x, _dims(x, dim), 1.0 if correction is None else float(correction), keepdim)
    return (var, mean) if node.target is aten.var_mean.correction else var


@rule(aten._softmax.default)
def _softmax(node: torch.fx.Node, x: dl.Tensor, dim: int, half_to_float: bool = False) -> dl.Tensor:
    return dl.softmax(x, axis=int(dim) % max(x.ndim, 1)) if x.ndim else dl.ones_like(x)


@rule(aten._log_softmax.default)
def _log_softmax(node: torch.fx.Node, x: dl.Tensor, dim: int, half_to_float: bool = False) -> dl.Tensor:
    return dl.log_softmax(x, axis=int(dim) % max(x.ndim, 1)) if x.ndim else dl.zeros_like(x)


@rule(aten.cumsum.default)
def _cumsum(node: torch.fx.Node, x: dl.Tensor, dim: int, dtype: Any = None) -> dl.Tensor:
    compute = out_dtype(node)
    x = x if x.dtype == compute else dl.cast(x, compute)
    return dl.cumsum(x, axis=int(dim) % max(x.ndim, 1)) if x.ndim else x


@rule(aten.cumprod.default)
def _cumprod(node: torch.fx.Node, x: dl.Tensor, dim: int, dtype: Any = None) -> dl.Tensor:
    compute = out_dtype(node)
    x = x if x.dtype == compute else dl.cast(x, compute)
    return dl.cumprod(x, axis=int(dim) % max(x.ndim, 1)) if x.ndim else x
