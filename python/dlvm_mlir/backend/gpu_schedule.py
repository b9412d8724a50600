"""How each linalg op is laid out on the GPU: blocks, threads, kernels.

The GPU pipeline (:mod:`dlvm_mlir.backend.gpu`) bufferizes first and then
gives every linalg op on memrefs one of three plans, computed in Python from
its static loop nest (:func:`dlvm_mlir.backend.analysis.analyze_linalg_op`):

``matmul``
    a contraction ``C[b.., m, n] += A[.., m, .., k] * B[.., k, .., n]`` with
    one m, n and k loop and a plain multiply-add body: replaced by a
    hand-built kernel (:mod:`dlvm_mlir.backend.gpu_kernels`) that stages
    tiles of A and B through workgroup (shared) memory and keeps a register
    tile of C per thread, or uses ``nvgpu.mma.sync`` tensor-core
    instructions for f16 (and, on request, TF32 for f32).
``parallel``
    everything else with parallel loops (elementwise chains, broadcasts,
    transposes, copies, fills, reductions with a parallel part, matvec, ...):
    up to three parallel loops are tiled onto a grid of blocks
    (``tile_using_forall`` with ``#gpu.block<x|y|z>``) and each block tile
    onto a block of threads (``#gpu.thread<x|y|z>``); the innermost loop of
    the output goes to ``x`` so that a warp touches consecutive addresses;
    reduction loops run sequentially inside each thread.  The foralls become
    a ``gpu.launch`` with ``transform.gpu.map_forall_to_blocks`` and
    ``map_nested_forall_to_threads``.
``serial``
    no parallel loop with more than one iteration (a full reduction to a
    scalar, an op on rank-0 tensors): one thread in one block.

Tile sizes that divide the extents are preferred, so that most tiles are
static; otherwise the last block is partial (``affine.min`` sizes).

The ``parallel`` plan's transform script is built with the upstream Python
op builders (``transform.structured``, ``transform.gpu``;
:func:`parallel_plan_body`) and verified as it is built; only the
``#gpu.block<x>`` / ``#gpu.thread<x>`` mapping attributes are parsed from
text, since the bindings have no builder for them.  The matmul kernels of
:mod:`dlvm_mlir.backend.gpu_kernels` are still written as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import linalg, transform
from mlir.dialects.transform import gpu as transform_gpu
from mlir.dialects.transform import structured

from .analysis import LoopNest
from .schedule import SequenceBody, build_transform_module
from .tiling import divisors

__all__ = [
    "GPU_OP_ATTR",
    "GpuScheduleOptions",
    "GpuPlan",
    "plan_gpu_op",
    "parallel_plan_body",
    "render_parallel_plan",
    "output_dim_order",
]

GPU_OP_ATTR = "dlvm.gpu_op"
"""Temporary attribute naming one op for its transform script."""

MAX_GRID_YZ = 65535
MAX_GRID_X = (1 << 31) - 1
#: most loops mapped through linearized ids (``linear_dim_0`` ... ``linear_dim_9``)
MAX_LINEAR = 10
MAX_BLOCK_Z = 64


@dataclass(frozen=True)
class GpuScheduleOptions:
    """Knobs of the GPU schedules."""

    #: threads per block of the elementwise / reduction kernels
    block_threads: int = 256
    #: tensor-core use: "auto" (f16 matmuls), "tf32" (also f32 matmuls, with
    #: TF32 inputs: about 1e-3 relative error), "none" (SIMT only)
    mma: str = "auto"
    #: replace contractions by the shared-memory matmul kernel
    matmul_kernels: bool = True
    #: split reductions with few outputs into a parallel partial pass and a combining
    #: pass (:mod:`dlvm_mlir.backend.gpu_split_reduction`)
    split_reductions: bool = True

    def __post_init__(self) -> None:
        if self.block_threads < 1 or self.block_threads > 1024:
            raise ValueError(f"block_threads must be in [1, 1024], got {self.block_threads}")
        if self.mma not in ("auto", "tf32", "none"):
            raise ValueError(f"mma must be auto, tf32 or none, got {self.mma!r}")


@dataclass(frozen=True)
class GpuPlan:
    """How one op runs on the GPU."""

    kind: str  # "parallel", "serial", "matmul" or "grid-stride"
    #: tile sizes of the block-level forall, per loop (0: not tiled)
    block_tiles: tuple[int, ...] = ()
    #: threads per loop of the thread-level forall (0: not distributed)
    thread_counts: tuple[int, ...] = ()
    #: loop index mapped to x, y, z (``None``: not mapped)
    mapped: tuple[int | None, int | None, int | None] = (None, None, None)
    #: threads per block (x, y, z)
    block_dims: tuple[int, int, int] = (1, 1, 1)
    #: blocks in the grid (x, y, z)
    grid_dims: tuple[int, int, int] = (1, 1, 1)
    #: loops mapped through linearized ids, innermost first (:func:`_linear_plan`;
    #: then ``mapped`` is unused)
    linear: tuple[int, ...] = ()
    note: str = ""

    @property
    def threads(self) -> int:
        x, y, z = self.block_dims
        return x * y * z


@dataclass
class GpuOpRecord:
    """What the pipeline did with one op (for reports and tests)."""

    op_name: str
    ranges: tuple[int, ...]
    plan: GpuPlan
    kernel: str = ""
    error: str = ""
    script: str = field(default="", repr=False)


def output_dim_order(op: ir.Operation) -> list[int]:
    """Loop positions in the order of the first output's dimensions (outermost first)."""
    maps_attr = linalg.get_indexing_maps(op)
    if maps_attr is None or len(maps_attr) == 0:
        return []
    out_map = ir.AffineMapAttr(maps_attr[len(maps_attr) - 1]).value
    order: list[int] = []
    for expr in out_map.results:
        if isinstance(expr, ir.AffineDimExpr):
            order.append(ir.AffineDimExpr(expr).position)
    return order


