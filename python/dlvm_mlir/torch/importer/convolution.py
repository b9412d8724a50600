"""Convolution and pooling: ``convolution`` (every option: strides, padding,
dilation, groups, transposed with output padding), ``max_pool2d_with_indices``
(its values), ``avg_pool2d``, ``_adaptive_avg_pool2d`` (evenly dividing sizes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.fx

import dlvm_mlir.nnkit as dl

from . import out_shape, rule

aten = torch.ops.aten


def _per_dim(value: Any, count: int) -> list[int]:
    values = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    return values * count if len(values) == 1 else values


def _transposed_kernel(kernel: dl.Tensor, groups: int) -> dl.Tensor:
    """(C_in, K/g, *k) of a transposed convolution as the (K, C_in/g, *k) kernel of the direct one, flipped."""
    cin, kg, *spatial = kernel.shape
    grouped = dl.reshape(kernel, [groups, cin // groups, kg, *spatial])
    rank = len(spatial)
    swapped = dl.transpose(grouped, [0, 2, 1, *range(3, 3 + rank)])
    direct = dl.reshape(swapped, [groups * kg, cin // groups, *spatial])
    return dl.reverse(direct, list(range(2, 2 + rank)))


@rule(aten.convolution.default)
def _convolution(
    node: torch.fx.Node,
    x: dl.Tensor,
    kernel: dl.Tensor,
    bias: dl.Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> dl.Tensor:
    rank = x.ndim - 2
    stride, padding, dilation = _per_dim(stride, rank), _per_dim(padding, rank), _per_dim(dilation, rank)
    if transposed:
        extra = _per_dim(output_padding, rank)
        spatial = kernel.shape[2:]
        pads = [
            (d * (k - 1) - p, d * (k - 1) - p + e)
            for k, p, d, e in zip(spatial, padding, dilation, extra)
        ]
        y = dl.convolve(x, _transposed_kernel(kernel, groups), padding=pads, lhs_dilation=stride,
                        rhs_dilation=dilation, groups=groups)
    else:
        y = dl.convolve(x, kernel, strides=stride, padding=[(p, p) for p in padding], rhs_dilation=dilation,
                        groups=groups)
    if bias is not None:
        y = y + dl.reshape(bias, [1, bias.shape[0]] + [1] * rank)
    return y


def _pool_geometry(node: torch.fx.Node, x: dl.Tensor, kernel: Any, stride: Any, padding: Any):
    """Window, strides and (low, high) padding per spatial dim; ceil_mode's extra high padding
    comes from the output size PyTorch computed."""
    spatial = 3 if "3d" in str(node.target) else 2
    window = _per_dim(kernel, spatial)
    strides = _per_dim(stride, spatial) if stride else window
    pads = _per_dim(padding, spatial)
    val = node.meta["val"]
    out = out_shape(node, 0 if isinstance(val, (tuple, list)) else None)[-spatial:]
    pairs = []
    for n, k, s, p, o in zip(x.shape[-spatial:], window, strides, pads, out):
        pairs.append((p, max((o - 1) * s + k - n - p, p)))
    return window, strides, pairs


def _pool_indices_unused(node: torch.fx.Node) -> str | None:
    for user in node.users:
        if not (user.target.__name__ == "getitem" and user.args[1] == 0):
            return "the indices of max pooling are used (dlvm imports its values only)"
    return None


@rule(aten.max_pool2d_with_indices.default, aten.max_pool3d_with_indices.default, check=_pool_indices_unused)
def _max_pool(node: torch.fx.Node, x: dl.Tensor, kernel: Any, stride: Any = (), padding: Any = 0,
              dilation: Any = 1, ceil_mode: bool = False) -> tuple[dl.Tensor, None]:
    window, strides, pairs = _pool_geometry(node, x, kernel, stride, padding)
    lead = x.ndim - len(window)
    y = dl.reduce_window("max", x, [1] * lead + window, [1] * lead + strides, [(0, 0)] * lead + pairs,
                         window_dilation=[1] * lead + _per_dim(dilation, len(window)))
    return y, None


def _window_counts(size: Sequence[int], window: Sequence[int], strides: Sequence[int],
                   pairs: Sequence[tuple[int, int]], out: Sequence[int], include_pad: bool) -> np.ndarray:
    """How many elements each output position of an average pool divides by (PyTorch's rule:
    the window clipped to the padded input, or to the input itself without count_include_pad)."""
    counts = np.ones((), dtype=np.float64)
    for n, k, s, (lo, _), o in zip(size, window, strides, pairs, out):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, n + lo)
        if not include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        counts = np.multiply.outer(counts, end - start)
    return counts


@rule(aten.avg_pool2d.default, aten.avg_pool3d.default)
def _avg_pool(node: torch.fx.Node, x: dl.Tensor, kernel: Any, stride: Any = (), padding: Any = 0,
              ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None) -> dl.Tensor:
    window, strides, pairs = _pool_geometry(node, x, kernel, stride, padding)
    lead = x.ndim - len(window)
    total = dl.reduce_window("add", x, [1] * lead + window, [1] * lead + strides, [(0, 0)] * lead + pairs)
    if divisor_override:
        return total / dl.constant(divisor_override, x.dtype)
    out = out_shape(node)[lead:]
    counts = _window_counts(x.shape[lead:], window, strides, pairs, out, count_include_pad)
    return total / dl.constant(counts.reshape([1] * lead + list(out)), x.dtype)


def _adaptive_divides(node: torch.fx.Node) -> str | None:
    size = node.args[0].meta["val"].shape
    out = node.meta["val"].shape
    if any(int(n) % int(o) for n, o in zip(size[-2:], out[-2:])):
        return f"adaptive average pooling from {list(size[-2:])} to {list(out[-2:])} (sizes that do not divide)"
    return None


@rule(aten._adaptive_avg_pool2d.default, check=_adaptive_divides)
def _adaptive_avg_pool(node: torch.fx.Node, x: dl.Tensor, output_size: Any) -> dl.Tensor:
    out = out_shape(node)[-2:]
    window = [n // o for n, o in zip(x.shape[-2:], out)]
    lead = x.ndim - 2
    if list(out) == [1, 1]:
        return dl.reduce_mean(x, axis=(lead, lead + 1), keepdims=True)
    total = dl.reduce_window("add", x, [1] * lead + window, [1] * lead + window)
    return total / dl.constant(window[0] * window[1], x.dtype)
