"""``tensor``, ``memref``, ``bufferization`` and builtin casts."""

from __future__ import annotations

import itertools
import math

import numpy as np

from .core import InterpreterError, op
from .ops_dlvm import strided_slice

_DYN = -(1 << 63)


def mixed(static, dynamic) -> list[int]:
    """Static values with the dynamic placeholders replaced, in order, by ``dynamic``."""
    it = iter(dynamic)
    return [int(next(it)) if s == _DYN else int(s) for s in static]


def _result_shape(node, dynamic, i: int = 0) -> tuple[int, ...]:
    """The result type's shape with its dynamic dims taken from ``dynamic``."""
    it = iter(dynamic)
    return tuple(int(next(it)) if d < 0 else d for d in node.result_shape(i))


def _index(indices, shape: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """The indices as ints; with ``shape``, each checked to be inside its dimension (an index
    out of range is the program's error, reported as such; numpy would wrap a negative one)."""
    index = tuple(int(i) for i in indices)
    if shape is not None:
        for d, (i, n) in enumerate(zip(index, shape)):
            if not 0 <= i < n:
                raise InterpreterError(f"index {i} is out of bounds for dimension {d} of size {n}")
    return index


def _drop_unit_dims(sizes: list[int], target: tuple[int, ...]) -> tuple[int, ...]:
    """The sizes kept by a rank-reducing slice whose result has shape ``target`` (-1 dynamic)."""
    if len(sizes) == len(target):
        return tuple(sizes)
    kept, j = [], 0
    for n in sizes:
        if j < len(target) and (target[j] < 0 or target[j] == n):
            kept.append(n)
            j += 1
        elif n != 1:
            raise InterpreterError(f"cannot rank-reduce sizes {sizes} to {target}")
    return tuple(kept)


# --------------------------------------------------------------------------
# tensor
# --------------------------------------------------------------------------


def _uninitialized(frame, shape, dtype) -> np.ndarray:
    """A fresh buffer: the interpreter's stand-in for memory nothing has written yet."""
    return np.full(shape, frame.interp.uninitialized, dtype=dtype)


@op("tensor.empty")
def _empty(frame, node, args):
    return _uninitialized(frame, _result_shape(node, args), node.result_elem().dtype)


@op("tensor.extract")
def _extract(frame, node, args):
    x, *idx = args
    return x[_index(idx, x.shape)]


@op("tensor.insert")
def _insert(frame, node, args):
    v, dest, *idx = args
    out = np.array(dest, copy=True)
    out[_index(idx, out.shape)] = v
    return out


def _slice_of(node, source, offsets, sizes, strides):
    offs = mixed(node.attr("static_offsets"), offsets)
    szs = mixed(node.attr("static_sizes"), sizes)
    sts = mixed(node.attr("static_strides"), strides)
    return offs, szs, sts


@op("tensor.extract_slice", "memref.subview")
def _extract_slice(frame, node, args):
    source, offsets, sizes, strides = node.split_operands(args)
    offs, szs, sts = _slice_of(node, source, offsets, sizes, strides)
    view = strided_slice(source[0], offs, szs, sts)
    return view.reshape(_drop_unit_dims(szs, node.result_shape()))


@op("tensor.insert_slice")
def _insert_slice(frame, node, args):
    source, dest, offsets, sizes, strides = node.split_operands(args)
    offs, szs, sts = _slice_of(node, source, offsets, sizes, strides)
    out = np.array(dest[0], copy=True)
    view = strided_slice(out, offs, szs, sts)
    view[...] = np.reshape(source[0], view.shape)
    return out


@op("tensor.dim", "memref.dim")
def _dim(frame, node, args):
    x, i = args
    i = int(i)
    if not 0 <= i < x.ndim:
        raise InterpreterError(f"dimension {i} out of range for rank {x.ndim}")
    return x.shape[i]


@op("tensor.rank", "memref.rank")
def _rank(frame, node, args):
    return args[0].ndim


@op("tensor.from_elements")
def _from_elements(frame, node, args):
    return np.array(args, dtype=node.result_elem().dtype).reshape(node.result_shape())


@op("tensor.splat")
def _splat(frame, node, args):
    v, *dyn = args
    return np.full(_result_shape(node, dyn), v, dtype=node.result_elem().dtype)


@op("tensor.reshape")
def _reshape(frame, node, args):
    x, shape = args
    return np.reshape(x, tuple(int(d) for d in np.asarray(shape).reshape(-1)))


@op("tensor.expand_shape", "memref.expand_shape")
def _expand_shape(frame, node, args):
    x, *dyn = args
    static = node.attr("static_output_shape")
    shape = mixed(static, dyn) if static is not None else _result_shape(node, dyn)
    return np.reshape(x, shape)


@op("tensor.collapse_shape", "memref.collapse_shape")
def _collapse_shape(frame, node, args):
    x = args[0]
    groups = node.attr("reassociation")
    shape = [math.prod(x.shape[d] for d in g) for g in groups]
    out = np.reshape(x, shape)
    if node.result_info().kind == "memref" and not np.shares_memory(out, x) and out.size:
        raise InterpreterError("memref.collapse_shape of a non-contiguous buffer")
    return out


@op("tensor.cast", "memref.cast", "tensor.bitcast")
def _cast(frame, node, args):
    return args[0]


@op("tensor.concat")
def _concat(frame, node, args):
    return np.concatenate(args, axis=node.attr("dim"))


@op("tensor.generate")
def _generate(frame, node, args):
    shape = _result_shape(node, args)
    out = np.zeros(shape, dtype=node.result_elem().dtype)
    body = node.regions[0]
    for idx in itertools.product(*(range(n) for n in shape)):
        (out[idx],) = frame.run(body, [np.int64(i) for i in idx])
    return out


@op("tensor.pad")
def _pad(frame, node, args):
    source, low, high = node.split_operands(args)
    x = source[0]
    lo = mixed(node.attr("static_low"), low)
    hi = mixed(node.attr("static_high"), high)
    if any(v < 0 for v in lo + hi):
        raise InterpreterError("negative padding")
    body = node.regions[0]
    block = body.entry
    out_shape = tuple(n + a + b for n, a, b in zip(x.shape, lo, hi))
    uses_index = _region_uses_block_args(node)
    if not uses_index:
        (value,) = frame.run(body, [np.int64(0)] * len(block.args))
        out = np.full(out_shape, value, dtype=node.result_elem().dtype)
    else:
        out = np.zeros(out_shape, dtype=node.result_elem().dtype)
        for idx in itertools.product(*(range(n) for n in out_shape)):
            (out[idx],) = frame.run(body, [np.int64(i) for i in idx])
    out[tuple(slice(a, a + n) for a, n in zip(lo, x.shape))] = x
    return out


def _region_uses_block_args(node) -> bool:
    def compute():
        block = node.op.regions[0].blocks[0]
        return any(True for a in block.arguments for _ in a.uses)

    return node.cached("uses_block_args", compute)


# --------------------------------------------------------------------------
# memref and bufferization
# --------------------------------------------------------------------------


@op("memref.alloc", "memref.alloca")
def _alloc(frame, node, args):
    dyn = node.split_operands(args)[0] if node.has_attr("operandSegmentSizes") else args
    return _uninitialized(frame, _result_shape(node, dyn), node.result_elem().dtype)


@op("memref.dealloc")
def _dealloc(frame, node, args):
    return None


@op("memref.load")
def _load(frame, node, args):
    m, *idx = args
    return m[_index(idx, m.shape)]


@op("memref.store")
def _store(frame, node, args):
    v, m, *idx = args
    m[_index(idx, m.shape)] = v


@op("memref.copy")
def _copy(frame, node, args):
    src, dst = args
    if src.shape != dst.shape:
        raise InterpreterError(f"copy between shapes {src.shape} and {dst.shape}")
    dst[...] = src


@op("bufferization.to_tensor")
def _to_tensor(frame, node, args):
    return np.array(args[0], copy=True)


@op("bufferization.to_buffer", "bufferization.to_memref")
def _to_buffer(frame, node, args):
    return np.array(args[0], dtype=node.result_elem().dtype, copy=True)


@op("bufferization.alloc_tensor")
def _alloc_tensor(frame, node, args):
    dyn, copy, *_ = node.split_operands(args) + [[]]
    if copy:
        return np.array(copy[0], copy=True)
    return _uninitialized(frame, _result_shape(node, dyn), node.result_elem().dtype)


@op("bufferization.materialize_in_destination")
def _materialize(frame, node, args):
    source, dest = args
    if node.op.results and len(node.op.results):
        return np.array(source, copy=True)
    dest[...] = source
    return None


@op("builtin.unrealized_conversion_cast", seq=True)
def _unrealized_cast(frame, node, args):
    if len(args) != len(node.outs):
        raise InterpreterError("unrealized_conversion_cast with differing operand and result counts")
    return args
