"""Transform-dialect schedules for linalg ops on tensors (CPU).

Each linalg op gets a :class:`Plan` computed in Python from its static loop
nest (:mod:`dlvm_mlir.backend.analysis`) and the host (:class:`CpuTarget`):

* ``contraction`` (matmul, batch_matmul, transposed and packed variants):
  the work is split over threads with ``tile_using_forall``, tiled for the
  caches, tiled again into a register tile (6 rows x 4 vectors x 8 on
  AVX-512, 6 x 2 vectors x 8 on AVX2) and vectorized into ``vector.contract``,
  which becomes broadcast-FMA code.  A ``linalg.fill`` init is fused into
  the parallel tile loops above the first reduction loop (``structured.fuse``;
  ``fuse_into_containing_op`` for the thread split), so each register tile
  starts from zeros in registers: no pass writing zeros over the output and
  no read of them (10-13% on the gradient's ``transpose(h) . dz`` at k = 32).
  ``fuse`` pulls in every producer it can tile: the op is scheduled in a
  kernel of its own (:mod:`dlvm_mlir.backend.kernels`), where its inputs
  have no producers;
* ``convolution`` (conv / pooling / depthwise): tiled to unit output rows
  and filter rows, decomposed into 1-D convolutions and vectorized;
* ``generic`` (elementwise chains, reductions, broadcasts, transposes, fills,
  matvec, ...): split over threads, outer reductions blocked, tiled to a few
  vector registers with the reduction loops innermost, vectorized.

Tile sizes at the thread and cache levels always divide the extents; register
tiles may not, and those loops are peeled (``transform.loop.peel``), which
leaves static full tiles plus static remainder tiles: every piece can be
vectorized, whatever the shape.  Each plan is built into transform IR
(:func:`build_plan`) and applied to its op alone, outlined into a kernel
(:func:`apply_op_schedules`; ops whose kernels are the same share one
schedule); a plan that fails leaves the op scalar instead of failing the
compilation.  After all ops, loop invariant accumulators are hoisted on
tensors (:data:`PRE_BUFFERIZE_CLEANUP`) and, after bufferization, vectors
are lowered to 1-D (:func:`post_bufferize_script`).

Every transform script here is built with the upstream Python op builders
(``mlir.dialects.transform``, ``transform.structured``, ``transform.loop``,
``transform.tensor``, ``transform.vector``) and verified as it is built
(:func:`build_transform_module`), not printed to text and parsed: a malformed
script fails where it is made, as a Python exception, instead of as a parse
error (which the plan fallback used to swallow).  No op needs a textual
fallback in MLIR 22.1's bindings.  The same builders make the other CPU
scripts (:mod:`.reduction_split`, :func:`.linalg_rewrite.generalize_tagged`)
and the GPU back end's (:mod:`.gpu_schedule`, whose ``#gpu.block<x>`` /
``#gpu.thread<x>`` mapping attributes are parsed: they have no Python
builder).  :func:`run_transform_script` takes a built module, a
:data:`SequenceBody` or, still, a module's text.
``OpScheduleRecord.script`` keeps the printed script, for reading.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from mlir import ir
from mlir.dialects import bufferization, transform
from mlir.dialects.transform import interpreter, structured
from mlir.dialects.transform import loop as loop_ext
from mlir.dialects.transform import tensor as tensor_ext
from mlir.dialects.transform import vector as vector_ext

from .analysis import LoopNest, analyze_linalg_op, elementwise, indexing_maps, ops_where, use_owner
from .kernels import Kernel, inline_kernels, outline_kernels
from .options import ScheduleOptions
from .target import CpuTarget
from .tiling import best_divisor, pick_thread_dim
from .tuning import options_for_kernel

__all__ = [
    "SCHEDULE_ID_ATTR",
    "ScheduleOptions",
    "TileLevel",
    "Plan",
    "OpScheduleRecord",
    "plan_for",
    "register_tile",
    "SequenceBody",
    "build_transform_module",
    "plan_body",
    "build_plan",
    "render_plan",
    "apply_op_schedules",
    "run_transform_script",
    "PRE_BUFFERIZE_CLEANUP",
    "read_splat_writes",
    "post_bufferize_script",
    "mark_transfer_hoisting",
    "strip_schedule_tags",
]

SCHEDULE_ID_ATTR = "dlvm.schedule_id"
#: on a contraction's ``linalg.fill`` init that is scheduled with it (same id)
SCHEDULE_INIT_ATTR = "dlvm.schedule_init"
#: on a direct convolution's elementwise consumer that is scheduled with it (same id)
SCHEDULE_EPILOGUE_ATTR = "dlvm.schedule_epilogue"


@dataclass(frozen=True)
class TileLevel:
    """One ``tile_using_for`` level: sizes per loop (0 = untiled)."""

    sizes: tuple[int, ...]
    interchange: tuple[int, ...] | None = None
    #: loop extents at this level (to know which generated loops to peel)
    extents: tuple[int, ...] = ()
    #: per loop: tile size for the peeled remainder (0: leave it whole).
    #: A remainder like 48 of a 64-wide vector tile becomes 3 tiles of 16
    #: instead of one ``vector<48>``, which LLVM legalizes poorly.
    remainder_sizes: tuple[int, ...] = ()

    def loop_order(self) -> list[int]:
        """Loop positions that get an ``scf.for``, outermost first."""
        order = list(self.interchange) if self.interchange else list(range(len(self.sizes)))
        return [d for d in order if self.sizes[d] != 0]

    def peeled(self) -> list[bool]:
        """For each generated loop (outermost first): is it peeled?"""
        return [self.extents[d] % self.sizes[d] != 0 for d in self.loop_order()]

    def remainder_size(self, dim: int) -> int:
        """Tile size for the remainder of loop ``dim``, or 0."""
        if not self.remainder_sizes or not self.remainder_sizes[dim]:
            return 0
        rest = self.extents[dim] % self.sizes[dim]
        return self.remainder_sizes[dim] if rest > self.remainder_sizes[dim] else 0


@dataclass(frozen=True)
class Plan:
    """How one linalg op is tiled and vectorized."""

    kind: str
    thread_tiles: tuple[int, ...] | None = None
    levels: tuple[TileLevel, ...] = ()
    decompose: bool = False
    vectorize: bool = True
    note: str = ""
    #: the op's ``linalg.fill`` init (tagged :data:`SCHEDULE_INIT_ATTR`) is
    #: fused into its parallel tile loops: every tile starts from zeros in
    #: registers instead of a separate pass writing the output and a read of it
    fuse_init: bool = False
    #: reduction dimensions (the init is never fused below a reduction loop)
    reduction_dims: tuple[int, ...] = ()
    #: generalize the op before tiling and fold the unit loops of its tiles
    #: before vectorizing (a direct convolution's tile, whose filter loops are
    #: unit loops, becomes a contraction over its input channels)
    fold_unit_dims: bool = False
    #: the op's elementwise consumer (tagged :data:`SCHEDULE_EPILOGUE_ATTR`; a bias and an
    #: activation) is the root of the parallel tile loops and the op is fused into them:
    #: each tile's accumulators go through the consumer before they are stored, and the
    #: op's result is never written (:func:`fusible_epilogue`)
    epilogue: bool = False


@dataclass
class OpScheduleRecord:
    """What happened to one op (for reports and debugging)."""

    op_name: str
    ranges: tuple[int, ...]
    plan: Plan
    #: the pack stage's schedule hint for the op (``kernel-gradient-filters``), or ""
    hint: str = ""
    applied: bool = False
    error: str = ""
    fallback: str = ""
    script: str = field(default="", repr=False)
    #: the op's kernel was the same as an earlier op's, whose schedule it shares
    shared: bool = False


# --------------------------------------------------------------------------
# planning
# --------------------------------------------------------------------------


#: rows and k steps of the AVX-512 register tile over a packed B panel (below)
PACKED_REGISTER_TILE = (6, 4)
#: rows and k steps of the AVX2 register tile (2 vectors wide).  8 k steps since the fourteenth
#: session (4 before; measured on an AMD Zen 2, 2 threads, in turns, ms): MLP step batch 128
#: 4.01 -> 3.65, batch 32 1.32 -> 1.23; 128x784x512 0.746 -> 0.728; 512^3, 1024^3 and the
#: CNN step the same; 4 rows x 8 steps as 6 x 4
AVX2_REGISTER_TILE = (6, 8)


def by_registers(table: dict[int, Any], target: CpuTarget) -> Any:
    """A schedule constant's value for ``target``: ``table`` maps vector registers (32 on
    AVX-512, 16 on AVX2 and SSE) to values."""
    return table[32 if target.vector_registers >= 32 else 16]


def register_tile(target: CpuTarget, nest: LoopNest, options: ScheduleOptions) -> tuple[int, int, int]:
    """Register tile (m, n, k) of a contraction.

    6 rows by 4 vectors (AVX-512, 32 registers: 24 accumulators) or 6 rows by
    2 vectors (AVX2, 16 registers: 12 accumulators, :data:`AVX2_REGISTER_TILE`), the
    classic BLAS shapes;
    fewer broadcasts per FMA than 8x2 vectors measured faster on AVX-512.

    On AVX-512 when B's rows are a tile wide (a packed panel: the tile's B
    reads for consecutive k are contiguous), 8 k steps per tile had LLVM load
    the 32 B vectors ahead of the 24 accumulators' FMAs and spill (1024^3, one
    Zen 4 core, Nov 27: 55-70 GFLOP/s), so that tile took 4 rows (16
    accumulators, 93-102 GFLOP/s against OpenBLAS's 91-97).  Since the
    thirteenth session it takes 6 rows over 4 k steps
    (:data:`PACKED_REGISTER_TILE`), which keeps them in registers too: 1024^3
    on the Intel Xeon 3% faster on 2 threads, 4% on one core (512^3 the
    same).  Unpacked B (rows a matrix wide) keeps 6 rows and 8 k steps
    (64x1024x576 on the Zen 4: 103 GFLOP/s against 73 with 4 rows).
    """
    if options.register_tile is not None:
        return options.register_tile
    lanes = target.lanes(nest.element_bytes)
    if target.vector_registers >= 32:
        con = nest.contraction
        row = con.b_row_length if con is not None else None
        rows, steps = PACKED_REGISTER_TILE if row is not None and row <= 4 * lanes else (6, 8)
        return options.register_rows or rows, 4 * lanes, steps
    rows, steps = AVX2_REGISTER_TILE
    return options.register_rows or rows, 2 * lanes, steps


def _thread_tiles(
    nest: LoopNest,
    candidates: list[int],
    options: ScheduleOptions,
    minimum: int,
    quanta: dict[int, int] | None = None,
) -> tuple[tuple[int, ...] | None, tuple[int, ...]]:
    """Forall tile sizes and the per-task extents after the split.

    Up to ``tasks_per_thread`` tasks per thread, each with at least
    1/threads of the threshold's work (``minimum``: iterations or
    multiply-adds).  The pool's threads take tasks from one queue, so a
    thread that is late (a busy or preempted vCPU) runs fewer of them
    instead of holding the others up.
    """
    extents = list(nest.ranges)
    per_task = max(1, minimum // options.threads)
    tasks = max(options.threads, min(options.threads * options.tasks_per_thread, nest.iterations // per_task))
    choice = pick_thread_dim({d: nest.ranges[d] for d in candidates}, tasks, quanta)
    if choice is None:
        return None, tuple(extents)
    dim, chunk = choice
    tiles = [0] * nest.rank
    tiles[dim] = chunk
    extents[dim] = chunk
    return tuple(tiles), tuple(extents)


def _reduction_register_tile(extent: int, preferred: int) -> int:
    """Register tile of a contraction's k loop (0: take the whole extent).

    Reductions no longer than the preferred size are unrolled completely;
    otherwise a divisor close to the preferred size avoids a remainder, and
    only prime-ish extents get peeled.  Unrolling longer reductions (e.g. the
    k = 32 of a gradient ``transpose(h) . dz`` at batch 32) made LLVM hoist
    the whole B tile into registers: hundreds of spills, 25-35% slower.
    """
    if extent <= preferred:
        return 0
    size = best_divisor(extent, preferred)
    return size if size * 2 > preferred else preferred


#: cache tile targets (m, n, k) of a contraction.  (96, 128, 128) until the eleventh session
#: (chosen on an AMD Zen 4); on the Intel Xeon, 2 threads, GFLOP/s in turns with OpenBLAS
#: (its own in brackets): 1024^3 277 -> 305-312 (317-319), 128x784x512 180 -> 221 (238),
#: 512^3 294 -> 293 (285).  A task's rows (256 at 1024^3) share each packed B block.
CONTRACTION_CACHE_TILE = (256, 128, 256)


def _contraction_plan(nest: LoopNest, target: CpuTarget, options: ScheduleOptions) -> Plan:
    """Thread split, cache tiles and a register tile over the innermost m, n, k loops.

    Outer m / n / k loops (e.g. the panel loop of a packed operand) and batch
    loops get unit register tiles; their cache tiles keep the total tile
    close to the cache targets.
    """
    con = nest.contraction
    assert con is not None
    m, n, k = con.m[-1], con.n[-1], con.k[-1]
    outer = list(con.batch) + list(con.n[:-1]) + list(con.k[:-1]) + list(con.m[:-1])
    rm, rn, rk = register_tile(target, nest, options)
    thread_tiles, extents = None, nest.ranges
    if options.threads > 1 and nest.iterations >= options.min_parallel_flops:
        # Splitting m, each thread reads all of B and its part of A; splitting
        # n, all of A and its part of B: split the side of the larger operand
        # (x . w with few rows: by columns was as fast or faster, interleaved).
        rows, cols = list(con.m[:-1]) + [m], list(con.n[:-1]) + [n]
        if math.prod(nest.ranges[d] for d in cols) > math.prod(nest.ranges[d] for d in rows):
            rows, cols = cols, rows
        candidates = list(con.batch) + rows + cols
        thread_tiles, extents = _thread_tiles(nest, candidates, options, options.min_parallel_flops, {m: rm, n: rn})
    levels: list[TileLevel] = []
    tm_target, tn_target, tk_target = options.cache_tile or CONTRACTION_CACHE_TILE
    cache = [0] * nest.rank
    for dim, goal, quantum in ((m, tm_target, rm), (n, tn_target, rn), (k, tk_target, rk)):
        if extents[dim] > goal:
            size = best_divisor(extents[dim], goal, quantum)
            # an n tile that is not a whole number of register tiles would
            # leave a narrow remainder in every cache tile
            if size >= quantum and (dim != n or size % quantum == 0):
                cache[dim] = size
    for dims, inner, goal in ((con.n[:-1], n, tn_target), (con.m[:-1], m, tm_target), (con.k[:-1], k, tk_target)):
        for dim in dims:
            inner_size = cache[inner] or extents[inner]
            panels = best_divisor(extents[dim], max(1, goal // inner_size))
            if panels < extents[dim]:
                cache[dim] = panels
    if any(cache):
        levels.append(TileLevel(sizes=tuple(cache), extents=tuple(extents)))
        extents = tuple(c if c else e for c, e in zip(cache, extents))
    register = [0] * nest.rank
    for dim in outer:
        register[dim] = 1 if extents[dim] > 1 else 0
    for dim, size in ((m, rm), (n, rn)):
        register[dim] = 0 if extents[dim] <= size else size
    register[k] = _reduction_register_tile(extents[k], rk)
    order = outer + [m, n, k]
    order += [d for d in range(nest.rank) if d not in order]
    remainders = [0] * nest.rank
    remainders[n] = target.lanes(nest.element_bytes)
    levels.append(
        TileLevel(
            sizes=tuple(register),
            interchange=tuple(order),
            extents=tuple(extents),
            remainder_sizes=tuple(remainders),
        )
    )
    return Plan(kind="contraction", thread_tiles=thread_tiles, levels=tuple(levels))


def _convolution_plan(nest: LoopNest, target: CpuTarget, options: ScheduleOptions) -> Plan:
    conv = nest.convolution
    assert conv is not None
    lanes = target.lanes(nest.element_bytes)
    thread_tiles, extents = None, nest.ranges
    if options.threads > 1 and nest.iterations >= options.min_parallel_flops:
        candidates = list(conv.batch) + list(conv.output_channel) + list(conv.depth)
        candidates += list(conv.output_image[:-1])
        thread_tiles, extents = _thread_tiles(nest, candidates, options, options.min_parallel_flops)
    sizes = [0] * nest.rank

    def unit(dims: tuple[int, ...]) -> None:
        for d in dims:
            sizes[d] = 1 if extents[d] > 1 else 0

    def cap(dims: tuple[int, ...], limit: int) -> None:
        for d in dims:
            sizes[d] = 0 if extents[d] <= limit else limit

    unit(conv.batch)
    unit(conv.output_image[:-1])
    unit(conv.filter_loop[:-1])
    cap(conv.output_image[-1:], 2 * lanes)
    cap(conv.output_channel, 8)
    cap(conv.input_channel, 8)
    cap(conv.depth, lanes)
    level = TileLevel(sizes=tuple(sizes), extents=tuple(extents))
    return Plan(kind="convolution", thread_tiles=thread_tiles, levels=(level,), decompose=True)


#: output channels of a direct convolution's register tile a full row wide (4 vectors on
#: AVX-512: 16 accumulators).  The schedule search (:mod:`.tuning`) kept choosing 4 over 6
#: rows for 32x32 images and 16 rows over 12 for 16x16 ones; in whole layers, in turns
#: (``ab_variants.py``, Nov 27, 30 calls each, on an Intel Xeon with two AVX-512 FMA units;
#: not measured on the AMD Zen 4 the earlier defaults were), 6 rows (x2 for narrow tiles) against 4 (x4),
#: ms: 3x3 64->64 forward 7.64 / 7.26, input gradient 7.72 / 7.38; 3x3 128->128 7.57 /
#: 7.36, 7.60 / 7.40; stride 2 input gradient 6.19 / 5.94; 1x1 forward 1.19 / 1.01, input
#: gradient 0.94 / 0.93; CNN step batch 128 127.0 / 124.1, batch 32 26.8 / 26.6; worse only
#: the stride-2 forward (phases of 1-4 taps): 5.05 / 5.43.  By the vector registers (32:
#: AVX-512; 16: AVX2, where 6 rows x 2 vectors make 12 accumulators)
DIRECT_CONVOLUTION_ROWS = {32: 4, 16: 6}
#: vectors of output pixels of that tile, at most
DIRECT_CONVOLUTION_VECTORS = {32: 4, 16: 2}
#: a narrower tile takes up to this many times the rows (one vector: 16 x 16, the same
#: 16 accumulators; with 6 rows the factor was 2: 24 x 16 measured slower than 12 x 16)
NARROW_ROWS_FACTOR = 4
#: a direct convolution's tiles walk the output rows of one block of filters, then the next
#: block (loops n, f, oh, ow), so that the block's filter values stay in cache across the
#: rows; before the eleventh session every row took every block in turn (n, oh, f, ow).
#: Measured (Nov 28, Intel Xeon, 2 threads, ``ab_variants.py``, in turns, against False):
#: CNN step batch 128 101.0 / 105.5 -> 85.8 / 89.5 ms, batch 32 19.1 -> 18.2 ms; the
#: benchmark layers 1-2% (3x3 64->64 forward 7.82 -> 7.70 ms, 128->128 7.52 -> 7.38,
#: stride 2 5.63 -> 5.53, 64->64 input gradient 7.45 -> 7.40)
DIRECT_FILTERS_OUTER = True


def _direct_convolution_plan(nest: LoopNest, target: CpuTarget, options: ScheduleOptions) -> Plan | None:
    """A 2-D convolution with unit strides along its rows computed in place (:mod:`.conv_direct`).

    The register tile covers output channels by one output row of up to 4
    vectors (AVX-512: 4 channels x 64 pixels, 8 x 32 or 16 x 16: 16
    accumulators; AVX2: 6 x 16 or 12 x 8, 12 of its 16 registers), steps of
    8 input channels and unit filter loops; once its unit loops are folded,
    a tile is a contraction over the input channels, broadcast FMAs of the
    filter with the input row shifted by the tap, on accumulators that stay
    in registers for the whole reduction.  Only for
    the generics conv_direct.py made (tagged): a named convolution's product
    comes image first, and its contraction would be lowered with the vectors
    along the filters.
    """
    conv = nest.convolution
    if conv is None or not options.direct_convolutions or nest.hint != "direct-convolution":
        return None
    if (len(conv.output_image) != 2 or len(conv.filter_loop) != 2 or len(conv.output_channel) != 1
            or conv.depth or not conv.input_channel or list(conv.strides)[-1:] != [1]):
        return None
    lanes = target.lanes(nest.element_bytes)
    oh, ow = conv.output_image
    if nest.ranges[ow] < lanes:
        return None
    thread_tiles, extents = None, nest.ranges
    if options.threads > 1 and nest.iterations >= options.min_parallel_flops:
        candidates = list(conv.batch) + list(conv.output_channel) + [oh]
        thread_tiles, extents = _thread_tiles(nest, candidates, options, options.min_parallel_flops)
    vectors = options.direct_convolution_vectors or by_registers(DIRECT_CONVOLUTION_VECTORS, target)
    # a power of two vectors per row (56 pixels: 32 + 16 + 8; a 48-wide tile ran at a
    # third of the speed: 64 -> 64 channels at 56x56, one core, 27 -> 76 GFLOP/s)
    fitting = min(vectors, extents[ow] // lanes)
    width = lanes * (1 << (fitting.bit_length() - 1))
    # more rows for a narrower row: about the same number of accumulators
    rows = (options.direct_convolution_rows or by_registers(DIRECT_CONVOLUTION_ROWS, target)) * min(NARROW_ROWS_FACTOR, vectors * lanes // width)
    (f,) = conv.output_channel
    # a divisor of the filters close to the tile (90 filters: 5 x 18 rather than 3 x 24 + 18,
    # one core 91 -> 101 GFLOP/s)
    even = best_divisor(extents[f], rows)
    if extents[f] % rows and 4 * even >= 3 * rows:
        rows = even
    sizes = [0] * nest.rank
    for d in conv.batch:
        sizes[d] = 1 if extents[d] > 1 else 0
    sizes[oh] = 1 if extents[oh] > 1 else 0
    for d, size in ((f, rows), (ow, width)):
        sizes[d] = 0 if extents[d] <= size else size
    for d in conv.filter_loop:
        sizes[d] = 1 if extents[d] > 1 else 0
    for d in conv.input_channel:
        sizes[d] = 0 if extents[d] <= 8 else best_divisor(extents[d], 8)
    order = list(conv.batch) + ([f, oh, ow] if DIRECT_FILTERS_OUTER else [oh, f, ow])
    order += list(conv.input_channel) + list(conv.filter_loop)
    order += [d for d in range(nest.rank) if d not in order]
    remainders = [0] * nest.rank
    remainders[ow] = lanes
    level = TileLevel(sizes=tuple(sizes), interchange=tuple(order), extents=tuple(extents),
                      remainder_sizes=tuple(remainders))
    return Plan(kind="direct-convolution", thread_tiles=thread_tiles, levels=(level,), fold_unit_dims=True)


#: row vectors a kernel-gradient tile accumulates before its accumulators are stored: its
#: partial sums (channels x filters x taps x lanes, 9.4 MB for 128 x 128 3x3) go through
#: memory once per span (64: 71 GFLOP/s on one core at 128 channels, 16x16; 256: 88)
KERNEL_GRADIENT_SPAN = 256
#: the same for a grouped kernel gradient, whose partial sums are few, by the vector
#: registers: a depthwise layer's (128 channels, 16x16) measured 20% faster with 64 than
#: with 256 on the Intel Xeon (AVX-512), its images staying in cache; on the Zen 2 (AVX2)
#: 32, one image a step, against 64: 0.906 -> 0.77 and 0.751 -> 0.607 ms in two runs in
#: turns (not measured on an AVX-512 machine)
GROUPED_KERNEL_GRADIENT_SPAN = {32: 64, 16: 32}
#: input channels x filters of a kernel-gradient register tile, by the vector registers
KERNEL_GRADIENT_TILE = {32: (6, 4), 16: (3, 3)}


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _image_chunks(extents: tuple[int, ...], q: int, images: int) -> tuple[list[TileLevel], tuple[int, ...]]:
    """A kernel gradient's outer level: loop ``q`` (its images) in chunks of (a divisor near)
    ``images``; the levels and the extents inside them."""
    images = best_divisor(extents[q], images)
    if extents[q] <= images:
        return [], extents
    outer = tuple(images if d == q else 0 for d in range(len(extents)))
    return [TileLevel(sizes=outer, extents=tuple(extents))], tuple(images if d == q else e for d, e in enumerate(extents))


def _kernel_gradient_plan(nest: LoopNest, target: CpuTarget, options: ScheduleOptions) -> Plan:
    """The lane-wise partial sums of a kernel gradient (:mod:`.conv_kernel_grad`).

    Loops ``b, (g,) f, i, j, l | q, u, vb`` (input channel, group of a grouped
    convolution, filter, tap row and column, lane | image, output row, row
    vector).  A few images at a time (their input and cotangent stay in
    cache, the partial sums go through memory once per step); a register tile of 6 input channels by 4 filters (24 accumulators
    on AVX-512; 3 x 3 on AVX2) for one tap and all lanes, whose unit loops
    fold into an elementwise ``acc[b, f, :] += x[b, :] * dy[f, :]``.  A group
    pairs its own channels and filters only: a tile takes one group (a depthwise
    layer's is one channel by one filter; tiles of several groups, whose loads
    nothing shares, measured 10% slower).
    """
    grouped = nest.rank == 9
    b, f, i, j, _, q, u, vb = (0, *range(1 + grouped, 8 + grouped))
    g = 1 if grouped else None
    rows_b, rows_f = options.kernel_gradient_tile or by_registers(KERNEL_GRADIENT_TILE, target)
    thread_tiles, extents = None, nest.ranges
    if options.threads > 1 and nest.iterations >= options.min_parallel_flops:
        candidates = [f, b] + ([g] if grouped else [])
        thread_tiles, extents = _thread_tiles(nest, candidates, options, options.min_parallel_flops)
    # images per step: enough that a tile's accumulators live for >= span row vectors
    # (16x16 images: 16 per step, 32x32: 4) before they go back to memory
    span = options.kernel_gradient_span or (
        by_registers(GROUPED_KERNEL_GRADIENT_SPAN, target) if grouped else KERNEL_GRADIENT_SPAN)
    levels, extents = _image_chunks(extents, q, -(-span // (extents[u] * extents[vb])))
    sizes = [0] * nest.rank
    for d, size in ((b, rows_b), (f, rows_f)):
        sizes[d] = 0 if extents[d] <= size else size
    for d in (i, j, q, u, vb) + ((g,) if grouped else ()):
        sizes[d] = 1 if extents[d] > 1 else 0
    head = [b] + ([g] if grouped else []) + [f, i, j, q, u, vb]
    order = head + [d for d in range(nest.rank) if d not in head]
    levels.append(TileLevel(sizes=tuple(sizes), interchange=tuple(order), extents=tuple(extents)))
    return Plan(kind="kernel-gradient", thread_tiles=thread_tiles, levels=tuple(levels), fold_unit_dims=True)


#: images per step of a kernel gradient along the filters, at most (1 to 4 measured alike on
#: the Intel Xeon, 2 MB of L2 per core) ...
KERNEL_GRADIENT_FILTER_IMAGES = 2
#: ... and fewer where a step's cotangent (filters x pixels) would take more than this share
#: of the second-level cache.  On the Zen 2 (512 KB), in turns: 3x3 64->64 at 32x32 (256 KB
#: an image) 16.3 ms with 2 images per step, 14.3 with 1 (a share of 0.5); 0.25 against 0.5,
#: which moves the 128 KB images to 1 per step: 3x3 128->128 at 16x16 13.40 -> 13.09 ms,
#: the stride-2 layer's phases 8.48 -> 8.21, the 1x1 layer and the CNN step the same.  The
#: Xeon's 2 MB keep 2 images for all of these
KERNEL_GRADIENT_STEP_L2_SHARE = 0.25
#: input channels x vectors of filters of its register tile, by the vector registers
FILTER_KERNEL_GRADIENT_TILE = {32: (6, 4), 16: (6, 2)}


def _kernel_gradient_filters_plan(nest: LoopNest, target: CpuTarget, options: ScheduleOptions) -> Plan:
    """A kernel gradient along the filters (:mod:`.conv_kernel_grad`).

    Loops ``(p,) b, i, j, f | q, u, v`` (the part of the images where
    ``conv_kernel_grad.image_parts`` split them, one task each; input channel,
    tap row and column, filter | image, output row and column).  A few images
    per step (their input and the transposed cotangent stay in cache); a
    register tile of 6 input channels by 4 vectors of filters (AVX-512: 24
    accumulators, 12 x 2 or 24 x 1 where the filters are fewer; AVX2 6 x 2 or 12 x 1) for
    one tap, whose unit loops fold into ``acc[b, f] += x[b] * dyT[f]``: per
    pixel 6 broadcasts, 4 vector loads and 24 FMAs.
    """
    split = nest.rank == 8  # a leading loop over parts of the images (conv_kernel_grad.image_parts)
    b, i, j, f, q, u, v = range(split, 7 + split)
    lanes = target.lanes(nest.element_bytes)
    rows, vectors = options.kernel_gradient_tile or by_registers(FILTER_KERNEL_GRADIENT_TILE, target)
    thread_tiles, extents = None, nest.ranges
    if split:  # a task per part: each reads its own images (splitting the channels or the
        # filters had every task read all of them)
        thread_tiles = (1,) + (0,) * 7
        extents = (1,) + tuple(nest.ranges[1:])
    elif options.threads > 1 and nest.iterations >= options.min_parallel_flops:
        # whole vectors of filters per task
        thread_tiles, extents = _thread_tiles(nest, [b, f], options, options.min_parallel_flops, {f: lanes})
    images = options.kernel_gradient_images
    if not images:
        step_bytes = extents[f] * extents[u] * extents[v] * nest.element_bytes
        fitting = int(KERNEL_GRADIENT_STEP_L2_SHARE * target.l2_bytes) // step_bytes
        images = max(1, min(KERNEL_GRADIENT_FILTER_IMAGES, fitting))
    levels, extents = _image_chunks(extents, q, images)
    # vectors of filters per tile: a power of two whose remainder is one too (7 vectors:
    # 3 x 2 + 1; a tile 3 vectors wide, 6 x 48, ran at a tenth of the speed); fewer vectors
    # take more channels (12 x 2, 24 x 1)
    count = -(-extents[f] // lanes)
    filter_vectors = next(n for n in (vectors, vectors // 2, 1) if n <= count and _power_of_two(count % n or n))
    remainders = [0] * nest.rank
    if extents[f] % lanes:  # a few filters left (not padded to vectors): tiles of one vector
        remainders[f] = lanes
    sizes = [0] * nest.rank
    for d, size in ((b, rows * vectors // filter_vectors), (f, filter_vectors * lanes)):
        sizes[d] = 0 if extents[d] <= size else size
    for d in (i, j, q, u, v):
        sizes[d] = 1 if extents[d] > 1 else 0
    levels.append(TileLevel(sizes=tuple(sizes), interchange=tuple(range(split)) + (b, f, i, j, q, u, v),
                            extents=tuple(extents), remainder_sizes=tuple(remainders)))
    return Plan(kind="kernel-gradient", thread_tiles=thread_tiles, levels=tuple(levels), fold_unit_dims=True)


def _generic_tile_sizes(nest: LoopNest, extents: tuple[int, ...], budget: int, lanes: int) -> list[int]:
    """Register tile for a generic op: about ``budget`` elements, innermost first."""
    sizes = [1] * nest.rank
    if nest.transposed_input and nest.rank >= 2:
        sizes[-1] = min(extents[-1], lanes)
        sizes[-2] = min(extents[-2], lanes)
        return [0 if s >= e else s for s, e in zip(sizes, extents)]
    remaining = budget
    for d in reversed(range(nest.rank)):
        sizes[d] = max(1, min(extents[d], remaining))
        remaining //= sizes[d]
        if remaining <= 1:
            break
    return [0 if s >= e else s for s, e in zip(sizes, extents)]


#: rows of an outer reduction processed per pass over the parallel loops
REDUCTION_BLOCK = 16


def _reduction_blocks(nest: LoopNest, extents: tuple[int, ...]) -> tuple[int, ...] | None:
    """Cache tiles for reductions over outer loops (e.g. column sums).

    With the reduction loop innermost in the register tile, each vector of
    accumulators walks a whole column of the input: one page per load for
    long columns.  Blocking the reduction loops first (16 rows, then all
    column tiles, then the 16 rows inside) keeps the input access sequential.
    """
    innermost = nest.rank - 1
    if not nest.reduction_dims or nest.iterators[innermost] != "parallel":
        return None
    sizes = [0] * nest.rank
    for dim in nest.reduction_dims:
        block = best_divisor(extents[dim], REDUCTION_BLOCK)
        if 1 < block < extents[dim]:
            sizes[dim] = block
    return tuple(sizes) if any(sizes) else None


def _generic_plan(nest: LoopNest, target: CpuTarget, options: ScheduleOptions) -> Plan:
    """Thread split, outer reductions blocked, a register tile of a few vectors.

    An op that reads a window (:attr:`LoopNest.window_dims`, parallel loops only: an
    im2col copy) gets unit tiles on the window's loops, which fold away before it is
    vectorized: the vectorizer rejects reads of sums of loops.
    """
    lanes = target.lanes(nest.element_bytes)
    thread_tiles, extents = None, nest.ranges
    if options.threads > 1 and nest.iterations >= options.min_parallel_iterations:
        thread_tiles, extents = _thread_tiles(nest, list(nest.parallel_dims), options, options.min_parallel_iterations)
    levels: list[TileLevel] = []
    blocks = _reduction_blocks(nest, extents)
    if blocks is not None:
        levels.append(TileLevel(sizes=blocks, extents=tuple(extents)))
        extents = tuple(b if b else e for b, e in zip(blocks, extents))
    budget = lanes * options.generic_tile_vectors
    windows = [d for d in nest.window_dims if extents[d] > 1]
    if not all(d in nest.parallel_dims for d in windows):
        windows = []
    sizes = _generic_tile_sizes(nest, tuple(1 if d in windows else e for d, e in enumerate(extents)), budget, lanes)
    for d in windows:
        sizes[d] = 1
    order = tuple(nest.parallel_dims + nest.reduction_dims)
    if any(sizes):
        remainders = [0] * nest.rank
        remainders[-1] = lanes
        levels.append(
            TileLevel(
                sizes=tuple(sizes), interchange=order, extents=tuple(extents), remainder_sizes=tuple(remainders)
            )
        )
    return Plan(kind="generic", thread_tiles=thread_tiles, levels=tuple(levels), fold_unit_dims=bool(windows))


def plan_for(nest: LoopNest, target: CpuTarget, options: ScheduleOptions) -> Plan:
    """Choose the schedule for one op."""
    if 0 in nest.ranges:
        return Plan(kind="scalar", vectorize=False, note="empty iteration space")
    if not nest.vectorizable or not options.vectorize:
        reason = "sub-byte element type" if not nest.vectorizable else "vectorization disabled"
        return Plan(kind="scalar", vectorize=False, note=reason)
    if not nest.tileable:
        # upstream tiling asserts on a loop read backwards, and slices floordiv/mod indices wrongly
        return Plan(kind="scalar", vectorize=False, note="an indexing map reads a loop backwards or by floordiv/mod")
    if nest.hint == "kernel-gradient" and nest.rank in (8, 9):
        return _kernel_gradient_plan(nest, target, options)
    if nest.hint == "kernel-gradient-filters" and nest.rank in (7, 8):
        return _kernel_gradient_filters_plan(nest, target, options)
    con = nest.contraction
    if con is not None and con.m and con.n and con.k:
        return _contraction_plan(nest, target, options)
    if nest.convolution is not None and nest.convolution.filter_loop:
        direct = _direct_convolution_plan(nest, target, options)
        return direct if direct is not None else _convolution_plan(nest, target, options)
    return _generic_plan(nest, target, options)


# --------------------------------------------------------------------------
# building transform IR
# --------------------------------------------------------------------------

SequenceBody = Callable[[ir.Value], None]
"""Builds the body of ``@__transform_main`` at the current insertion point,
given its ``%root`` handle (the payload op the script is applied to)."""


def _any() -> ir.Type:
    return transform.AnyOpType.get()


def _i64(value: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _match(target: ir.Value, attributes: dict[str, ir.Attribute] | None = None,
           ops: list[str] | None = None) -> ir.Value:
    """``transform.structured.match [ops{...}] [attributes {...}] in target``."""
    return structured.MatchOp(
        _any(),
        target,
        ops=ir.ArrayAttr.get([ir.StringAttr.get(name) for name in ops]) if ops else None,
        op_attrs=ir.DictAttr.get(attributes) if attributes else None,
    ).result


def _apply_patterns(target: ir.Value, *patterns: Callable[[], object]) -> None:
    """``transform.apply_patterns to target { patterns... }`` (each pattern op built by a callable)."""
    op = transform.ApplyPatternsOp(target)
    with ir.InsertionPoint(op.patterns):
        for pattern in patterns:
            pattern()


def _canonicalize(func: ir.Value) -> None:
    _apply_patterns(
        func,
        structured.ApplyTilingCanonicalizationPatternsOp,
        loop_ext.ApplyForLoopCanonicalizationPatternsOp,
        transform.ApplyCanonicalizationPatternsOp,
    )


def build_transform_module(body: SequenceBody, consumed: bool = False) -> ir.Module:
    """A transform module ``{transform.with_named_sequence}`` whose
    ``@__transform_main(%root)`` runs ``body(root)``, built with the upstream
    op builders in the current context (at an unknown location) and
    verified."""
    with ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        mode = "transform.consumed" if consumed else "transform.readonly"
        with ir.InsertionPoint(module.body):
            sequence = transform.NamedSequenceOp(
                "__transform_main", [_any()], [],
                arg_attrs=ir.ArrayAttr.get([ir.DictAttr.get({mode: ir.UnitAttr.get()})]),
            )
        with ir.InsertionPoint(sequence.body):
            body(sequence.bodyTarget)
            transform.YieldOp()
    module.operation.verify()  # raises ir.MLIRError with the diagnostics
    return module


@dataclass(frozen=True)
class _Loop:
    """A loop handle produced by ``tile_using_for`` (or ``fuse``)."""

    handle: ir.Value
    dim: int
    peel: bool
    remainder_size: int
    rank: int


def _fused_level(handle: ir.Value, level: TileLevel, reductions: tuple[int, ...]) -> tuple[ir.Value, list[_Loop]]:
    """One level as ``structured.fuse`` over its parallel loops (fusing the
    init into them), then ``tile_using_for`` over its reduction loops."""
    loops: list[_Loop] = []
    peeled = dict(zip(level.loop_order(), level.peeled()))
    interchange = list(level.interchange) if level.interchange else None
    for part in ("parallel", "reduction"):
        sizes = [
            size if (d in reductions) == (part == "reduction") else 0 for d, size in enumerate(level.sizes)
        ]
        order = [d for d in level.loop_order() if sizes[d]]
        if not order:
            continue
        if part == "parallel":
            op = structured.FuseOp(handle, tile_sizes=sizes, tile_interchange=interchange)
            tiled, generated = op.transformed, list(op.loops)
        else:
            op = structured.TileUsingForOp(handle, sizes=sizes, interchange=interchange)
            tiled, generated = op.tiled_linalg_op, list(op.loops)
        assert len(generated) == len(order)
        for value, dim in zip(generated, order):
            loops.append(_Loop(value, dim, peeled[dim], level.remainder_size(dim), len(level.sizes)))
        handle = tiled
    return handle, loops


def init_fusible(plan: Plan) -> bool:
    """Can ``plan`` fuse its init: in each level down to the first one that
    tiles a reduction, every reduction loop comes after the parallel ones."""
    for level in plan.levels:
        order = level.loop_order()
        kinds = [d in plan.reduction_dims for d in order]
        if kinds != sorted(kinds):
            return False
        if any(kinds):
            break
    return True


def _tile_levels(
    handle: ir.Value, levels: tuple[TileLevel, ...], fuse_reductions: tuple[int, ...] | None = None
) -> list[_Loop]:
    """``tile_using_for`` levels; returns the loops, outermost first.

    With ``fuse_reductions`` (the reduction dims), levels down to the first
    one that tiles a reduction fuse the op's init into their parallel loops.
    """
    loops: list[_Loop] = []
    fusing = fuse_reductions is not None
    for level in levels:
        order = level.loop_order()
        if not order:
            continue
        if fusing:
            assert fuse_reductions is not None
            handle, level_loops = _fused_level(handle, level, fuse_reductions)
            loops.extend(level_loops)
            fusing = not any(d in fuse_reductions for d in order)
            continue
        interchange = list(level.interchange) if level.interchange else None
        op = structured.TileUsingForOp(handle, sizes=list(level.sizes), interchange=interchange)
        generated = list(op.loops)
        assert len(generated) == len(order)
        for value, dim, peel in zip(generated, order, level.peeled()):
            loops.append(_Loop(value, dim, peel, level.remainder_size(dim), len(level.sizes)))
        handle = op.tiled_linalg_op
    return loops


def _epilogue_levels(root: ir.Value, func: ir.Value, op: ir.Value, init: ir.Value | None, plan: Plan,
                     match: dict[str, ir.Attribute]) -> list[_Loop]:
    """The tile loops of an op with a fused epilogue (:attr:`Plan.epilogue`, one level): the
    consumer is tiled over the op's parallel loops (threads, then the level's parallel
    sizes) and the op (and its init) fused into its tiles; then the op's reduction loops are
    tiled inside.  The consumer's loops are the op's parallel loops, in order."""
    (level,) = plan.levels
    parallel = [d for d in range(len(level.sizes)) if d not in plan.reduction_dims]
    epilogue = _match(root, {SCHEDULE_EPILOGUE_ATTR: match[SCHEDULE_ID_ATTR]})
    if plan.thread_tiles is not None:
        threaded = structured.TileUsingForallOp(epilogue, tile_sizes=[plan.thread_tiles[d] for d in parallel])
        structured.FuseIntoContainingOp(op, threaded.forall_op)
        if init is not None:
            structured.FuseIntoContainingOp(init, threaded.forall_op)
        epilogue = threaded.tiled_op
    order = level.loop_order()
    sizes = [level.sizes[d] for d in parallel]
    interchange = [parallel.index(d) for d in (level.interchange or range(len(level.sizes))) if d in parallel]
    peeled = dict(zip(order, level.peeled()))
    loops: list[_Loop] = []
    if any(sizes):
        fused = structured.FuseOp(epilogue, tile_sizes=sizes, tile_interchange=interchange)
        for value, dim in zip(fused.loops, [d for d in order if d in parallel]):
            loops.append(_Loop(value, dim, peeled[dim], 0, len(level.sizes)))
    reductions = [level.sizes[d] if d in plan.reduction_dims else 0 for d in range(len(level.sizes))]
    if any(reductions):
        tiled = structured.TileUsingForOp(_match(func, match), sizes=reductions,
                                          interchange=list(level.interchange) if level.interchange else None)
        for value, dim in zip(tiled.loops, [d for d in order if d in plan.reduction_dims]):
            loops.append(_Loop(value, dim, peeled[dim], 0, len(level.sizes)))
    return loops


def epilogue_fusible(plan: Plan) -> bool:
    """Can ``plan`` take an epilogue: one level whose peeled remainders are not tiled again
    (:func:`_peels` re-tiles the op alone, not its consumer)."""
    if len(plan.levels) != 1:
        return False
    (level,) = plan.levels
    return all(not level.remainder_size(d) for d, peel in zip(level.loop_order(), level.peeled()) if peel)


def _peel(handle: ir.Value) -> ir.Value:
    """Peel loop ``handle``; returns the handle of the remainder loop."""
    for_loop = transform.cast(transform.OperationType.get("scf.for"), handle)
    return loop_ext.LoopPeelOp(_any(), _any(), for_loop).remainder_loop


def _peels(loops: list[_Loop], match: dict[str, ir.Attribute]) -> None:
    """Peel loops innermost first, so outer peels clone already-static bodies.

    A remainder with a ``remainder_size`` is tiled again (and its own
    remainder peeled) right away, before an outer peel clones it.
    """
    for tile_loop in reversed(loops):
        if not tile_loop.peel:
            continue
        rest = _peel(tile_loop.handle)
        if not tile_loop.remainder_size:
            continue
        pieces = _match(rest, match)
        sizes = [0] * tile_loop.rank
        sizes[tile_loop.dim] = tile_loop.remainder_size
        (sub_loop,) = structured.TileUsingForOp(pieces, sizes=sizes).loops
        _peel(sub_loop)


def plan_body(plan: Plan, schedule_id: int) -> SequenceBody:
    """The transform sequence body applying ``plan`` to the op tagged ``schedule_id``."""

    def body(root: ir.Value) -> None:
        match = {SCHEDULE_ID_ATTR: _i64(schedule_id)}
        init_match = {SCHEDULE_INIT_ATTR: _i64(schedule_id)}
        op = _match(root, match)
        func = transform.get_parent_op(_any(), op, op_name="func.func")
        init = _match(root, init_match) if plan.fuse_init else None
        handle = op
        if plan.fold_unit_dims:
            handle = structured.GeneralizeOp(handle).transformed
        if plan.epilogue:
            loops = _epilogue_levels(root, func, handle, init, plan, match)
        else:
            if plan.thread_tiles is not None:
                threaded = structured.TileUsingForallOp(handle, tile_sizes=list(plan.thread_tiles))
                if init is not None:
                    structured.FuseIntoContainingOp(init, threaded.forall_op)
                handle = threaded.tiled_op
            loops = _tile_levels(handle, plan.levels, plan.reduction_dims if plan.fuse_init else None)
        _peels(loops, match)
        _canonicalize(func)
        if plan.fold_unit_dims:
            _apply_patterns(func, structured.ApplyFoldUnitExtentDimsViaSlicesPatternsOp,
                            tensor_ext.ApplyMergeConsecutiveInsertExtractSlicePatternsOp,
                            transform.ApplyCanonicalizationPatternsOp)
        if plan.vectorize:
            # generalized ops and those unit-dims folding rewrote lost their tag; the kernel
            # function holds nothing else but the init
            target = _match(func, ops=["linalg.generic"]) if plan.fold_unit_dims else _match(func, match)
            if plan.fuse_init and plan.fold_unit_dims:
                structured.VectorizeOp(_match(func, ops=["linalg.fill"]))  # folding rewrote the fills too
            elif plan.fuse_init:
                # the init's tiles left after forwarding (usually none: a transfer
                # read of the zeros just written folds to the zero vector)
                structured.VectorizeOp(_match(func, init_match))
            if plan.decompose:
                target = structured.DecomposeOp(target).result
            structured.VectorizeOp(target, vectorize_nd_extract=True)
            _canonicalize(func)

    return body


def build_plan(plan: Plan, schedule_id: int) -> ir.Module:
    """Transform IR (a module, in the current context) applying ``plan`` to the op tagged ``schedule_id``."""
    return build_transform_module(plan_body(plan, schedule_id))


def render_plan(plan: Plan, schedule_id: int) -> str:
    """:func:`build_plan`'s module as text (in a context of its own), for reading."""
    with ir.Context():
        return str(build_plan(plan, schedule_id))


