"""Static description of a linalg op's loop nest, read through the bindings.

The schedules only need the static loop extents, the iterator kinds, the
element widths and, for contractions and convolutions, which loop plays which
role.  :func:`analyze_linalg_op` extracts exactly that from any structured
linalg op (named or generic) with static shapes.
"""

from __future__ import annotations

from collections.abc import Callable

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import linalg

__all__ = ["SCHEDULE_HINT_ATTR", "ContractionLoops", "ConvolutionLoops", "LoopNest", "analyze_linalg_op", "elementwise",
           "indexing_maps", "ops_where", "tileable_maps", "use_owner"]

#: the schedule a rewrite made an op for (a string: ``direct-convolution`` from
#: :mod:`.conv_direct`, ``kernel-gradient`` from :mod:`.conv_kernel_grad`)
SCHEDULE_HINT_ATTR = "dlvm.schedule_hint"


@dataclass(frozen=True)
class ContractionLoops:
    """Loop positions of a contraction: ``C[b, m, n] += A[b, m, k] * B[b, k, n]``."""

    batch: tuple[int, ...]
    m: tuple[int, ...]
    n: tuple[int, ...]
    k: tuple[int, ...]
    #: when an input is ``B[..., k, n]`` with the innermost k and n loops as
    #: its two innermost dims, its row length (the extent of that n loop):
    #: rows no longer than a register tile make B's tile reads of consecutive
    #: k contiguous (a packed panel, :mod:`.packing`)
    b_row_length: int | None = None


@dataclass(frozen=True)
class ConvolutionLoops:
    """Loop positions of a convolution or pooling op."""

    batch: tuple[int, ...]
    output_image: tuple[int, ...]
    output_channel: tuple[int, ...]
    filter_loop: tuple[int, ...]
    input_channel: tuple[int, ...]
    depth: tuple[int, ...]
    strides: tuple[int, ...] = ()
    dilations: tuple[int, ...] = ()


@dataclass(frozen=True)
class LoopNest:
    """What the schedules know about one linalg op."""

    op_name: str
    ranges: tuple[int, ...]
    iterators: tuple[str, ...]
    element_bytes: int
    vectorizable: bool
    transposed_input: bool
    #: False when an indexing map multiplies a loop by a non-positive
    #: constant (a reverse, ``5 - d0``): upstream tiling asserts on such maps
    tileable: bool = True
    contraction: ContractionLoops | None = None
    convolution: ConvolutionLoops | None = None
    #: the op's :data:`SCHEDULE_HINT_ATTR`, or ""
    hint: str = ""
    #: loops an input reads added to a longer loop (``x[h + i]``: ``i``), for each such
    #: sum all but its longest loop: tiled by 1 and folded, they leave every input read
    #: a plain loop (:func:`window_dims`)
    window_dims: tuple[int, ...] = ()

    @property
    def rank(self) -> int:
        return len(self.ranges)

    @property
    def parallel_dims(self) -> tuple[int, ...]:
        return tuple(d for d, it in enumerate(self.iterators) if it == "parallel")

    @property
    def reduction_dims(self) -> tuple[int, ...]:
        return tuple(d for d, it in enumerate(self.iterators) if it == "reduction")

    @property
    def iterations(self) -> int:
        total = 1
        for extent in self.ranges:
            total *= extent
        return total


def _element_type(value_type: ir.Type) -> ir.Type:
    if isinstance(value_type, ir.ShapedType):
        return ir.ShapedType(value_type).element_type
    return value_type


def _bit_width(element_type: ir.Type) -> int | None:
    if isinstance(element_type, ir.IntegerType):
        return ir.IntegerType(element_type).width
    if isinstance(element_type, ir.IndexType):
        return 64
    for cls in (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type):
        if isinstance(element_type, cls):
            return {ir.F16Type: 16, ir.BF16Type: 16, ir.F32Type: 32, ir.F64Type: 64}[cls]
    return None


def _dim_position(expr: ir.AffineExpr) -> int | None:
    if isinstance(expr, ir.AffineDimExpr):
        return ir.AffineDimExpr(expr).position
    return None


