"""Layout and data movement: views (``view``, ``reshape``, ``squeeze``, ``unsqueeze``,
``permute``, ``expand``), copies that are identities in value semantics (``clone``,
``alias``, ``_to_copy`` casts), ``cat``, ``select``, ``slice``, ``split_with_sizes``,
``constant_pad_nd``, ``flip``, ``repeat``, and tensor factories (``full``,
``full_like``, ``scalar_tensor``, ``arange``).

Shapes come from PyTorch's own shape propagation (``node.meta["val"]``), so the
rules never re-derive ``-1`` or squeeze semantics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.fx

import dlvm_mlir.nnkit as dl

from . import out_dtype, out_shape, rule

aten = torch.ops.aten


@rule(
    aten.view.default, aten.view_copy.default, aten._unsafe_view.default, aten.reshape.default,
    aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default, aten.unsqueeze.default,
    aten.squeeze_copy.dims, aten.squeeze_copy.dim, aten.squeeze_copy.default, aten.unsqueeze_copy.default,
    aten.flatten.using_ints,
)
def _reshape(node: torch.fx.Node, x: dl.Tensor, *args: Any) -> dl.Tensor:
    return dl.reshape(x, list(out_shape(node)))


@rule(aten.permute.default, aten.permute_copy.default)
def _permute(node: torch.fx.Node, x: dl.Tensor, dims: Sequence[int]) -> dl.Tensor:
    return dl.transpose(x, [int(d) % x.ndim for d in dims]) if x.ndim else x


@rule(aten.transpose.int, aten.transpose_copy.int, aten.t.default, aten.t_copy.default)
def _transpose(node: torch.fx.Node, x: dl.Tensor, a: int = 0, b: int = 1) -> dl.Tensor:
    if x.ndim < 2:
        return x
    perm = list(range(x.ndim))
    perm[int(a) % x.ndim], perm[int(b) % x.ndim] = perm[int(b) % x.ndim], perm[int(a) % x.ndim]
    return dl.transpose(x, perm)


@rule(aten.expand.default, aten.expand_copy.default)
def _expand(node: torch.fx.Node, x: dl.Tensor, size: Any, implicit: bool = False) -> dl.Tensor:
    return _broadcast(x, out_shape(node))


def _broadcast(x: dl.Tensor, shape: Sequence[int]) -> dl.Tensor:
    """numpy's broadcast_to (leading 1s first: DLVM broadcasts equal ranks)."""
    if 0 < x.ndim < len(shape):
        x = dl.reshape(x, [1] * (len(shape) - x.ndim) + list(x.shape))
    return x if tuple(x.shape) == tuple(shape) else dl.broadcast_to(x, list(shape))


@rule(
    aten.clone.default, aten.alias.default, aten.alias_copy.default, aten.lift_fresh_copy.default,
    aten.detach.default, aten.detach_copy.default,
)
def _identity(node: torch.fx.Node, x: dl.Tensor, *args: Any, **kwargs: Any) -> dl.Tensor:
    return x


@rule(aten._to_copy.default, aten.to.dtype)
def _to_copy(node: torch.fx.Node, x: dl.Tensor, *args: Any, **kwargs: Any) -> dl.Tensor:
    want = out_dtype(node)
    if want == x.dtype:
        return x
    if want.is_bool:
        return dl.not_equal(x, dl.constant(0, x.dtype))
    return dl.cast(x, want)


@rule(aten.copy.default)
def _copy(node: torch.fx.Node, destination: dl.Tensor, source: dl.Tensor, non_blocking: bool = False) -> dl.Tensor:
    value = source if source.dtype == destination.dtype else dl.cast(source, destination.dtype)
    return _broadcast(value, destination.shape)


