"""What is added to a convolution's or a matmul's result, accumulated into its init instead.

A layer adds its bias (a residual block also its shortcut) to a convolution's
output in an elementwise generic after it, ``y = conv(x, k) + h(b, ...)``: one
more pass over the output, read and written (8 MB for 32 images of 32
channels at 32x32).  The convolution accumulates into a zero fill; here that
fill becomes a generic computing ``h(b, ...)`` (the add's other operand, with
the add's own indexing maps), the convolution accumulates onto it, and the add
is gone.  The schedules fuse such an init into the convolution's tiles as they
fuse a zero fill (:func:`.schedule.fusible_init`): a register tile's
accumulators start from the bias (and the shortcut) read in the tile, and the
output is written once.

It applies to an elementwise generic (parallel loops only, one result) whose
body yields a sum of ``c`` and other terms (a chain of ``arith.addf``), where
``c`` is an input read with the identity map and used once, in that sum, and
is the single use of a direct convolution (:mod:`.conv_direct`: the last of a
strided one's phase convolutions, whose chain of inits ends in the zero fill)
or of a ``linalg.matmul``, and where every other input is defined before the
convolution.  The sum is reassociated: ``(h + t1) + t2 ...`` instead of
``(t1 + t2 ...) + h``.  An activation after the add is not taken (it would
have to run on the accumulators after the reduction, a consumer fusion the
schedules do not make).

Measured on Nov 27 (3x3 64->64 convolution plus bias at 32x32, batch 32, 2
threads, in turns): 13.3 -> 12.7 ms.  The CNN training step of
``benchmarks/cnn_step.py`` (three biases and a shortcut taken) measured the
same with and without, within its noise.
"""

from __future__ import annotations

from mlir import ir

from .analysis import SCHEDULE_HINT_ATTR, elementwise, indexing_maps
from .conv_im2col import build_generic
from .linalg_rewrite import defining_op, ops_where, zero_fill

__all__ = ["epilogues_into_inits"]


def _single_use(value: ir.Value) -> bool:
    return len(list(value.uses)) == 1


#: the accumulating ops taken: op names, or schedule hints of generics
ACCUMULATORS = ("direct-convolution", "linalg.matmul")


def _accumulates(op: ir.Operation | None) -> bool:
    """A direct convolution or a matmul (accumulating into its init), whose result has one use."""
    if op is None or len(op.results) != 1 or not _single_use(op.results[0]):
        return False
    if op.name in ACCUMULATORS:
        return True
    return (op.name == "linalg.generic" and SCHEDULE_HINT_ATTR in op.attributes
            and ir.StringAttr(op.attributes[SCHEDULE_HINT_ATTR]).value in ACCUMULATORS)


def _chain(producer: ir.Operation) -> tuple[ir.Operation, ir.Operation] | None:
    """``(first, fill)``: the first accumulating op of ``producer``'s chain of inits (one use
    each) and the zero ``linalg.fill`` it starts from (possibly shared: CSE merges fills)."""
    op = producer.operation
    while True:
        init = defining_op(op.operands[len(op.operands) - 1])
        if init is None:
            return None
        if init.name == "linalg.fill":
            return (op, init) if zero_fill(init.results[0]) else None
        if not _accumulates(init):
            return None
        op = init.operation


def _sum_term(block: ir.Block, argument: ir.Value) -> ir.Operation | None:
    """The ``arith.addf`` adding block argument ``argument`` (its only use) if the yielded
    value is a sum of it and other terms: that add, then each add its result feeds (its
    only use), up to the yielded value."""
    uses = list(argument.uses)
    if len(uses) != 1:
        return None
    term = uses[0].owner.operation
    node = term
    while True:
        if node.name != "arith.addf" or node.block != block:
            return None
        uses = list(node.results[0].uses)
        if len(uses) != 1:
            return None
        if uses[0].owner.operation.name == "linalg.yield":
            return term
        node = uses[0].owner.operation