def loop_ranges(operands: list[ir.Value], maps: list[ir.AffineMap]) -> list[int | None]:
    ranges: list[int | None] = [None] * maps[0].n_dims
    for value, amap in zip(operands, maps):
        if not isinstance(value.type, ir.ShapedType):
            continue
        shaped = ir.ShapedType(value.type)
        if not shaped.has_rank:
            return ranges
        shape = shaped.shape
        for pos, expr in enumerate(amap.results):
            dim = _dim_position(expr)
            if dim is not None and ranges[dim] is None and pos < len(shape):
                ranges[dim] = None if shape[pos] < 0 else shape[pos]
    return ranges


def _contraction_loops(op: ir.Operation) -> ContractionLoops | None:
    if not linalg.isa_contraction_op(op):
        return None
    dims = linalg.infer_contraction_dimensions(op)
    if dims is None:
        return None
    m, n, k = tuple(dims.m), tuple(dims.n), tuple(dims.k)
    row_length = None
    if n and k:
        for value, amap in zip(op.operands, linalg.get_indexing_maps(op)):
            results = [_dim_position(e) for e in ir.AffineMapAttr(amap).value.results]
            if results[-2:] == [k[-1], n[-1]] and isinstance(value.type, ir.ShapedType):
                row_length = ir.ShapedType(value.type).shape[-1]
    return ContractionLoops(batch=tuple(dims.batch), m=m, n=n, k=k, b_row_length=row_length)


def _convolution_loops(op: ir.Operation) -> ConvolutionLoops | None:
    if not linalg.isa_convolution_op(op):
        return None
    dims = linalg.infer_convolution_dimensions(op)
    if dims is None:
        return None
    return ConvolutionLoops(
        batch=tuple(dims.batch),
        output_image=tuple(dims.output_image),
        output_channel=tuple(dims.output_channel),
        filter_loop=tuple(dims.filter_loop),
        input_channel=tuple(dims.input_channel),
        depth=tuple(dims.depth),
        strides=tuple(dims.strides),
        dilations=tuple(dims.dilations),
    )


def _positive_coefficients(expr: ir.AffineExpr) -> bool:
    """False when ``expr`` contains ``e * c`` with a constant ``c <= 0``."""
    if isinstance(expr, ir.AffineMulExpr):
        rhs = expr.rhs
        if isinstance(rhs, ir.AffineConstantExpr) and rhs.value <= 0:
            return False
    if isinstance(expr, ir.AffineBinaryExpr):
        return _positive_coefficients(expr.lhs) and _positive_coefficients(expr.rhs)
    return True


def _linear(expr: ir.AffineExpr) -> bool:
    """False when ``expr`` contains ``floordiv``, ``ceildiv`` or ``mod``."""
    if isinstance(expr, (ir.AffineFloorDivExpr, ir.AffineCeilDivExpr, ir.AffineModExpr)):
        return False
    if isinstance(expr, ir.AffineBinaryExpr):
        return _linear(expr.lhs) and _linear(expr.rhs)
    return True


def _expr_dims(expr: ir.AffineExpr) -> list[int]:
    if isinstance(expr, ir.AffineDimExpr):
        return [expr.position]
    if isinstance(expr, ir.AffineBinaryExpr):
        return _expr_dims(expr.lhs) + _expr_dims(expr.rhs)
    return []


def window_dims(maps: list[ir.AffineMap], n_inputs: int, ranges: list[int]) -> tuple[int, ...]:
    """The loops that inputs read added to other loops (an im2col copy's ``x[oh + kh]``),
    all but the longest loop of each sum (the last of equals).

    The linalg vectorizer takes only projected permutations: an op reading a window
    fails to vectorize (and became scalar loops).  Tiled by 1, these loops fold away
    (their index is the tile's offset) and each read is a plain, possibly strided, loop.
    """
    found: set[int] = set()
    for amap in maps[:n_inputs]:
        for expr in amap.results:
            dims = sorted(set(_expr_dims(expr)))
            if len(dims) > 1:
                keep = max(dims, key=lambda d: (ranges[d], d))
                found.update(d for d in dims if d != keep)
    return tuple(sorted(found))


def _tileable(maps: list[ir.AffineMap]) -> bool:
    return all(_positive_coefficients(e) and _linear(e) for amap in maps for e in amap.results)


