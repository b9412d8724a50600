"""Shapes and indexing: broadcast_in_dim, reshape, transpose, slices, pad, iota, gather, scatter."""

from __future__ import annotations

from typing import Any

import dlvm_mlir.nnkit as dl
from dlvm_mlir.nnkit import Tensor

from .importer import Unsupported, dtype, register


@register("shapes", "broadcast_in_dim")
def _broadcast_in_dim(eqn: Any, x: Tensor, *dynamic: Tensor) -> Tensor:
    if dynamic:
        raise Unsupported("dynamic shapes")
    shape = [int(d) for d in eqn.params["shape"]]
    dims = [int(d) for d in eqn.params["broadcast_dimensions"]]
    placed = [1] * len(shape)
    for operand_dim, result_dim in enumerate(dims):
        placed[result_dim] = x.shape[operand_dim]
    y = dl.reshape(x, placed)
    return y if list(y.shape) == shape else dl.broadcast_to(y, shape)


@register("shapes", "reshape")
def _reshape(eqn: Any, x: Tensor, *dynamic: Tensor) -> Tensor:
    if dynamic:
        raise Unsupported("dynamic shapes")
    dims = eqn.params.get("dimensions")
    if dims is not None:
        x = dl.transpose(x, list(dims))
    return dl.reshape(x, [int(d) for d in eqn.params["new_sizes"]])


@register("shapes", "squeeze", "expand_dims")
def _squeeze(eqn: Any, x: Tensor) -> Tensor:
    return dl.reshape(x, list(eqn.outvars[0].aval.shape))


@register("shapes", "transpose")
def _transpose(eqn: Any, x: Tensor) -> Tensor:
    perm = [int(p) for p in eqn.params["permutation"]]
    return x if perm == list(range(x.ndim)) else dl.transpose(x, perm)


@register("shapes", "rev")
def _rev(eqn: Any, x: Tensor) -> Tensor:
    dims = [int(d) for d in eqn.params["dimensions"]]
    return dl.reverse(x, dims) if dims else x


@register("shapes", "concatenate")
def _concatenate(eqn: Any, *xs: Tensor) -> Tensor:
    return xs[0] if len(xs) == 1 else dl.concatenate(list(xs), int(eqn.params["dimension"]))


@register("shapes", "split")
def _split(eqn: Any, x: Tensor) -> list[Tensor]:
    axis = int(eqn.params["axis"])
    out, start = [], 0
    for size in eqn.params["sizes"]:
        offsets = [start if d == axis else 0 for d in range(x.ndim)]
        sizes = [int(size) if d == axis else n for d, n in enumerate(x.shape)]
        out.append(dl.slice(x, offsets, sizes))
        start += int(size)
    return out


@register("shapes", "pad")
def _pad(eqn: Any, x: Tensor, value: Tensor) -> Tensor:
    config = [(int(lo), int(hi), int(interior)) for lo, hi, interior in eqn.params["padding_config"]]
    if all(c == (0, 0, 0) for c in config):
        return x
    return dl.pad(x, config, value)