def run_transform_script(payload: ir.Module | ir.Operation, script: str | ir.Module | SequenceBody) -> None:
    """Apply a transform script to ``payload`` (a module or an op).

    ``script`` is a transform module built in ``payload``'s context, a
    :data:`SequenceBody` (built here, in that context) or a transform
    module's text (parsed here; for scripts written as text elsewhere).
    """
    with payload.context:
        if isinstance(script, str):
            transform_module = ir.Module.parse(script)
        elif isinstance(script, ir.Module):
            transform_module = script
        else:
            transform_module = build_transform_module(script)
        entry = transform_module.body.operations[0]
        interpreter.apply_named_sequence(payload.operation, entry, transform_module)


# --------------------------------------------------------------------------
# application
# --------------------------------------------------------------------------


def _collect_linalg_ops(module: ir.Module) -> list[ir.Operation]:
    return ops_where(module, lambda op: op.name.startswith("linalg.") and op.name != "linalg.yield"
                     and len(op.results) > 0)


def strip_schedule_tags(module: ir.Module) -> None:
    """Remove the schedule ids and init / epilogue tags of every op."""
    def visit(op: ir.Operation) -> ir.WalkResult:
        for name in (SCHEDULE_ID_ATTR, SCHEDULE_INIT_ATTR, SCHEDULE_EPILOGUE_ATTR):
            if name in op.attributes:
                del op.attributes[name]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)