def tileable_maps(op: ir.Operation) -> bool:
    """Whether linalg tiling handles ``op``'s indexing maps correctly.

    Upstream tiling asserts (aborting the process) on an index like
    ``-d0 + 9``, a loop read backwards; and it computes the slice an index
    like ``d0 mod 5`` or ``d0 floordiv 5 + d1 mod 3`` reads over a tile as if
    the index grew with the loops, so the tiled (and vectorized) op reads the
    wrong elements (an im2col copy computed wrong values).
    """
    maps = linalg.get_indexing_maps(op)
    return maps is not None and _tileable([ir.AffineMapAttr(a).value for a in maps])


def _has_transposed_input(maps: list[ir.AffineMap], n_inputs: int) -> bool:
    """True when an input reads along the innermost loop with a non-unit stride.

    That is the case when the input's indexing uses the innermost loop, but
    not as its last (contiguous) dimension.
    """
    innermost = maps[0].n_dims - 1
    for amap in maps[:n_inputs]:
        positions = [_dim_position(e) for e in amap.results]
        if innermost in positions and positions[-1] != innermost:
            return True
    return False


def _reduces_an_invariant(op: ir.Operation, maps: list[ir.AffineMap], n_inputs: int, iterators: tuple[str, ...]) -> bool:
    """True for a reduction whose body reads nothing that varies along a reduction loop.

    E.g. ``sum over k of 1.0`` after a fill was fused into the body: the
    linalg vectorizer folds such a reduction to a single combine (it returns
    ``init + 1.0`` instead of ``init + K``), so the op must stay scalar.
    """
    reductions = {d for d, kind in enumerate(iterators) if kind == "reduction"}
    if not reductions or len(op.regions) != 1 or not op.regions[0].blocks:
        return False
    body = op.regions[0].blocks[0]
    for index, amap in enumerate(maps[:n_inputs]):
        varying = any(_dim_position(e) in reductions or not isinstance(e, ir.AffineDimExpr) for e in amap.results)
        if varying and index < len(body.arguments) and list(body.arguments[index].uses):
            return False
    for inner in body.operations:
        if inner.operation.name == "linalg.index" and ir.IntegerAttr(inner.attributes["dim"]).value in reductions:
            return False
        if inner.operation.name not in ("linalg.yield",) and inner.operation.name.split(".")[0] not in ("arith", "math"):
            return False  # anything else (tensor.extract, calls, ...): be conservative, vectorize as usual
    return True


def _contiguous_slice(slice_op: ir.Operation) -> bool:
    """Whether a ``tensor.extract_slice`` is one contiguous run of its (row-major) source:
    unit strides, leading sizes 1, then at most one partial dimension, then whole ones."""
    strides = [int(v) for v in ir.DenseI64ArrayAttr(slice_op.attributes["static_strides"])]
    sizes = [int(v) for v in ir.DenseI64ArrayAttr(slice_op.attributes["static_sizes"])]
    source = ir.RankedTensorType(slice_op.operands[0].type).shape
    if any(v != 1 for v in strides) or len(sizes) != len(source):
        return False
    partial = next((d for d, size in enumerate(sizes) if size != 1), len(sizes))
    return all(sizes[d] == source[d] for d in range(partial + 1, len(sizes)))


def _gathers_from_a_slice(op: ir.Operation) -> bool:
    """Whether the body reads (``tensor.extract``) a slice that is not one contiguous run of
    its source.

    Vectorized (``vectorize_nd_extract``), such a read becomes a ``vector.gather`` whose
    indices are linearized by the slice's shape; after bufferization the slice is a strided
    view of its source, so rows past the first are read at the wrong places (a reversed
    slice, the adjoint of a pad after a reverse: dlvm-fuzz seed 1313), or, with a non-unit
    innermost stride, MLIR 22's vector-to-LLVM conversion leaves unrealized casts ("cannot
    translate the module to LLVM IR"; NNKit's ``x[:2, idx, ::2]``). The slice may be read through
    reshapes, and a branch that yields it (:data:`_ANY_LAYOUT`) loses its layout too."""
    if not op.regions or not op.regions[0].blocks:
        return False
    for inner in op.regions[0].blocks[0].operations:
        if inner.name != "tensor.extract":
            continue
        source = _view_root(inner.operands[0])
        if source is None:
            continue
        if source.name == "tensor.extract_slice" and not _contiguous_slice(source):
            return True
        if source.name in _ANY_LAYOUT:
            return True
    return False


