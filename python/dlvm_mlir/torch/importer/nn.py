"""Neural-network ops and indexing: ``native_layer_norm``, ``native_group_norm``,
``gather``, ``index_select``, ``embedding``, ``index.Tensor`` (advanced indexing
with integer tensors), ``sort``, ``topk``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.fx

import dlvm_mlir.nnkit as dl

from . import meta, rule

aten = torch.ops.aten


def _normalize(x: dl.Tensor, axes: tuple[int, ...], eps: float) -> tuple[dl.Tensor, dl.Tensor, dl.Tensor]:
    """(x - mean) * rstd over ``axes`` (biased variance, as PyTorch's norms), with mean and rstd kept."""
    mean = dl.reduce_mean(x, axis=axes, keepdims=True)
    centered = x - mean
    var = dl.reduce_mean(dl.square(centered), axis=axes, keepdims=True)
    rstd = dl.rsqrt(var + dl.constant(eps, x.dtype))
    return centered * rstd, mean, rstd


@rule(aten.native_layer_norm.default)
def _layer_norm(node: torch.fx.Node, x: dl.Tensor, shape: Sequence[int], weight: Any, bias: Any,
                eps: float) -> tuple[dl.Tensor, dl.Tensor, dl.Tensor]:
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y, mean, rstd = _normalize(x, axes, float(eps))
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y, mean, rstd


@rule(aten.native_group_norm.default)
def _group_norm(node: torch.fx.Node, x: dl.Tensor, weight: Any, bias: Any, n: int, c: int, hw: int,
                groups: int, eps: float) -> tuple[dl.Tensor, dl.Tensor, dl.Tensor]:
    grouped = dl.reshape(x, [int(n), int(groups), -1])
    y, mean, rstd = _normalize(grouped, (2,), float(eps))
    y = dl.reshape(y, list(x.shape))
    channel = [1, int(c)] + [1] * (x.ndim - 2)
    if weight is not None:
        y = y * dl.reshape(weight, channel)
    if bias is not None:
        y = y + dl.reshape(bias, channel)
    return y, dl.reshape(mean, [int(n), int(groups)]), dl.reshape(rstd, [int(n), int(groups)])


@rule(aten.gather.default)
def _gather(node: torch.fx.Node, x: dl.Tensor, dim: int, index: dl.Tensor, sparse_grad: bool = False) -> dl.Tensor:
    if x.ndim == 0:
        return x
    return dl.take_along_axis(x, index, int(dim) % x.ndim)


@rule(aten.index_select.default)
def _index_select(node: torch.fx.Node, x: dl.Tensor, dim: int, index: dl.Tensor) -> dl.Tensor:
    return dl.take(x, index, axis=int(dim) % max(x.ndim, 1))


@rule(aten.embedding.default)
def _embedding(node: torch.fx.Node, weight: dl.Tensor, indices: dl.Tensor, *args: Any) -> dl.Tensor:
    return dl.take(weight, indices, axis=0)


def _integer_indices(node: torch.fx.Node) -> str | None:
    for index in node.args[1]:
        if index is not None and not meta(index).dtype.is_floating_point and meta(index).dtype == torch.bool:
            return "indexing with a boolean mask (its result's shape depends on the data)"
    return None


@rule(aten.index.Tensor, check=_integer_indices)
def _index(node: torch.fx.Node, x: dl.Tensor, indices: Sequence[Any]) -> dl.Tensor:
    key = tuple(slice(None) if index is None else index for index in indices)
    return x[key]


@rule(aten.sort.default, aten.sort.stable)
def _sort(node: torch.fx.Node, x: dl.Tensor, *args: Any, **kwargs: Any) -> tuple[dl.Tensor, dl.Tensor]:
    if node.target is aten.sort.stable:
        dim, descending = kwargs.get("dim", -1), kwargs.get("descending", False)
    else:
        dim = args[0] if args else kwargs.get("dim", -1)
        descending = args[1] if len(args) > 1 else kwargs.get("descending", False)
    if x.ndim == 0:
        return x, dl.constant(0, dl.i64)
    axis = int(dim) % x.ndim
    positions = dl.iota(list(x.shape), axis, dl.i64)
    values, order = dl.sort((x, positions), axis=axis, descending=bool(descending))
    return values, order


def _topk_last_largest(node: torch.fx.Node) -> str | None:
    x = meta(node.args[0])
    dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", -1)
    largest = node.args[3] if len(node.args) > 3 else node.kwargs.get("largest", True)
    if int(dim) % max(x.ndim, 1) != x.ndim - 1 or not largest:
        return "topk other than the largest along the last dim"
    return None


@rule(aten.topk.default, check=_topk_last_largest)
def _topk(node: torch.fx.Node, x: dl.Tensor, k: int, *args: Any, **kwargs: Any) -> tuple[dl.Tensor, dl.Tensor]:
    values, positions = dl.top_k(x, int(k))
    return values, dl.cast(positions, dl.i64)