def _owner(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


#: plans whose op accumulates into its init: a ``linalg.fill`` init is claimed for the op
#: (a fill of its own instead of a copy of a shared one)
ACCUMULATING_PLANS = ("contraction", "direct-convolution", "kernel-gradient")
#: ... and fused into its tile loops where :func:`init_fusible` allows.  Not a kernel
#: gradient's: its outermost tile loop is a reduction (the images), so the fill would be
#: fused into the thread's loop only and vectorized whole, one vector of the thread's part
INIT_FUSING_PLANS = ("contraction", "direct-convolution")


def fusible_init(
    op: ir.Operation, nest: LoopNest, target: CpuTarget, options: ScheduleOptions
) -> ir.Operation | None:
    """The op producing the init of ``op`` (a contraction or convolution), if it may be fused:
    a ``linalg.fill``, or an elementwise generic (:mod:`.epilogues`: a bias, a shortcut)."""
    if not (options.fuse_init and options.vectorize and nest.vectorizable):
        return None
    if len(op.results) != 1 or 0 in nest.ranges or plan_for(nest, target, options).kind not in ACCUMULATING_PLANS:
        return None
    init = _owner(op.operands[len(op.operands) - 1])
    if init is None or not (init.name == "linalg.fill" or elementwise(init)):
        return None
    init_nest = analyze_linalg_op(init)
    return init if init_nest is not None and init_nest.vectorizable else None


#: plans that may compute their op's elementwise consumer in their tiles (:attr:`Plan.epilogue`)
EPILOGUE_PLANS = ("direct-convolution",)


def fusible_epilogue(
    op: ir.Operation, nest: LoopNest, target: CpuTarget, options: ScheduleOptions
) -> ir.Operation | None:
    """The elementwise consumer of ``op`` (a bias and an activation after a direct convolution)
    that its tiles may compute: ``op``'s result has that one use, read with the identity map
    as an input, in the same block; ``op`` writes its parallel loops in order."""
    if not (options.fuse_epilogues and options.vectorize and nest.vectorizable) or len(op.results) != 1:
        return None
    if plan_for(nest, target, options).kind not in EPILOGUE_PLANS:
        return None
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return None
    user = use_owner(uses[0])
    if not elementwise(user) or user.block != op.block or uses[0].operand_number >= len(user.operands) - 1:
        return None
    rank = len(nest.ranges) - len(nest.reduction_dims)
    maps = indexing_maps(user)
    own = indexing_maps(op)[-1]
    writes = [e.position if isinstance(e, ir.AffineDimExpr) else -1 for e in own.results]
    if maps[uses[0].operand_number] != ir.AffineMap.get_identity(rank) or writes != list(range(rank)):
        return None
    user_nest = analyze_linalg_op(user)
    return user if user_nest is not None and user_nest.vectorizable and user_nest.ranges == tuple(
        nest.ranges[d] for d in range(len(nest.ranges)) if d not in nest.reduction_dims) else None


def _claim_fill_inits(module: ir.Module, target: CpuTarget, options: ScheduleOptions) -> None:
    """Give each op of :data:`ACCUMULATING_PLANS` whose init is a ``linalg.fill`` a fill of its own.

    A fill shared by several contractions (CSE merges identical ones) is
    cloned right before each further user; a fill left without users is
    erased.  Each claimed fill is tagged with :data:`SCHEDULE_INIT_ATTR`
    (its consumer's schedule id is set later).
    """
    unit = ir.UnitAttr.get()
    originals: list[ir.Operation] = []
    for op in _collect_linalg_ops(module):
        nest = analyze_linalg_op(op)
        fill = fusible_init(op, nest, target, options) if nest is not None else None
        index = len(op.operands) - 1
        if fill is None:
            shared = _owner(op.operands[index]) if len(op.results) == 1 and op.operands else None
            if shared is not None and shared.name == "linalg.fill" and len(list(shared.results[0].uses)) > 1:
                # a fill shared by ops that write their init (a convolution scheduled
                # without its init): bufferization would copy it for all but one.  The
                # clone fills an allocation, which CSE does not merge with the original
                clone = shared.clone(ir.InsertionPoint(op))
                with ir.InsertionPoint(clone), op.location:
                    clone.operands[1] = bufferization.AllocTensorOp(clone.results[0].type, []).result
                op.operands[index] = clone.results[0]
            continue
        if SCHEDULE_INIT_ATTR in fill.attributes or len(list(fill.results[0].uses)) > 1:
            clone = fill.clone(ir.InsertionPoint(op))
            op.operands[index] = clone.results[0]
            if SCHEDULE_INIT_ATTR in fill.attributes:
                del clone.attributes[SCHEDULE_INIT_ATTR]
            originals.append(fill)
            fill = clone
        fill.attributes[SCHEDULE_INIT_ATTR] = unit
    for fill in originals:
        if not list(fill.results[0].uses) and SCHEDULE_INIT_ATTR not in fill.attributes:
            fill.erase()


def apply_op_schedules(
    module: ir.Module, target: CpuTarget, options: ScheduleOptions
) -> list[OpScheduleRecord]:
    """Tile and vectorize every linalg op on tensors in ``module``, one op at a time.

    Each op is scheduled in isolation, as a kernel of its own
    (:mod:`dlvm_mlir.backend.kernels`; identical kernels are scheduled once).
    A contraction whose init is a ``linalg.fill`` is scheduled together with
    it (:attr:`Plan.fuse_init`).  A plan whose application fails is reported
    in its record (``error``); a fused plan is retried unfused (its fill then
    scheduled on its own), other plans with vectorization only; if that fails
    too, the op stays a scalar op that the loop lowering handles later.
    A kernel in the tuning database (:mod:`.tuning`) is scheduled with its
    entry's options; in ``search`` mode, one missing from it is searched first.
    """
    groups: dict[int, list[ir.Operation]] = {}
    nests: dict[int, LoopNest] = {}
    fused_inits: set[int] = set()
    epilogues: set[int] = set()
    with module.context:
        i64 = ir.IntegerType.get_signless(64)
        _claim_fill_inits(module, target, options)
        for op in _collect_linalg_ops(module):
            if SCHEDULE_INIT_ATTR in op.attributes or SCHEDULE_EPILOGUE_ATTR in op.attributes:
                continue  # scheduled with its consumer, or its producer
            nest = analyze_linalg_op(op)
            if nest is None:
                continue
            schedule_id = len(groups)
            op.attributes[SCHEDULE_ID_ATTR] = ir.IntegerAttr.get(i64, schedule_id)
            group = [op]
            fill = fusible_init(op, nest, target, options)
            if fill is not None and SCHEDULE_INIT_ATTR in fill.attributes:
                fill.attributes[SCHEDULE_INIT_ATTR] = ir.IntegerAttr.get(i64, schedule_id)
                fused_inits.add(schedule_id)
                group.insert(0, fill)
            epilogue = fusible_epilogue(op, nest, target, options)
            # one producer per consumer (fuzz seed 4040: a tangent's sum of two convolutions)
            if epilogue is not None and SCHEDULE_EPILOGUE_ATTR not in epilogue.attributes:
                epilogue.attributes[SCHEDULE_EPILOGUE_ATTR] = ir.IntegerAttr.get(i64, schedule_id)
                epilogues.add(schedule_id)
                group.append(epilogue)
            groups[schedule_id] = group
            nests[schedule_id] = nest
    kernels = outline_kernels(module, groups)
    records_by_id: dict[int, list[OpScheduleRecord]] = {}
    next_id = len(groups)
    for kernel in kernels:
        nest = nests[kernel.schedule_id]
        # a kernel in the tasks of a loop already split over the threads runs on one
        tasks = _parallel_tasks(kernel.call) if kernel.call is not None else 1
        kernel_options = options_for_kernel(kernel.function, nest, target,
                                            replace(options, threads=1) if tasks > 1 else options, kernel.call,
                                            tasks)
        records = _schedule_kernel(kernel, nest, kernel.schedule_id in fused_inits,
                                   kernel.schedule_id in epilogues, next_id, target, kernel_options)
        next_id += len(records)
        records_by_id[kernel.schedule_id] = records
        for duplicate in kernel.duplicates:
            records_by_id[duplicate] = [replace(record, shared=True) for record in records]
    inline_kernels(module, kernels if options.share_kernels else [])
    strip_schedule_tags(module)
    return [record for schedule_id in sorted(records_by_id) for record in records_by_id[schedule_id]]


def _parallel_tasks(op: ir.Operation) -> int:
    """How many tasks of the ``scf.forall`` loops around ``op`` run it (1: none; a dynamic
    bound counts as 2)."""
    tasks = 1
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "scf.forall":
            bounds = list(ir.DenseI64ArrayAttr(parent.attributes["staticUpperBound"]))
            tasks *= math.prod(b if b >= 0 else 2 for b in bounds)
        parent = parent.parent
    return tasks


def _schedule_kernel(
    kernel: Kernel, nest: LoopNest, has_init: bool, has_epilogue: bool, next_id: int, target: CpuTarget,
    options: ScheduleOptions,
) -> list[OpScheduleRecord]:
    """Schedule the op of one kernel (with its fill init and its epilogue): its records."""
    payload, schedule_id = kernel.function, kernel.schedule_id
    plan = plan_for(nest, target, options)
    if has_init and plan.kind in INIT_FUSING_PLANS:
        plan = replace(plan, fuse_init=True, reduction_dims=nest.reduction_dims)
        if not init_fusible(plan):
            plan = replace(plan, fuse_init=False)
    if has_epilogue and plan.kind in EPILOGUE_PLANS and epilogue_fusible(plan):
        plan = replace(plan, epilogue=True, reduction_dims=nest.reduction_dims)
    record = OpScheduleRecord(op_name=nest.op_name, ranges=nest.ranges, plan=plan, hint=nest.hint)
    records = []
    # an init or an epilogue not fused goes on its own, first: the op's schedule
    # canonicalizes the whole kernel, which drops their tags
    if has_init and not plan.fuse_init:
        records.extend(_schedule_alone(payload, SCHEDULE_INIT_ATTR, schedule_id, next_id, target, options))
    if has_epilogue and not plan.epilogue:
        records.extend(_schedule_alone(payload, SCHEDULE_EPILOGUE_ATTR, schedule_id, next_id + len(records),
                                       target, options))
    records.append(record)
    if plan.kind == "scalar":
        return records
    if not _apply(payload, record, plan, schedule_id) and (plan.fuse_init or plan.epilogue):
        # (an epilogue whose tag the failed script dropped is left to the loop lowering)
        for fused, attribute in ((plan.fuse_init, SCHEDULE_INIT_ATTR), (plan.epilogue, SCHEDULE_EPILOGUE_ATTR)):
            if fused:
                records.extend(_schedule_alone(payload, attribute, schedule_id, next_id + len(records) - 1,
                                               target, options))
        if _run_plan(payload, replace(plan, fuse_init=False, epilogue=False), schedule_id)[1] is None:
            record.fallback = "without the fused init and epilogue"
    if not record.applied and not record.fallback:
        record.fallback = _fallback(payload, schedule_id)
    return records


def _build(payload: ir.Operation, plan: Plan, schedule_id: int) -> ir.Module:
    """:func:`build_plan` in ``payload``'s context."""
    with payload.context:
        return build_plan(plan, schedule_id)


def _last_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else repr(exc)


def _run(payload: ir.Operation, script: ir.Module) -> str | None:
    """Run a transform script on ``payload``: ``None``, or the error's last line."""
    try:
        run_transform_script(payload, script)
        return None
    except Exception as exc:  # the interpreter reports failures as ValueError
        return _last_line(exc)


def _run_plan(payload: ir.Operation, plan: Plan, schedule_id: int) -> tuple[ir.Module | None, str | None]:
    """Build ``plan`` and run it on ``payload``: the script (None if it could not be
    built) and ``None`` or the error's last line. A script the transform dialect's
    verifier rejects while it is built fails like one that fails to apply: the op
    falls back (as a parse error of the textual scripts used to)."""
    try:
        script = _build(payload, plan, schedule_id)
    except Exception as exc:  # noqa: BLE001 - an unbuildable plan is a failed plan
        return None, f"building the schedule failed: {_last_line(exc)}"
    return script, _run(payload, script)


def _apply(payload: ir.Operation, record: OpScheduleRecord, plan: Plan, schedule_id: int) -> bool:
    """Apply ``plan`` to op ``schedule_id``; whether it applied (else the error is recorded)."""
    script, error = _run_plan(payload, plan, schedule_id)
    record.script = "" if script is None else str(script)
    record.error = error or ""
    record.applied = not record.error
    return record.applied


def _fallback(payload: ir.Operation, schedule_id: int) -> str:
    """After a failed schedule: vectorize op ``schedule_id`` untiled, or leave it to scalar loops."""
    plan = Plan(kind="vectorize-only", note="fallback")
    return "vectorized without tiling" if _run_plan(payload, plan, schedule_id)[1] is None else "scalar loops"


def _schedule_alone(
    payload: ir.Operation, attribute: str, owner_id: int, first_id: int, target: CpuTarget,
    options: ScheduleOptions,
) -> list[OpScheduleRecord]:
    """Schedule the (unfused) init ops or epilogue of ``owner_id`` (tagged ``attribute``) as
    ops of their own."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if attribute in op.attributes:
            try:
                if ir.IntegerAttr(op.attributes[attribute]).value == owner_id:
                    found.append(op)
            except ValueError:
                pass
        return ir.WalkResult.ADVANCE

    records = []
    with payload.context:
        payload.walk(visit, ir.WalkOrder.PRE_ORDER)
        i64 = ir.IntegerType.get_signless(64)
        for offset, op in enumerate(found):
            del op.attributes[attribute]
            nest = analyze_linalg_op(op)
            if nest is None:
                continue
            schedule_id = first_id + offset
            op.attributes[SCHEDULE_ID_ATTR] = ir.IntegerAttr.get(i64, schedule_id)
            plan = plan_for(nest, target, options)
            record = OpScheduleRecord(op_name=nest.op_name, ranges=nest.ranges, plan=plan, hint=nest.hint)
            records.append(record)
            if plan.kind != "scalar" and not _apply(payload, record, plan, schedule_id):
                record.fallback = _fallback(payload, schedule_id)
    return records


def _pre_bufferize_cleanup(root: ir.Value) -> None:
    funcs = _match(root, ops=["func.func"])
    _apply_patterns(
        funcs,
        vector_ext.ApplyVectorReductionToContractPatternsOp,
        vector_ext.ApplyTransferPermutationPatternsOp,
    )
    _apply_patterns(
        funcs,
        tensor_ext.ApplyFoldTensorSubsetOpsIntoVectorTransfersPatternsOp,
        transform.ApplyCanonicalizationPatternsOp,
    )
    transform.ApplyCommonSubexpressionEliminationOp(funcs)
    loop_ext.HoistLoopInvariantSubsetsOp(_match(root, ops=["scf.for"]))
    _apply_patterns(funcs, transform.ApplyCanonicalizationPatternsOp)


def read_splat_writes(module: ir.Module) -> int:
    """Reads of a tensor that a splat constant was written over whole become the constant;
    the write goes when nothing else reads it.  The count of reads.

    A fused zero fill becomes a write of zeros over the tile and, once the
    accumulators are hoisted, a read of it of another rank (unit dims folded),
    which ``transfer_read`` folding does not forward.  With an epilogue
    (:attr:`Plan.epilogue`) the consumer alone stores the accumulators: left,
    the write would land in the consumer's output (the op's init and the
    consumer's were one empty), and bufferization would copy the output around
    it.
    """
    found: list[tuple[ir.Operation, ir.Attribute]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name != "vector.transfer_read":
            return ir.WalkResult.ADVANCE
        write = _owner(op.operands[0])
        if write is None or write.name != "vector.transfer_write":
            return ir.WalkResult.ADVANCE
        rank = ir.RankedTensorType(write.operands[1].type).rank
        in_bounds = all(ir.BoolAttr(b).value for b in ir.ArrayAttr(op.attributes["in_bounds"]))
        if len(write.operands) != 2 + rank or len(op.operands) != 2 + rank or not in_bounds:
            return ir.WalkResult.ADVANCE  # a masked write or read, or a read past the end
        constant = _owner(write.operands[0])
        if constant is None or constant.name != "arith.constant":
            return ir.WalkResult.ADVANCE
        value = constant.attributes["value"]
        whole = ir.VectorType(write.operands[0].type).shape == ir.RankedTensorType(write.operands[1].type).shape
        if whole and isinstance(value, ir.DenseElementsAttr) and ir.DenseElementsAttr(value).is_splat:
            found.append((op, ir.DenseElementsAttr(value).get_splat_value()))
        return ir.WalkResult.ADVANCE

    with module.context:
        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        for read, value in found:
            vector_type = ir.VectorType(read.results[0].type)
            with ir.InsertionPoint(read), read.location:
                splat = ir.DenseElementsAttr.get_splat(vector_type, value)
                constant = ir.Operation.create("arith.constant", results=[vector_type], attributes={"value": splat})
            read.results[0].replace_all_uses_with(constant.results[0])
            write = _owner(read.operands[0])
            read.erase()
            if write is not None and not list(write.results[0].uses):
                write.erase()
    return len(found)



PRE_BUFFERIZE_CLEANUP: SequenceBody = _pre_bufferize_cleanup
"""Vector cleanups on tensors, then loop-invariant accumulators (e.g. the
register tile of C in a matmul's k loop) hoisted into loop-carried vectors.

Two pattern groups: with leading-unit-dim casts, transfer permutations,
subset folding and canonicalization in one greedy rewrite, the rewrite never
converges on vectorized 1-D convolutions.  Hoisting happens here, on tensors,
because after bufferization it needs ``fold_memref_alias_ops``, which loops
forever on transfers through ``memref.expand_shape`` (MLIR 22)."""


HOIST_TRANSFERS_ATTR = "dlvm.hoist_transfers"
"""Marks the functions whose loop-invariant vector transfers may be hoisted after bufferization
(:func:`mark_transfer_hoisting`)."""


def mark_transfer_hoisting(module: ir.Module) -> None:
    """Mark the functions in which hoisting vector transfers out of loops is sound.

    Upstream ``hoist_redundant_vector_transfers`` takes a read for loop-invariant
    when no op in the loop writes to the read's memref *value* or its views; a
    memref chosen by ``arith.select`` or returned by ``scf.if`` (bufferized
    ``scf.if`` on tensors) aliases buffers that the loop may write under
    their own names. dlvm-fuzz seed 404: the adjoint of a loop over
    ``tensor.extract`` with bounds checks read the cotangent's buffer once,
    before the loop wrote it. Functions with such memrefs are not hoisted.
    """
    with module.context:
        for op in module.body.operations:
            if op.operation.name != "func.func":
                continue
            aliased = False

            def visit(inner: ir.Operation) -> ir.WalkResult:
                nonlocal aliased
                if inner.name in ("arith.select", "scf.if") and any(
                    isinstance(r.type, ir.MemRefType) for r in inner.results
                ):
                    aliased = True
                    return ir.WalkResult.INTERRUPT
                return ir.WalkResult.ADVANCE

            op.operation.walk(visit)
            if aliased:
                if HOIST_TRANSFERS_ATTR in op.operation.attributes:
                    del op.operation.attributes[HOIST_TRANSFERS_ATTR]
            else:
                op.operation.attributes[HOIST_TRANSFERS_ATTR] = ir.UnitAttr.get()


#: a copy bufferization left (a ``linalg.copy`` between memrefs, see ``rewrite_strided_copies``)
#: of at most this many elements, unit stride along its last dimension on both sides, not of
#: ``i1``, is vectorized whole instead of becoming scalar loops: a tile's slice copied into a
#: padded plane (:func:`~dlvm_mlir.backend.conv_grouped._per_tap_by_planes`), 4 x 16 floats
SMALL_COPY_ELEMENTS = 4096
SMALL_COPY_ATTR = "dlvm.vectorize_copy"
#: a larger such copy in a function's body, whose last dimension has at most
#: :data:`LARGE_COPY_ROW` elements, is split over the threads along its first dimension and
#: copied a row (its last dimension) at a time, vectorized: bufferization's copies of values
#: that could not be computed in place (a max pooling gradient's phases, 4-8 MB in the
#: CNN step at batch 128), which were serial scalar loops.  Its attribute's value numbers it.
LARGE_COPY_ROW = 1024
LARGE_COPY_ATTR = "dlvm.schedule_copy"


def _copy_types(op: ir.Operation) -> tuple[ir.MemRefType, ir.MemRefType] | None:
    """The static memref types of a ``linalg.copy`` that may be vectorized."""
    types = [v.type for v in op.operands]
    if len(types) != 2 or not all(isinstance(t, ir.MemRefType) for t in types):
        return None
    source, dest = (ir.MemRefType(t) for t in types)
    if not (source.has_static_shape and dest.has_static_shape) or source.element_type != dest.element_type:
        return None
    element = source.element_type
    if isinstance(element, ir.IntegerType) and element.width % 8:
        return None  # i1 buffers become bytes after vector lowering (boolmem.py)
    if not source.shape or not all(t.get_strides_and_offset()[0][-1] == 1 for t in (source, dest)):
        return None
    return source, dest


def mark_copies(module: ir.Module, threads: int) -> dict[int, list[int]]:
    """Tag the copies :data:`SMALL_COPY_ELEMENTS` and :data:`LARGE_COPY_ATTR` describe for
    :func:`post_bufferize_script`: the threads of each large copy's dimensions, by its number."""
    large: dict[int, list[int]] = {}
    with module.context:
        i64 = ir.IntegerType.get_signless(64)
        for op in ops_where(module, lambda op: op.name == "linalg.copy"):
            types = _copy_types(op)
            if types is None:
                continue
            shape = types[0].shape
            if math.prod(shape) <= SMALL_COPY_ELEMENTS:
                op.attributes[SMALL_COPY_ATTR] = ir.UnitAttr.get()
                continue
            parent = op.parent
            if shape[-1] > LARGE_COPY_ROW or parent is None or parent.operation.name != "func.func":
                continue
            op.attributes[LARGE_COPY_ATTR] = ir.IntegerAttr.get(i64, len(large))
            large[len(large)] = [min(threads, shape[0]) if threads > 1 else 0] + [0] * (len(shape) - 1)
    return large


def post_bufferize_script(vector_bits: int, large_copies: dict[int, list[int]] | None = None) -> SequenceBody:
    """Vectorization of the copies :func:`mark_copies` tagged (the large ones split over
    the threads ``large_copies`` gives, then a row at a time), hoisting of
    loop-invariant vector transfers (in the functions :func:`mark_transfer_hoisting`
    marked), then vector lowering to 1-D ops.

    The pattern groups are kept apart on purpose: several combinations never
    converge in one greedy rewrite (MLIR 22), e.g. ``lower_shape_cast`` with
    the canonicalizer on shape casts with unit dimensions (runs out of
    memory), or leading-unit-dim casts with contraction lowering on
    vectorized 1-D convolutions (loops forever).
    """
    lowering = vector_ext.VectorTransposeLowering
    transpose = lowering.Shuffle16x16 if vector_bits >= 512 else lowering.EltWise

    def body(root: ir.Value) -> None:
        structured.VectorizeOp(_match(root, {SMALL_COPY_ATTR: ir.UnitAttr.get()}, ops=["linalg.copy"]))
        i64 = ir.IntegerType.get_signless(64)
        for number, threads_by_dim in (large_copies or {}).items():
            copy = _match(root, {LARGE_COPY_ATTR: ir.IntegerAttr.get(i64, number)}, ops=["linalg.copy"])
            if any(threads > 1 for threads in threads_by_dim):
                copy = structured.TileUsingForallOp(copy, num_threads=threads_by_dim).tiled_op
            if len(threads_by_dim) > 1:
                copy = structured.TileUsingForOp(copy, sizes=[1] * (len(threads_by_dim) - 1) + [0]).tiled_linalg_op
            structured.VectorizeOp(copy)
        funcs = _match(root, ops=["func.func"])
        transform.ApplyCommonSubexpressionEliminationOp(funcs)
        _apply_patterns(funcs, transform.ApplyCanonicalizationPatternsOp)
        transform.ApplyCommonSubexpressionEliminationOp(funcs)
        safe = _match(root, {HOIST_TRANSFERS_ATTR: ir.UnitAttr.get()}, ops=["func.func"])
        structured.HoistRedundantVectorTransfersOp(_any(), safe)
        hoisted = _match(root, ops=["func.func"])
        _apply_patterns(hoisted, vector_ext.ApplyCastAwayVectorLeadingOneDimPatternsOp)
        _apply_patterns(
            hoisted,
            lambda: vector_ext.ApplyLowerContractionPatternsOp(
                lowering_strategy=vector_ext.VectorContractLowering.OuterProduct
            ),
        )
        _apply_patterns(
            hoisted,
            lambda: vector_ext.ApplyLowerMultiReductionPatternsOp(
                lowering_strategy=vector_ext.VectorMultiReductionLowering.InnerReduction
            ),
        )
        _apply_patterns(hoisted, vector_ext.ApplyTransferPermutationPatternsOp)
        _apply_patterns(
            hoisted,
            lambda: vector_ext.ApplyTransferToScfPatternsOp(max_transfer_rank=1, full_unroll=True),
            lambda: vector_ext.ApplyLowerTransferPatternsOp(max_transfer_rank=1),
            vector_ext.ApplyLowerOuterProductPatternsOp,
            lambda: vector_ext.ApplyLowerTransposePatternsOp(lowering_strategy=transpose),
            vector_ext.ApplyLowerBroadcastPatternsOp,
            vector_ext.ApplyLowerMasksPatternsOp,
        )
        _apply_patterns(hoisted, vector_ext.ApplyLowerShapeCastPatternsOp)
        transform.ApplyCommonSubexpressionEliminationOp(hoisted)

    return body