@register("shapes", "slice")
def _slice(eqn: Any, x: Tensor) -> Tensor:
    starts = [int(s) for s in eqn.params["start_indices"]]
    limits = [int(s) for s in eqn.params["limit_indices"]]
    strides = eqn.params.get("strides")
    steps = [1] * x.ndim if strides is None else [int(s) for s in strides]
    sizes = [max(0, -(-(hi - lo) // st)) for lo, hi, st in zip(starts, limits, steps)]
    if sizes == list(x.shape):
        return x
    return dl.slice(x, starts, sizes, steps if any(s != 1 for s in steps) else None)


@register("shapes", "dynamic_slice")
def _dynamic_slice(eqn: Any, x: Tensor, *starts: Tensor) -> Tensor:
    return dl.dynamic_slice(x, list(starts), [int(s) for s in eqn.params["slice_sizes"]])


@register("shapes", "dynamic_update_slice")
def _dynamic_update_slice(eqn: Any, x: Tensor, update: Tensor, *starts: Tensor) -> Tensor:
    return dl.dynamic_update_slice(x, update, list(starts))


@register("shapes", "iota")
def _iota(eqn: Any, *dynamic: Tensor) -> Tensor:
    if dynamic:
        raise Unsupported("dynamic shapes")
    p = eqn.params
    return dl.iota(list(p["shape"]), int(p["dimension"]), dtype(p["dtype"]))


# -- gather and scatter ----------------------------------------------------------------
#
# JAX's gather/scatter have batching dimensions (operand dims that pair with index dims, as
# vmap makes them); NNKit's follow XLA's older form without. A batching pair becomes one more
# start column, the index dimension's iota, mapped to the operand dimension, which is then
# collapsed (inserted) like an indexed one.


def _mode(eqn: Any) -> str:
    return str(getattr(eqn.params.get("mode"), "name", eqn.params.get("mode")))


def _with_batching(indices: Tensor, operand_dims: tuple, index_dims: tuple) -> tuple[Tensor, list[int]]:
    """Indices with an iota column per batching pair (appended), and those operand dims."""
    if not operand_dims:
        return indices, []
    batch_shape = list(indices.shape[:-1])
    columns = [indices]
    for d in index_dims:
        columns.append(dl.reshape(dl.iota(batch_shape, int(d), indices.dtype), batch_shape + [1]))
    return dl.concatenate(columns, indices.ndim - 1), [int(d) for d in operand_dims]


def _in_bounds(indices: Tensor, dims: list[int], shape: tuple, window: list[int]) -> Tensor:
    """Per start vector (the indices' batch shape): every start within ``[0, dim - window]``."""
    limits = dl.constant([shape[d] - window[d] for d in dims], indices.dtype)
    ok = dl.logical_and(dl.greater_equal(indices, dl.zeros_like(indices)), dl.less_equal(indices, limits))
    return dl.reduce("and", ok, [indices.ndim - 1])


@register("shapes", "gather")
def _gather(eqn: Any, x: Tensor, indices: Tensor) -> Tensor:
    p = eqn.params
    numbers = p["dimension_numbers"]
    sizes = [int(s) for s in p["slice_sizes"]]
    start_map = [int(d) for d in numbers.start_index_map]
    mode = _mode(eqn)
    valid = _in_bounds(indices, start_map, x.shape, sizes) if mode == "FILL_OR_DROP" else None
    indices, batching = _with_batching(indices, numbers.operand_batching_dims, numbers.start_indices_batching_dims)
    collapsed = sorted([int(d) for d in numbers.collapsed_slice_dims] + batching)
    offset_dims = [int(d) for d in numbers.offset_dims]
    y = dl.gather(x, indices, offset_dims, collapsed, start_map + batching, indices.ndim - 1, sizes)
    if valid is None:
        return y
    fill = p.get("fill_value")
    if fill is None:
        fill = (float("nan") if y.dtype.is_float else True if y.dtype.is_bool
                else -(2 ** (y.dtype.bits - 1)))
    # the batch dimensions of the result are those not in offset_dims, in order
    mask_shape = [1 if d in offset_dims else 0 for d in range(y.ndim)]
    batch = iter(valid.shape)
    mask_shape = [1 if m else next(batch) for m in mask_shape]
    mask = dl.broadcast_to(dl.reshape(valid, mask_shape), list(y.shape))
    return dl.where(mask, y, dl.full(list(y.shape), fill, y.dtype))


_SCATTER = {"scatter": "replace", "scatter-add": "add", "scatter_add": "add", "scatter-max": "max",
            "scatter_max": "max", "scatter-min": "min", "scatter_min": "min"}


@register("shapes", *_SCATTER)
def _scatter(eqn: Any, x: Tensor, indices: Tensor, updates: Tensor) -> Tensor:
    """``dl.scatter``; in FILL_OR_DROP mode (JAX's default) out-of-range windows are dropped:
    the operand is padded by a window at the high end of the scattered dimensions, such
    windows are sent there, and the padding is sliced off."""
    kind = _SCATTER[eqn.primitive.name]
    numbers = eqn.params["dimension_numbers"]
    scattered = [int(d) for d in numbers.scatter_dims_to_operand_dims]
    inserted = [int(d) for d in numbers.inserted_window_dims]
    batching_dims = [int(d) for d in numbers.operand_batching_dims]
    window_dims = [int(d) for d in numbers.update_window_dims]
    # the window's size along each operand dimension
    window_iter = iter(window_dims)
    window = [1 if d in inserted or d in batching_dims else updates.shape[next(window_iter)] for d in range(x.ndim)]
    shape = x.shape
    drop = _mode(eqn) == "FILL_OR_DROP"
    if drop:
        valid = _in_bounds(indices, scattered, shape, window)
        parking = dl.constant([shape[d] for d in scattered], indices.dtype)
        parking = dl.broadcast_to(dl.reshape(parking, [1] * (indices.ndim - 1) + [len(scattered)]), list(indices.shape))
        indices = dl.where(dl.broadcast_to(dl.reshape(valid, list(valid.shape) + [1]), list(indices.shape)),
                           indices, parking)
        high = [window[d] if d in scattered else 0 for d in range(x.ndim)]
        x = dl.pad(x, [(0, h) for h in high], dl.zeros([], x.dtype))
    indices, batching = _with_batching(indices, numbers.operand_batching_dims, numbers.scatter_indices_batching_dims)
    y = dl.scatter(kind, x, indices, updates, window_dims, sorted(inserted + batching), scattered + batching,
                   indices.ndim - 1)
    if drop and list(y.shape) != list(shape):
        y = dl.slice(y, [0] * len(shape), list(shape))
    return y


@register("shapes", "stack")
def _stack(eqn: Any, *xs: Tensor) -> Tensor:
    axis = int(eqn.params["axis"])
    parts = [dl.expand_dims(x, axis) for x in xs]
    return parts[0] if len(parts) == 1 else dl.concatenate(parts, axis)


@register("shapes", "unstack")
def _unstack(eqn: Any, x: Tensor) -> list[Tensor]:
    axis = int(eqn.params["axis"])
    rest = [n for d, n in enumerate(x.shape) if d != axis]
    return [dl.reshape(dl.slice(x, [k if d == axis else 0 for d in range(x.ndim)],
                                [1 if d == axis else n for d, n in enumerate(x.shape)]), rest)
            for k in range(x.shape[axis])]


@register("shapes", "tile")
def _tile(eqn: Any, x: Tensor) -> Tensor:
    """``reps`` copies along each dimension: a broadcast over a new dimension before each, merged."""
    reps = [int(r) for r in eqn.params["reps"]]
    interleaved = [n for pair in zip(reps, x.shape) for n in pair]
    placed = [n for d in x.shape for n in (1, d)]
    y = dl.broadcast_to(dl.reshape(x, placed), interleaved)
    return dl.reshape(y, [r * n for r, n in zip(reps, x.shape)])
