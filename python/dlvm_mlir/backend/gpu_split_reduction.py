"""Split reductions that leave the GPU idle into a parallel partial pass and a combining pass.

The ``parallel`` plan (:mod:`dlvm_mlir.backend.gpu_schedule`) gives each thread
one output element and runs the reduction loops sequentially inside it.  A
reduction with few output elements and a long reduction (a loss summed over a
batch: one output; a bias gradient: 512 outputs, 1024 rows each) then runs on
a handful of threads: measured on an H100, the loss of the 784-512-512-10 MLP
step at batch 1024 took 0.88 ms on one thread, half of the step's GPU time.

For such an op (a ``linalg.generic`` on memrefs whose body combines the
accumulator with ``arith.addf``/``mulf``/``maximumf``/... and nothing else), the
longest reduction loop ``r`` that the inputs index by itself alone (not a
convolution's pixel loops, read as ``oh + kh``), of extent ``E = S * C``, is split
interleaved,
``r = c * S + s``, as upstream's ``split_reduction`` does on tensors:

    partial[s, out...] = identity                       (linalg.fill)
    partial[s, out...] = combine over c (and the other reduction loops)   (s parallel)
    out[out...]        = combine(out, partial[s, ...]) over s

so ``S`` times more threads work on the first pass, and consecutive threads
read consecutive rows.  ``S`` is a divisor of ``E`` (no partial chunks) chosen
so that the first pass has about :data:`TARGET_THREADS` threads while every
thread still combines at least :data:`MIN_CHUNK` elements (:func:`choose_split`).
Named convolutions that qualify (a kernel gradient: few outputs, long sums) are
generalized first (``gpu.py``).  The order of the
combination changes, as any parallel reduction changes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, linalg, memref

from .analysis import LoopNest
from .linalg_rewrite import iterator_types
from .tiling import divisors

__all__ = ["MAX_PER_THREAD", "MIN_CHUNK", "TARGET_THREADS", "SplitChoice", "choose_split", "split_reductions"]

#: threads the partial pass should have (an H100 has 132 multiprocessors)
TARGET_THREADS = 1 << 14
#: fewest elements each thread of the partial pass combines
MIN_CHUNK = 8
#: reductions shorter than this are left alone
MIN_REDUCTION = 64
#: most elements a thread of the partial pass should combine (more parts where it would)
MAX_PER_THREAD = 4096

_FLOAT_IDENTITY = {
    "arith.addf": 0.0, "arith.mulf": 1.0,
    "arith.maximumf": float("-inf"), "arith.maxnumf": float("-inf"),
    "arith.minimumf": float("inf"), "arith.minnumf": float("inf"),
}
_INT_IDENTITY = {  # as a function of the bit width
    "arith.addi": lambda w: 0, "arith.muli": lambda w: 1, "arith.ori": lambda w: 0, "arith.xori": lambda w: 0,
    "arith.andi": lambda w: -1, "arith.maxsi": lambda w: -(1 << (w - 1)), "arith.minsi": lambda w: (1 << (w - 1)) - 1,
    "arith.maxui": lambda w: 0, "arith.minui": lambda w: -1,
}


@dataclass(frozen=True)
class SplitChoice:
    """Split loop ``dim`` (extent ``extent``) into ``parts`` interleaved chunks."""

    dim: int
    extent: int
    parts: int


def choose_split(nest: LoopNest, splittable: tuple[int, ...] | None = None) -> SplitChoice | None:
    """The split for an op with this loop nest, or None when its plain plan has enough threads.

    The loop split is the longest of the reduction loops ``splittable`` (default: all;
    :func:`split_reduction` passes those that inputs index by themselves alone).  Its
    parts are as few as give the first pass :data:`TARGET_THREADS` threads, and more where
    each thread would still combine over :data:`MAX_PER_THREAD` elements.  Each part
    takes at least :data:`MIN_CHUNK` steps of the split loop, or, where other reduction
    loops cannot be split, at least that many elements in all: a convolution's kernel
    gradient (9216 outputs, each a sum over 32 images of 32 x 32 pixels, only the images
    splittable) gets 8 parts of 4 images."""
    parallel = 1
    for d in nest.parallel_dims:
        parallel *= nest.ranges[d]
    reduction = 1
    for d in nest.reduction_dims:
        reduction *= nest.ranges[d]
    allowed = [d for d in nest.reduction_dims if splittable is None or d in splittable]
    if not allowed or parallel >= TARGET_THREADS or reduction < MIN_REDUCTION:
        return None
    dim = max(allowed, key=lambda d: nest.ranges[d])
    extent = nest.ranges[dim]
    confined = len(allowed) < len(nest.reduction_dims)  # other reduction loops stay whole
    fitting = [p for p in divisors(extent) if p > 1 and (reduction if confined else extent) // p >= MIN_CHUNK]
    if not fitting:
        return None
    enough = [p for p in fitting if parallel * p >= TARGET_THREADS and reduction // p <= MAX_PER_THREAD]
    return SplitChoice(dim, extent, enough[0] if enough else fitting[-1])


def _combiner(op: ir.Operation) -> tuple[ir.Operation, object] | None:
    """The body's combining op and its identity, if the body is ``yield combine(acc, f(inputs))``."""
    body = op.regions[0].blocks[0]
    acc = body.arguments[len(body.arguments) - 1]
    terminator = list(body.operations)[-1]
    if len(terminator.operands) != 1:
        return None
    combine = terminator.operands[0].owner
    if not isinstance(combine, ir.Operation):
        combine = getattr(combine, "operation", None)
    if combine is None or len(combine.operands) != 2 or combine.block != body:
        return None
    uses = list(acc.uses)
    if len(uses) != 1 or uses[0].owner != combine:
        return None
    element = acc.type
    if isinstance(element, ir.FloatType) and combine.name in _FLOAT_IDENTITY:
        return combine, _FLOAT_IDENTITY[combine.name]
    if isinstance(element, ir.IntegerType) and combine.name in _INT_IDENTITY:
        return combine, _INT_IDENTITY[combine.name](ir.IntegerType(element).width)
    return None