#: ops whose results bufferize to a memref of a fully dynamic layout when their branches
#: yield buffers of different layouts (a slice in one, a fresh buffer in the other: the
#: bounds-checked read of a row, dlvm-fuzz seed 1818); a vector.gather on such a memref
#: has no LLVM lowering (unrealized casts, "cannot translate the module to LLVM IR")
_ANY_LAYOUT = ("scf.if", "scf.index_switch")

#: ops that only relabel a tensor's shape: the buffer they read is their operand's
_SHAPE_VIEWS = ("tensor.collapse_shape", "tensor.expand_shape", "tensor.cast")


def _view_root(value: ir.Value) -> ir.Operation | None:
    """The op defining the buffer ``value`` views (through reshapes and casts), if an op does."""
    while True:
        owner = value.owner
        owner = getattr(owner, "operation", owner)
        if not isinstance(owner, ir.Operation):
            return None
        if owner.name not in _SHAPE_VIEWS:
            return owner
        value = owner.operands[0]


def indexing_maps(op: ir.Operation) -> list[ir.AffineMap]:
    """The ``indexing_maps`` of a ``linalg.generic``, as affine maps."""
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def use_owner(use: ir.OpOperand) -> ir.Operation:
    """The operation that holds ``use`` (as an ``ir.Operation``, not an op view)."""
    return use.owner.operation if hasattr(use.owner, "operation") else use.owner


def elementwise(op: ir.Operation) -> bool:
    """A ``linalg.generic`` of parallel loops only with one result, written with the identity map."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    maps = indexing_maps(op)
    return all("parallel" in i for i in iterators) and maps[-1] == ir.AffineMap.get_identity(len(iterators))


def analyze_linalg_op(op: ir.Operation) -> LoopNest | None:
    """Describe ``op``'s loop nest, or ``None`` for non-structured or dynamic ops."""
    maps_attr = linalg.get_indexing_maps(op)
    if maps_attr is None or len(maps_attr) == 0:
        return None
    maps = [ir.AffineMapAttr(a).value for a in maps_attr]
    operands = list(op.operands)
    if len(operands) != len(maps):
        return None
    ranges = loop_ranges(operands, maps)
    if any(r is None for r in ranges):
        return None
    n_outputs = len(op.results) if len(op.results) else 1
    output_dims = {
        d for amap in maps[-n_outputs:] for e in amap.results if (d := _dim_position(e)) is not None
    }
    iterators = tuple(
        "parallel" if d in output_dims else "reduction" for d in range(len(ranges))
    )
    widths = [_bit_width(_element_type(v.type)) for v in operands]
    vectorizable = (
        all(w is not None and w >= 8 for w in widths)
        and not _reduces_an_invariant(op, maps, len(operands) - n_outputs, iterators)
        # LLVM's x86 back end aborts on bf16 vectors it has to split (a vector
        # reduction, an fpext of vector<33xbf16>: "Do not know how to soft
        # promote this operator's operand"): ops on bf16 stay scalar
        and not any(isinstance(_element_type(v.type), ir.BF16Type) for v in operands)
        and not _gathers_from_a_slice(op)
    )
    element_bytes = max((w or 8) for w in widths) // 8
    return LoopNest(
        op_name=op.name,
        ranges=tuple(int(r) for r in ranges if r is not None),
        iterators=iterators,
        element_bytes=max(1, element_bytes),
        vectorizable=vectorizable,
        transposed_input=_has_transposed_input(maps, len(operands) - n_outputs),
        tileable=_tileable(maps),
        contraction=_contraction_loops(op),
        convolution=_convolution_loops(op),
        hint=ir.StringAttr(op.attributes[SCHEDULE_HINT_ATTR]).value if SCHEDULE_HINT_ATTR in op.attributes else "",
        window_dims=window_dims(maps, len(operands) - n_outputs, [int(r) for r in ranges if r is not None]),
    )


def ops_where(module: ir.Module | ir.Operation, selects: Callable[[ir.Operation], bool]) -> list[ir.Operation]:
    """The ops nested in ``module`` (or in an op, itself included) that ``selects`` accepts, in
    pre-order (collected, so callers may rewrite them)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if selects(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root = module.operation if isinstance(module, ir.Module) else module
    with root.context:
        root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found
