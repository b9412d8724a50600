"""Kernels within CUDA's parameter space: a fused generic with too many operands is split.

Every buffer a kernel reads is a parameter of it, a memref descriptor of
``8 * (3 + 2 * rank)`` bytes, and ``ptxas`` refuses kernels with more than
4,352 bytes of parameters (PTX ISA before 8.1).  Elementwise fusion has no
such bound: the gradient of an average pooling over a window of 200 sums 200
shifted copies of its seed, each a buffer of its own, and fusion made that one
generic of 200 inputs (8,000 bytes of parameters; dlvm-fuzz seed 7171).

:func:`split_wide_generics` (the GPU pipeline's ``fuse`` stage, after fusion)
cuts such a generic: it picks the value of its body that depends on the most
inputs within :data:`OPERAND_BYTES` (the running sum of the first inputs, in
that example), computes it in a generic of its own over the same loops (its
slice of the body cloned, its result a tensor of the loops' shape), and gives
the generic that value as one input in place of the inputs only the slice
used; until its operands fit.  Only parallel-loop generics with static loop
ranges are cut, at values that do not depend on the outputs' block arguments,
and only where the cut leaves fewer operands; a generic that cannot be cut
stays, and ptxas's error says so.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg, tensor

from .analysis import loop_ranges
from .linalg_rewrite import ops_where, rebind_operands

__all__ = ["OPERAND_BYTES", "descriptor_bytes", "split_wide_generics"]

#: bytes of a generic's operands' descriptors a kernel may take; of ptxas's 4,352 bytes,
#: the rest is left for the offsets and sizes a kernel's views take
OPERAND_BYTES = 3072


def descriptor_bytes(value_type: ir.Type) -> int:
    """Bytes a value of this type takes as a kernel parameter (a memref descriptor: two
    pointers, an offset, sizes and strides; a scalar: 8)."""
    if isinstance(value_type, ir.ShapedType) and ir.ShapedType(value_type).has_rank:
        return 8 * (3 + 2 * ir.ShapedType(value_type).rank)
    return 8


def _segments(op: ir.Operation) -> tuple[int, int]:
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return sizes[0], sizes[1]


def _cut_point(op: ir.Operation, n_inputs: int, max_inputs: int) -> ir.Operation | None:
    """The body op (one result) depending on the most inputs, at most ``max_inputs`` and at
    least two, and on no output block argument."""
    block = op.regions[0].blocks[0]
    arguments = list(block.arguments)
    deps: dict[ir.Value, frozenset[int] | None] = {}  # None: depends on an output
    for i, argument in enumerate(arguments):
        deps[argument] = frozenset([i]) if i < n_inputs else None
    best: tuple[int, ir.Operation] | None = None
    for inner in block.operations:
        inner = inner.operation
        found: set[int] | None = set()
        for operand in inner.operands:
            dep = deps.get(operand, frozenset())
            if dep is None or found is None:
                found = None
            else:
                found |= dep
        if len(inner.regions):
            found = None
        result = None if found is None else frozenset(found)
        for value in inner.results:
            deps[value] = result
        if result is not None and len(inner.results) == 1 and 2 <= len(result) <= max_inputs:
            if best is None or len(result) > best[0]:
                best = (len(result), inner)
    return None if best is None else best[1]


def _backward_slice(block: ir.Block, value: ir.Value) -> list[ir.Operation]:
    """The body ops ``value`` is computed from, in body order."""
    needed: set[ir.Value] = {value}
    picked: list[ir.Operation] = []
    for inner in reversed(list(block.operations)):
        inner = inner.operation
        if any(r in needed for r in inner.results):
            picked.append(inner)
            needed.update(inner.operands)
    return picked[::-1]


def _clone_into(ops: list[ir.Operation], mapping: dict[ir.Value, ir.Value], point: ir.InsertionPoint) -> None:
    for inner in ops:
        clone = inner.clone(ip=point)
        rebind_operands(clone, mapping)
        mapping.update(zip(inner.results, clone.results))


def _generic(inputs: list[ir.Value], outputs: list[ir.Value], maps: list[ir.AffineMap],
             iterators: ir.Attribute, result_types: list[ir.Type]) -> tuple[ir.Operation, ir.Block]:
    op = linalg.GenericOp(result_types, inputs, outputs, ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          iterators)
    types = [ir.ShapedType(v.type).element_type for v in inputs + outputs]
    return op.operation, op.regions[0].blocks.append(*types)


def _live_ops(block: ir.Block, dead: ir.Operation) -> tuple[list[ir.Operation], set[ir.Value]]:
    """The ops of ``block`` the yield needs once ``dead``'s result is given, in body order, and
    the values they read."""
    needed: set[ir.Value] = set()
    live: list[ir.Operation] = []
    for inner in reversed(list(block.operations)):
        inner = inner.operation
        if inner == dead:
            continue
        if inner.name == "linalg.yield" or any(r in needed for r in inner.results):
            live.append(inner)
            inner.walk(lambda nested: (needed.update(nested.operands), ir.WalkResult.ADVANCE)[1])
    return live[::-1], needed


def _cut(op: ir.Operation) -> ir.Operation | None:
    """Split ``op`` once if its operands exceed :data:`OPERAND_BYTES`; the generic that
    replaces it, or None."""
    n_inputs, n_outputs = _segments(op)
    operands = list(op.operands)
    if sum(descriptor_bytes(v.type) for v in operands) <= OPERAND_BYTES:
        return None
    iterators = op.attributes["iterator_types"]
    if any("parallel" not in str(it) for it in ir.ArrayAttr(iterators)):
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    ranges = loop_ranges(operands, maps)
    if any(r is None for r in ranges):
        return None
    # the slice's result has the loops' rank
    widest = max([descriptor_bytes(v.type) for v in operands] + [8 * (3 + 2 * len(ranges))])
    cut = _cut_point(op, n_inputs, OPERAND_BYTES // widest - 1)
    if cut is None:
        return None
    block = op.regions[0].blocks[0]
    arguments = list(block.arguments)
    value = cut.results[0]
    piece = _backward_slice(block, value)
    piece_operands = {v for inner in piece for v in inner.operands}
    used = [i for i in range(n_inputs) if arguments[i] in piece_operands]
    live, live_operands = _live_ops(block, cut)
    kept = [i for i in range(n_inputs) if arguments[i] in live_operands]
    if len(kept) + 1 >= n_inputs:
        return None  # the rest of the body reads the slice's inputs too: no fewer operands
    identity = ir.AffineMap.get_identity(len(ranges))
    with op.location, ir.InsertionPoint(op):
        # the slice, in a generic of its own
        empty = tensor.EmptyOp(ranges, value.type).result
        part, part_block = _generic([operands[i] for i in used], [empty], [maps[i] for i in used] + [identity],
                                    iterators, [empty.type])
        mapping = {arguments[i]: part_block.arguments[k] for k, i in enumerate(used)}
        point = ir.InsertionPoint(part_block)
        _clone_into(piece, mapping, point)
        with point:
            linalg.YieldOp([mapping[value]])
        # the generic, reading the slice's value where it computed it
        inputs = [operands[i] for i in kept] + [part.results[0]]
        outputs = operands[n_inputs:n_inputs + n_outputs]
        whole, whole_block = _generic(inputs, outputs, [maps[i] for i in kept] + [identity] + maps[n_inputs:],
                                      iterators, [r.type for r in op.results])
    for inner in live:
        whole_block.append(inner)
    new_arguments = list(whole_block.arguments)
    for k, i in enumerate(kept):
        arguments[i].replace_all_uses_with(new_arguments[k])
    value.replace_all_uses_with(new_arguments[len(kept)])
    for k in range(n_outputs):
        arguments[n_inputs + k].replace_all_uses_with(new_arguments[len(kept) + 1 + k])
    for old, new in zip(op.results, whole.results):
        old.replace_all_uses_with(new)
    op.erase()
    return whole


def split_wide_generics(module: ir.Module | ir.Operation) -> int:
    """Split every ``linalg.generic`` whose operands exceed :data:`OPERAND_BYTES`; the number of
    generics made."""
    made = 0
    with module.context:
        for op in ops_where(module, lambda op: op.name == "linalg.generic"):
            while (op := _cut(op)) is not None:  # type: ignore[assignment]
                made += 1
    return made