def _uses_index(op: ir.Operation) -> bool:
    return any(inner.name == "linalg.index" for inner in op.regions[0].blocks[0].operations)


def _constant(element: ir.Type, value: object) -> ir.Value:
    if isinstance(element, ir.FloatType):
        return arith.constant(element, ir.FloatAttr.get(element, float(value)))
    return arith.constant(element, ir.IntegerAttr.get(element, int(value)))


def _involves(expr: ir.AffineExpr, dim: int, rank: int) -> bool:
    """Whether ``expr`` (over ``rank`` dims) depends on dimension ``dim``."""
    def fixed(value: int) -> ir.AffineMap:
        exprs = [ir.AffineDimExpr.get(d) for d in range(rank)]
        exprs[dim] = ir.AffineConstantExpr.get(value)
        return ir.AffineMap.get(rank, 0, exprs)

    return expr.compose(fixed(0)) != expr.compose(fixed(1))


def _is_dim(expr: ir.AffineExpr, dim: int) -> bool:
    return isinstance(expr, ir.AffineDimExpr) and ir.AffineDimExpr(expr).position == dim


def split_reduction(op: ir.Operation, nest: LoopNest) -> ir.Operation | None:
    """Rewrite one ``linalg.generic`` on memrefs as described in the module docstring; the
    partial pass, or None if it does not apply."""
    if op.name != "linalg.generic" or len(op.results) or _uses_index(op):
        return None
    body = op.regions[0].blocks[0]
    if len(body.arguments) != len(op.operands) or not isinstance(op.operands[len(op.operands) - 1].type, ir.MemRefType):
        return None
    n_inputs = len(op.operands) - 1
    if len(list(op.attributes["indexing_maps"])) != n_inputs + 1:
        return None
    found = _combiner(op)
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    rank = nest.rank
    # loops the inputs index only by themselves (a convolution's pixel loops index its
    # input as oh + kh: not those)
    splittable = tuple(d for d in range(rank) if not any(
        _involves(e, d, rank) and not _is_dim(e, d) for amap in maps[:n_inputs] for e in amap.results))
    choice = choose_split(nest, splittable)
    if found is None or choice is None:
        return None
    combine, neutral = found
    dim, parts = choice.dim, choice.parts
    chunk = choice.extent // parts
    # new loops: s, then the old ones (old loop d is new loop d + 1); the old loop `dim`
    # (now c, extent `chunk`) and s together index c * parts + s: an input indexed by the
    # old loop alone is expanded there to [chunk, parts] and indexed by (c, s)
    shift = ir.AffineMap.get(rank + 1, 0, [ir.AffineDimExpr.get(d + 1) for d in range(rank)])
    s, c = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(dim + 1)
    plans: list[tuple[list[ir.AffineExpr], int | None]] = []
    for operand, amap in zip(list(op.operands)[:n_inputs], maps[:n_inputs]):
        results, expand_at = [], None
        for position, expr in enumerate(amap.results):
            if _is_dim(expr, dim) and expand_at is None:
                results += [c, s]
                expand_at = position
            elif _involves(expr, dim, rank):
                return None  # indexed by an expression of the split loop: not split
            else:
                results.append(expr.compose(shift))
        if expand_at is not None:
            mtype = ir.MemRefType(operand.type)
            identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(len(mtype.shape)))
            if mtype.layout != identity or mtype.shape[expand_at] != choice.extent:
                return None
        plans.append((results, expand_at))
    out = op.operands[n_inputs]
    out_type = ir.MemRefType(out.type)
    element = out_type.element_type
    out_rank = len(out_type.shape)
    with ir.InsertionPoint(op), op.location:
        partial = memref.AllocOp(ir.MemRefType.get([parts, *out_type.shape], element), [], []).result
        linalg.fill(_constant(element, neutral), outs=[partial])
        replaced: dict[int, ir.Value] = {}
        for index, (operand, (results, expand_at)) in enumerate(zip(list(op.operands)[:n_inputs], plans)):
            if expand_at is None:
                continue
            mtype = ir.MemRefType(operand.type)
            shape = list(mtype.shape)
            shape[expand_at : expand_at + 1] = [chunk, parts]
            groups, next_dim = [], 0
            for position in range(len(mtype.shape)):
                width = 2 if position == expand_at else 1
                groups.append(list(range(next_dim, next_dim + width)))
                next_dim += width
            expanded = memref.expand_shape(ir.MemRefType.get(shape, mtype.element_type), operand,
                                           reassociation=groups, output_shape=[], static_output_shape=shape)
            replaced[index] = expanded
        first = op.clone(ip=ir.InsertionPoint(op))  # after the expand_shapes it reads
        for index, value in replaced.items():
            first.operands[index] = value
        new_maps = [ir.AffineMap.get(rank + 1, 0, results) for results, _ in plans]
        new_maps.append(ir.AffineMap.get(rank + 1, 0, [s] + [e.compose(shift) for e in maps[-1].results]))
        first.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
        first.attributes["iterator_types"] = iterator_types(["parallel"] + list(nest.iterators))
        first.operands[n_inputs] = partial
        dims = [ir.AffineDimExpr.get(d) for d in range(out_rank + 1)]
        second = linalg.GenericOp(
            result_tensors=[],
            inputs=[partial],
            outputs=[out],
            indexing_maps=ir.ArrayAttr.get([
                ir.AffineMapAttr.get(ir.AffineMap.get(out_rank + 1, 0, [dims[out_rank]] + dims[:out_rank])),
                ir.AffineMapAttr.get(ir.AffineMap.get(out_rank + 1, 0, dims[:out_rank])),
            ]),
            iterator_types=iterator_types(["parallel"] * out_rank + ["reduction"]),
        )
        block = second.regions[0].blocks.append(element, element)
        with ir.InsertionPoint(block):
            attributes = {name: combine.attributes[name] for name in combine.attributes}
            value = ir.Operation.create(combine.name, results=[element],
                                        operands=[block.arguments[1], block.arguments[0]], attributes=attributes)
            linalg.YieldOp([value.result])
    op.erase()
    return first


def split_reductions(ops: list[ir.Operation], analyze) -> int:
    """Split every op of ``ops`` that qualifies (``analyze``: op -> LoopNest | None); the count.

    A partial pass that still has too few threads is split again along another loop
    (a bias gradient, a sum over 32 images of 32 x 32 pixels for 32 channels: the
    images into 4 parts of 8, then the rows, then the columns): one more combining
    pass each time."""
    count = 0
    work = list(ops)
    while work:
        op = work.pop()
        nest = analyze(op)
        partial = split_reduction(op, nest) if nest is not None else None
        if partial is not None:
            count += 1
            work.append(partial)
    return count