def _pick(extent: int, budget: int) -> int:
    """Threads for a loop of ``extent`` iterations within ``budget``.

    The whole loop when it fits; else a divisor of the extent in
    ``(budget/2, budget]`` (every block full and static); else ``budget``
    (the last block is partial).
    """
    budget = max(1, budget)
    if extent <= budget:
        return extent
    fitting = [d for d in divisors(extent) if budget // 2 < d <= budget]
    return fitting[-1] if fitting else budget


def plan_gpu_op(
    nest: LoopNest, dim_order: list[int], options: GpuScheduleOptions, *, is_matmul: bool = False
) -> GpuPlan:
    """Choose the plan for one op.

    ``dim_order`` lists the loops in the order of the output's dimensions
    (see :func:`output_dim_order`); its last parallel loop is mapped to x.
    """
    if is_matmul and options.matmul_kernels:
        return GpuPlan(kind="matmul", note="shared-memory matmul kernel")
    parallel = [d for d in nest.parallel_dims if nest.ranges[d] > 1]
    if not parallel:
        return GpuPlan(kind="serial", note="no parallel loop: one thread")
    ordered = [d for d in dim_order if d in parallel]
    ordered += [d for d in parallel if d not in ordered]
    if len(ordered) > 3 and (linear := _linear_plan(nest, ordered, options)) is not None:
        return linear
    x = ordered[-1]
    rest = sorted(ordered[:-1], key=lambda d: -nest.ranges[d])
    chosen = [x] + rest[:2]
    budget = options.block_threads
    counts: list[int] = []
    for axis, dim in enumerate(chosen):
        limit = budget if axis < 2 else min(budget, MAX_BLOCK_Z)
        count = _pick(nest.ranges[dim], limit)
        counts.append(count)
        budget = max(1, budget // count)
    block_tiles = [0] * nest.rank
    thread_counts = [0] * nest.rank
    grid = [1, 1, 1]
    for axis, (dim, count) in enumerate(zip(chosen, counts)):
        extent = nest.ranges[dim]
        per_thread = 1
        blocks = -(-extent // count)
        if axis > 0 and blocks > MAX_GRID_YZ:
            per_thread = -(-blocks // MAX_GRID_YZ)
            blocks = -(-extent // (count * per_thread))
        block_tiles[dim] = count * per_thread
        thread_counts[dim] = count
        grid[axis] = blocks
    mapped = tuple(chosen + [None] * (3 - len(chosen)))
    dims = tuple(counts + [1] * (3 - len(counts)))
    return GpuPlan(
        kind="parallel",
        block_tiles=tuple(block_tiles),
        thread_counts=tuple(thread_counts),
        mapped=mapped,  # type: ignore[arg-type]
        block_dims=dims,  # type: ignore[arg-type]
        grid_dims=tuple(grid),  # type: ignore[arg-type]
    )


def _linear_plan(nest: LoopNest, ordered: list[int], options: GpuScheduleOptions) -> GpuPlan | None:
    """Every parallel loop on the grid and the blocks through linearized ids (more than three loops).

    The 3-D plan maps three loops and runs the others inside each thread: a
    split kernel gradient (8 parts x 32 x 32 x 3 x 3 outputs) got 3,072
    threads for 73,728 outputs, 11.5 ms at batch 32 on an H100.  Here the
    innermost :data:`MAX_LINEAR` loops (in the output's order) are all mapped:
    threads go to the innermost loops first (:func:`_pick`, up to
    ``block_threads`` in all), each other loop gets one block per iteration,
    and the block and thread ids are delinearized over the loops
    (``#gpu.block<linear_dim_i>``, ``#gpu.thread<linear_dim_i>``, dimension 0
    the innermost loop, so that a warp reads consecutive addresses).  None when the
    grid would exceed :data:`MAX_GRID_X` blocks.
    """
    mapped = ordered[-MAX_LINEAR:]
    budget = options.block_threads
    block_tiles = [0] * nest.rank
    thread_counts = [0] * nest.rank
    threads, blocks = 1, 1
    for dim in reversed(mapped):
        count = _pick(nest.ranges[dim], budget) if budget > 1 else 1
        budget = max(1, budget // count)
        block_tiles[dim] = count
        if count > 1:
            thread_counts[dim] = count
            threads *= count
        blocks *= -(-nest.ranges[dim] // count)
    if blocks > MAX_GRID_X:
        return None  # the 3-D plan gives threads several iterations instead
    return GpuPlan(
        kind="parallel",
        block_tiles=tuple(block_tiles),
        thread_counts=tuple(thread_counts),
        linear=tuple(reversed(mapped)),
        block_dims=(threads, 1, 1),
        grid_dims=(blocks, 1, 1),
        note=f"{len(mapped)} loops on linearized ids",
    )


def _mapping(plan: GpuPlan, sizes: tuple[int, ...], kind: str) -> ir.ArrayAttr:
    """``[#gpu.<kind><x|y|z>, ...]`` (or ``linear_dim_i``) for each tiled loop, in loop order.

    The bindings have no builder for the GPU mapping attributes
    (``#gpu.block<x>``, ``#gpu.thread<x>``): each is parsed from its text.
    """
    names = {}
    for axis, dim in enumerate(plan.mapped):
        if dim is not None:
            names[dim] = "xyz"[axis]
    if plan.linear:
        linear = [d for d in plan.linear if sizes[d]]  # innermost first
        names = {dim: f"linear_dim_{i}" for i, dim in enumerate(linear)}
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#gpu.{kind}<{names[d]}>") for d, size in enumerate(sizes) if size])


def parallel_plan_body(plan: GpuPlan, op_id: int) -> SequenceBody:
    """Transform IR: tile op ``op_id`` onto blocks and threads and make a ``gpu.launch``."""

    def body(root: ir.Value) -> None:
        any_op = transform.AnyOpType.get()
        i64 = ir.IntegerType.get_signless(64)
        op = structured.MatchOp(any_op, root, op_attrs=ir.DictAttr.get({GPU_OP_ATTR: ir.IntegerAttr.get(i64, op_id)}))
        blocks = structured.TileUsingForallOp(
            op.result, tile_sizes=list(plan.block_tiles), mapping=_mapping(plan, plan.block_tiles, "block")
        )
        structured.TileUsingForallOp(  # its forall is found again through the launch
            blocks.tiled_op, num_threads=list(plan.thread_counts), mapping=_mapping(plan, plan.thread_counts, "thread")
        )
        # linearized block ids need the grid given (upstream asserts on a 3-D basis)
        grid = list(plan.grid_dims) if plan.linear else None
        launch = transform_gpu.MapForallToBlocks(blocks.forall_op, grid_dims=grid, generate_gpu_launch=True).result
        transform_gpu.MapNestedForallToThreads(launch, block_dims=list(plan.block_dims))

    return body


def render_parallel_plan(plan: GpuPlan, op_id: int) -> str:
    """:func:`parallel_plan_body`'s transform module as text (in a context of its own), for reading."""
    with ir.Context():
        return str(build_transform_module(parallel_plan_body(plan, op_id)))