@rule(aten.cat.default)
def _cat(node: torch.fx.Node, tensors: Sequence[dl.Tensor], dim: int = 0) -> dl.Tensor:
    want = out_dtype(node)
    # PyTorch lets a 1-d empty tensor stand beside tensors of any rank; it adds nothing.
    parts = [t if t.dtype == want else dl.cast(t, want) for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if len(parts) == 1:
        return parts[0]
    return dl.concatenate(parts, axis=int(dim) % parts[0].ndim)


@rule(aten.select.int, aten.select_copy.int)
def _select(node: torch.fx.Node, x: dl.Tensor, dim: int, index: int) -> dl.Tensor:
    dim = int(dim) % x.ndim
    index = int(index) % x.shape[dim]
    offsets = [index if d == dim else 0 for d in range(x.ndim)]
    sizes = [1 if d == dim else n for d, n in enumerate(x.shape)]
    return dl.reshape(dl.slice(x, offsets, sizes), list(out_shape(node)))


def _slice_bounds(length: int, start: Any, end: Any, step: int) -> tuple[int, int]:
    start, stop, _ = slice(start, end, step).indices(length)
    return start, max(0, -(-(stop - start) // step))


@rule(aten.slice.Tensor, aten.slice_copy.Tensor)
def _slice(node: torch.fx.Node, x: dl.Tensor, dim: int = 0, start: Any = None, end: Any = None,
           step: int = 1) -> dl.Tensor:
    dim = int(dim) % x.ndim
    first, count = _slice_bounds(x.shape[dim], start, end, int(step))
    offsets = [first if d == dim else 0 for d in range(x.ndim)]
    sizes = [count if d == dim else n for d, n in enumerate(x.shape)]
    strides = [int(step) if d == dim else 1 for d in range(x.ndim)]
    return dl.slice(x, offsets, sizes, strides)


@rule(aten.split_with_sizes.default, aten.split_with_sizes_copy.default, aten.split.Tensor, aten.split_copy.Tensor,
      aten.unbind.int, aten.unbind_copy.int)
def _split(node: torch.fx.Node, x: dl.Tensor, sizes: Any, dim: int = 0) -> tuple[dl.Tensor, ...]:
    if node.target in (aten.unbind.int, aten.unbind_copy.int):
        sizes, dim = 0, sizes  # unbind(x, dim): parts of length 1, that dim dropped
    dim = int(dim) % x.ndim
    parts, start = [], 0
    for index in range(len(node.meta["val"])):
        want = out_shape(node, index)
        length = want[dim] if len(want) == x.ndim else 1
        offsets = [start if d == dim else 0 for d in range(x.ndim)]
        shape = [length if d == dim else n for d, n in enumerate(x.shape)]
        parts.append(dl.reshape(dl.slice(x, offsets, shape), list(want)))
        start += length
    return tuple(parts)


def _scatter_slice(x: dl.Tensor, source: dl.Tensor, dim: int, first: int, count: int, step: int) -> dl.Tensor:
    """``x`` with positions first, first + step, ... (count of them) along ``dim`` replaced by
    ``source``: ``source`` spread by padding, chosen by a constant mask."""
    length = x.shape[dim]
    pads = [(0, 0)] * x.ndim
    last = first + (count - 1) * step if count else first
    pads[dim] = (first, length - 1 - last, step - 1) if count else (0, 0)
    if count == 0:
        return x
    pads = [p if len(p) == 3 else (p[0], p[1], 0) for p in pads]
    spread = dl.pad(source, pads, dl.constant(0, x.dtype))
    mask = np.zeros(length, dtype=bool)
    mask[first:last + 1:step] = True
    mask_shape = [length if d == dim else 1 for d in range(x.ndim)]
    return dl.where(_broadcast(dl.constant(mask.reshape(mask_shape)), x.shape), spread, x)


@rule(aten.slice_scatter.default)
def _slice_scatter(node: torch.fx.Node, x: dl.Tensor, source: dl.Tensor, dim: int = 0, start: Any = None,
                   end: Any = None, step: int = 1) -> dl.Tensor:
    dim = int(dim) % x.ndim
    first, count = _slice_bounds(x.shape[dim], start, end, int(step))
    source = source if source.dtype == x.dtype else dl.cast(source, x.dtype)
    return _scatter_slice(x, source, dim, first, count, int(step))


@rule(aten.select_scatter.default)
def _select_scatter(node: torch.fx.Node, x: dl.Tensor, source: dl.Tensor, dim: int, index: int) -> dl.Tensor:
    dim = int(dim) % x.ndim
    source = source if source.dtype == x.dtype else dl.cast(source, x.dtype)
    return _scatter_slice(x, dl.expand_dims(source, dim), dim, int(index) % x.shape[dim], 1, 1)


@rule(aten.constant_pad_nd.default)
def _pad(node: torch.fx.Node, x: dl.Tensor, pad: Sequence[int], value: Any = 0) -> dl.Tensor:
    pairs = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        pairs[x.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return dl.pad(x, pairs, dl.constant(value, x.dtype))


@rule(aten.flip.default)
def _flip(node: torch.fx.Node, x: dl.Tensor, dims: Sequence[int]) -> dl.Tensor:
    axes = sorted({int(d) % x.ndim for d in dims}) if x.ndim else []
    return dl.reverse(x, axes) if axes else x


@rule(aten.repeat.default)
def _repeat(node: torch.fx.Node, x: dl.Tensor, repeats: Sequence[int]) -> dl.Tensor:
    repeats = [int(r) for r in repeats]
    x = dl.reshape(x, [1] * (len(repeats) - x.ndim) + list(x.shape))
    # Each dim n repeated r times: broadcast to (r, n) and merge.
    interleaved = [v for n in x.shape for v in (1, n)]
    tiled = [v for r, n in zip(repeats, x.shape) for v in (r, n)]
    y = dl.broadcast_to(dl.reshape(x, interleaved), tiled)
    return dl.reshape(y, list(out_shape(node)))


# -- factories ---------------------------------------------------------------------


@rule(aten.full.default, aten.full_like.default, aten.scalar_tensor.default, aten.new_full.default)
def _full(node: torch.fx.Node, *args: Any, **kwargs: Any) -> dl.Tensor:
    value = args[0] if node.target is aten.scalar_tensor.default else args[1]
    want = out_dtype(node)
    if want.is_bool:
        value = bool(value)
    elif want.is_int:
        value = int(value)
    return dl.full(list(out_shape(node)), value, want)


@rule(aten.arange.start_step, aten.arange.default, aten.arange.start)
def _arange(node: torch.fx.Node, *args: Any, **kwargs: Any) -> dl.Tensor:
    numbers = [a for a in args if isinstance(a, (int, float))]
    start, step = (0, 1) if len(numbers) == 1 else (numbers[0], numbers[2] if len(numbers) > 2 else 1)
    (length,) = out_shape(node)
    want = out_dtype(node)
    index = dl.iota([length], 0, dl.i64 if want.is_int else want)
    if want.is_int:
        return index * dl.constant(int(step), dl.i64) + dl.constant(int(start), dl.i64)
    return index * dl.constant(step, want) + dl.constant(start, want)