def _epilogue(op: ir.Operation) -> tuple[int, ir.Operation, ir.Operation, tuple] | None:
    """``(input index of c, the add of c, the accumulating op, its chain)`` if ``op`` adds the
    result of an accumulating op to other terms."""
    if not elementwise(op):
        return None
    block = op.regions[0].blocks[0]
    inputs = len(op.operands) - 1
    maps = indexing_maps(op)
    if list(block.arguments[inputs].uses):  # the add's init is read
        return None
    for index in range(inputs):
        c = op.operands[index]
        if maps[index] != maps[-1] or c.type != op.results[0].type:
            continue
        if sum(1 for v in list(op.operands)[:inputs] if v == c) != 1:
            continue
        term = _sum_term(block, block.arguments[index])
        producer = defining_op(c)
        if term is None or not _accumulates(producer):
            continue
        chain = _chain(producer)
        if chain is not None and all(_defined_before(op.operands[k], chain[0]) for k in range(inputs) if k != index):
            return index, term, producer, chain
    return None


def _rewrite(op: ir.Operation, index: int, term: ir.Operation, producer: ir.Operation,
             chain: tuple[ir.Operation, ir.Operation]) -> None:
    """The chain's ``fill`` becomes the generic computing the other terms of ``op``'s sum (its body
    without ``term``, the add of ``c``); ``op``'s result is ``producer``'s."""
    block = op.regions[0].blocks[0]
    inputs = len(op.operands) - 1
    others = [k for k in range(inputs) if k != index]
    c_arg = block.arguments[index]
    rest = term.operands[1] if term.operands[0] == c_arg else term.operands[0]
    yielded = list(block.operations)[-1].operands[0]
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    iterators = [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    body_ops = [o for o in list(block.operations)[:-1] if o != term]

    def body(*arguments: ir.Value) -> ir.Value:
        for k, argument in zip(others, arguments):
            block.arguments[k].replace_all_uses_with(argument)
        # after the arguments: ``rest`` may be one of them
        rest_now = arguments[others.index(ir.BlockArgument(rest).arg_number)] if (
            isinstance(rest.owner, ir.Block) and rest.owner == block) else rest
        total = rest_now if yielded == term.results[0] else yielded
        term.results[0].replace_all_uses_with(rest_now)
        for moved in body_ops:
            moved.detach_from_parent()
            ir.InsertionPoint.current.insert(moved)
        return total

    # the init is computed right before the chain's first accumulating op, in place of the
    # fill there (another user of a shared fill keeps it); :func:`_defined_before` made sure
    # that the operands are defined by then
    first, fill = chain
    with ir.InsertionPoint(first), op.location:
        init = build_generic([op.operands[k] for k in others], fill.operands[1], ir.ArrayAttr.get(
            [maps[k] for k in others] + [maps[-1]]), iterators, body)
    first.operands[len(first.operands) - 1] = init
    if not list(fill.results[0].uses):
        fill.erase()
    op.results[0].replace_all_uses_with(producer.results[0])
    op.erase()


def _defined_before(value: ir.Value, point: ir.Operation) -> bool:
    """Is ``value`` available right before ``point``: an argument of a block around it, or
    defined earlier in its block or in a block around it?"""
    owner = value.owner
    current = point.operation
    while current.parent is not None:
        block = current.block
        if isinstance(owner, ir.Block):
            if owner == block:
                return True
        elif owner.operation.block == block:
            return owner.operation.is_before_in_block(current)
        current = current.parent.operation
    return False


def epilogues_into_inits(module: ir.Module) -> int:
    """Rewrite every such add of ``module``; the count."""
    with module.context:
        found = [(op, e) for op in ops_where(module, lambda o: o.name == "linalg.generic")
                 if (e := _epilogue(op)) is not None]
        for op, (index, term, producer, chain) in found:
            _rewrite(op, index, term, producer, chain)
    return len(found)
