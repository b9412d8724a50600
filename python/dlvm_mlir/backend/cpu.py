"""The CPU pipeline: linalg on tensors -> LLVM dialect, one function per stage.

Input: a module of ``func`` / ``scf`` / ``cf`` / ``linalg`` / ``tensor`` /
``arith`` / ``math`` ops on ranked, statically shaped tensors.  Output: the
same module in the LLVM dialect, ready for LLVM code generation
(:mod:`dlvm_mlir.backend.artifact`).

Stages (each takes the module and the options and rewrites the module in
place; :data:`CPU_STAGES` lists them in order and any stage's IR can be dumped
with ``dump_dir=``, ``on_stage=`` or ``$DLVM_MLIR_DUMP_DIR``). Each stage is a
list of steps (:mod:`dlvm_mlir.passes.steps`: upstream passes and named
Python functions), :data:`CPU_STAGE_STEPS`: the stage function runs them,
and ``dlvm-cpu-pipeline`` hands them to the pass manager one by one, so that
``--mlir-timing`` and ``--mlir-print-ir-after-all`` see each:

``entry-points``
    every public function ``f`` becomes a C-interface entry point
    ``dlvm_f`` whose tensor arguments are read-only and whose scalar results
    are returned as rank-0 tensors; the original body is inlined into it
    (recursive functions stay private functions). Functions defined in the
    module are renamed ``__dlvm_fn_f``, so no user name can capture or clash
    with a libc / libm / runtime symbol.
``fuse``
    the ``dlvm-kernel-fusion`` pass (:mod:`dlvm_mlir.backend.kernel_fusion`):
    elementwise ops on tensors become ``linalg.generic`` ops and generic
    contractions become named ones; named elementwise / broadcast /
    transpose ops and ``linalg.reduce`` are generalized, and elementwise
    producers are fused into their single consumer: chains of elementwise
    ops, a matmul's bias + activation epilogue (one nest consuming the
    matmul: named contractions stay named), elementwise producers of
    reductions.
``approximate-math``
    ``math.expm1/log1p`` become accurate f64 ``arith`` kernels; f32
    ``math.exp/log/tanh/erf`` become polynomial ``arith`` code
    (:mod:`dlvm_mlir.backend.mathapprox`), so they vectorize.
``pack``
    f16 inputs of f32-accumulating contractions are extended to f32 copies
    (:mod:`dlvm_mlir.backend.widen_half`); convolutions become direct
    convolutions (strided ones by phases; those of a padded argument image by
    image in a parallel loop), lane-wise kernel-gradient sums,
    im2col contractions or per-tap multiply-adds; pooling windows that tile
    their input become reductions of a reshaped input; the B operand of large
    contractions is copied into contiguous panels of the register-tile width
    (:mod:`dlvm_mlir.backend.packing`).
``tile-and-vectorize``
    large reductions without a parallel loop are split into partial
    reductions (:mod:`dlvm_mlir.backend.reduction_split`), then
    per-op transform-dialect schedules (:mod:`dlvm_mlir.backend.schedule`):
    thread split with ``scf.forall``, cache and register tiles, peeling of
    partial tiles, vectorization; then loop-invariant accumulators (a
    matmul's register tile of C) become loop-carried vectors, and vector reads
    of expanded shapes read whole rows (:mod:`dlvm_mlir.backend.flat_reads`).
``bufferize``
    CFG loops lifted to ``scf`` and poison tensors zeroed (what bufferization
    and deallocation accept), One-Shot Bufferize over function boundaries,
    results turned into caller-allocated out-parameters, deallocation.
``lower-vectors``
    ``vector.contract`` to broadcast-FMAs, n-D vectors to 1-D, prefetches of a
    convolution kernel's next channel step where its tap loop streams rows
    (:mod:`dlvm_mlir.backend.prefetch`), leftover linalg ops to loops, ``i1``
    buffers stored as bytes (:mod:`dlvm_mlir.backend.boolmem`).
``parallelize``
    ``scf.forall`` -> ``scf.parallel`` -> async runtime tasks (one or two
    per thread), run on dlvm's spinning thread pool
    (dialect/python/AsyncRuntime.cpp).
``to-llvm``
    everything to the LLVM dialect.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection

from mlir import ir
from mlir.dialects import func as func_d
from mlir.dialects import linalg as linalg_d
from mlir.dialects import arith as arith_d
from mlir.dialects import bufferization as bufferization_d
from mlir.dialects import memref as memref_d
from mlir.dialects import tensor as tensor_d

from dlvm_mlir.crash_guard import report_stage
from dlvm_mlir.errors import source_location
from dlvm_mlir.backend.kernel_fusion import FusionOptions, fusion_steps, normalize_steps
from dlvm_mlir.passes import Call, Passes, Step, run_passes, run_steps

from .options import CpuOptions
from .boolmem import bool_constants_as_bytes, widen_bool_memrefs
from .mathapprox import approximate_math, expand_accurate_math
from .conv_grouped import grouped_convolutions
from .linalg_rewrite import defining_op, ops_where
from .widen_half import widen_half_contractions
from .conv_direct import direct_convolutions
from .flat_reads import flat_reads
from .prefetch import prefetch_next_steps
from .conv_im2col import im2col_convolutions
from .conv_kernel_grad import kernel_gradient_convolutions
from .pooling import tiled_poolings
from .phases import strided_slices_as_phases
from .scheduled_copies import read_padded_interiors, scheduled_copies
from . import parallel_dispatch
from .collapse_dims import collapse_contraction_reductions
from .epilogues import epilogues_into_inits
from .packing import pack_contractions
from .reduction_split import split_reductions
from .runtime import (
    DEFINITION_PREFIX,
    ENTRY_PREFIX,
    ExecutionError,
    FunctionSignature,
    spec_from_type,
    symbol_is_loaded,
)
from .schedule import (
    PRE_BUFFERIZE_CLEANUP,
    read_splat_writes,
    OpScheduleRecord,
    apply_op_schedules,
    mark_copies,
    post_bufferize_script,
    mark_transfer_hoisting,
    run_transform_script,
)

__all__ = [
    "CpuOptions",
    "LoweringResult",
    "CPU_STAGES",
    "CPU_STAGE_STEPS",
    "lower_to_llvm_cpu",
    "entry_point_signatures",
]


@dataclass
class LoweringResult:
    """The lowered module plus what the pipeline learned on the way."""

    module: ir.Module
    signatures: list[FunctionSignature]
    schedules: list[OpScheduleRecord] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def uses_async_runtime(self) -> bool:
        return "mlirAsyncRuntime" in str(self.module)


def _functions(module: ir.Module) -> list[func_d.FuncOp]:
    return [op for op in module.body.operations if isinstance(op, func_d.FuncOp)]


def _is_public_definition(fn: func_d.FuncOp) -> bool:
    visibility = fn.attributes["sym_visibility"] if "sym_visibility" in fn.attributes else None
    is_public = visibility is None or ir.StringAttr(visibility).value == "public"
    return is_public and len(fn.body.blocks) > 0


# --------------------------------------------------------------------------
# stage: entry points
# --------------------------------------------------------------------------


def entry_point_signatures(module: ir.Module) -> list[FunctionSignature]:
    """Signatures of the public functions (before ``entry-points`` runs).

    A function whose types dlvm-to-linalg made signless keeps its original
    type in ``dlvm.source_type``: unsigned integers are ``ui8`` ... ``ui64``
    (numpy ``uint8`` ... ``uint64``) at the entry point, with the same bits."""
    signatures = []
    for fn in _functions(module):
        if not _is_public_definition(fn):
            continue
        ftype = fn.type
        if "dlvm.source_type" in fn.attributes:
            ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["dlvm.source_type"]).value)
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        try:
            inputs = tuple(spec_from_type(t) for t in ftype.inputs)
            results = tuple(spec_from_type(t) for t in ftype.results)
        except ExecutionError as exc:
            raise ExecutionError(f"@{name}: {exc}", source_location(fn.location)) from exc
        signatures.append(FunctionSignature(name=name, inputs=inputs, results=results))
    return signatures


def _signature_text(ftype: ir.FunctionType) -> str:
    ins = ", ".join(str(t) for t in ftype.inputs)
    outs = ", ".join(str(t) for t in ftype.results)
    return f"({ins}) -> ({outs})"


def _entry_wrapper_text(name: str, impl: str, ftype: ir.FunctionType) -> str:
    """A public C-interface function calling ``impl``; scalar results become rank-0 tensors."""
    args, arg_uses = [], []
    for i, t in enumerate(ftype.inputs):
        attr = " {bufferization.writable = false}" if isinstance(t, ir.RankedTensorType) else ""
        args.append(f"%a{i}: {t}{attr}")
        arg_uses.append(f"%a{i}")
    in_types = ", ".join(str(t) for t in ftype.inputs)
    out_types = ", ".join(str(t) for t in ftype.results)
    lines = []
    n_results = len(ftype.results)
    call = f'func.call @"{impl}"({", ".join(arg_uses)}) : ({in_types}) -> ({out_types})'
    lines.append(f"  %r:{n_results} = {call}" if n_results else f"  {call}")
    returned, returned_types = [], []
    for i, t in enumerate(ftype.results):
        if isinstance(t, ir.RankedTensorType):
            returned.append(f"%r#{i}")
            returned_types.append(str(t))
        else:
            lines.append(f"  %t{i} = tensor.from_elements %r#{i} : tensor<{t}>")
            returned.append(f"%t{i}")
            returned_types.append(f"tensor<{t}>")
    ret = f"  func.return {', '.join(returned)} : {', '.join(returned_types)}" if returned else "  func.return"
    lines.append(ret)
    header = (
        f'func.func @"{name}"({", ".join(args)}) -> ({", ".join(returned_types)}) '
        "attributes {llvm.emit_c_interface} {"
    )
    return "\n".join([header, *lines, "}"])


def _check_externals(module: ir.Module) -> None:
    """Functions still declared without a body (after symbol-dce: called ones) must be
    C functions on scalars that the process defines, e.g. libm's ``sinf``."""
    for fn in _functions(module):
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        if len(fn.body.blocks) != 0:
            continue
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        aggregate = [str(t) for t in [*ftype.inputs, *ftype.results] if not _is_c_scalar(t)]
        if aggregate:
            raise ExecutionError(
                f"@{name} is declared without a body on {aggregate[0]}: only functions of integers and floats "
                "can be linked to C symbols (libc, libm, the runtime)", source_location(fn.location)
            )
        if not symbol_is_loaded(name):
            raise ExecutionError(
                f"@{name} is declared without a body and no loaded library defines it", source_location(fn.location)
            )


def _is_c_scalar(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.FloatType, ir.IndexType))


def entry_points_steps(options: CpuOptions | None = None) -> list[Step]:
    """Wrap each public function into a C-interface entry point and inline (shared with the GPU).

    Every function defined in the module is renamed out of the C namespace
    (see :data:`ENTRY_PREFIX`); declarations without a body keep their names.
    """
    return [
        Call("entry-points", _wrap_entry_points),
        Passes("inline,symbol-dce,canonicalize,cse"),
        Call("check-externals", _check_externals),
    ]


def stage_entry_points(module: ir.Module, options: CpuOptions | None) -> None:
    """:func:`entry_points_steps`."""
    run_steps(module, entry_points_steps(options))


def _wrap_entry_points(module: ir.Module) -> None:
    with module.context, ir.Location.unknown():
        wrappers: list[str] = []
        declarations: list[str] = []
        for fn in _functions(module):
            if len(fn.body.blocks) == 0:
                continue
            public = _is_public_definition(fn)
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            impl = DEFINITION_PREFIX + name
            ir.SymbolTable.replace_all_symbol_uses(name, impl, module.operation)
            ir.SymbolTable.set_symbol_name(fn, impl)
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
            if not public:
                continue
            wrappers.append(_entry_wrapper_text(ENTRY_PREFIX + name, impl, fn.type))
            declarations.append(f'func.func private @"{impl}"{_signature_text(fn.type)}')
        if wrappers:
            # the declarations only make the wrappers verify on their own
            parsed = ir.Module.parse("\n".join(declarations + wrappers))
            for op in list(parsed.body.operations)[len(declarations) :]:
                op.detach_from_parent()
                module.body.append(op)


# --------------------------------------------------------------------------
# stage: fusion
# --------------------------------------------------------------------------


#: CPU: reductions fuse with their elementwise producers; shared producers are
#: not recomputed (a softmax's exp(x - max) is read back from cache instead)
CPU_FUSION = FusionOptions(reductions=True, duplicate_producers=0)


def fuse_steps(options: CpuOptions) -> list[Step]:
    """Elementwise ops -> generic ops, then fuse elementwise producers into consumers.

    One implementation with the ``dlvm-kernel-fusion`` pass
    (:mod:`dlvm_mlir.backend.kernel_fusion`).
    """
    return normalize_steps() + (fusion_steps(CPU_FUSION) if options.fuse_elementwise else [])


def stage_fuse(module: ir.Module, options: CpuOptions) -> None:
    """:func:`fuse_steps`."""
    run_steps(module, fuse_steps(options))


# --------------------------------------------------------------------------
# stage: math approximations
# --------------------------------------------------------------------------


def approximate_math_steps(options: CpuOptions) -> list[Step]:
    """expm1/log1p -> accurate f64 kernels (always: upstream lowers them to
    exp(x) - 1 and log(1 + x)); with fast-math, f32/f16 exp, log, tanh, erf ->
    arith polynomials (vectorizable, no libm calls); canonicalize and cse if
    anything changed."""

    def approximate(module: ir.Module) -> None:
        count = expand_accurate_math(module)
        if options.fast_math_approximations:
            count += approximate_math(module)
        if count:
            run_passes(module, "canonicalize,cse")

    return [Call("approximate-math", approximate)]


def stage_approximate_math(module: ir.Module, options: CpuOptions) -> None:
    """:func:`approximate_math_steps`."""
    run_steps(module, approximate_math_steps(options))


# --------------------------------------------------------------------------
# stage: operand packing
# --------------------------------------------------------------------------


def pack_steps(options: CpuOptions) -> list[Step]:
    """Extend the f16 inputs of f32-accumulating contractions to f32
    (:mod:`dlvm_mlir.backend.widen_half`), rewrite 2-D convolutions as direct convolutions
    (:mod:`dlvm_mlir.backend.conv_direct`), kernel gradients as lane-wise partial sums
    (:mod:`dlvm_mlir.backend.conv_kernel_grad`), the remaining large ones as im2col + contraction
    (:mod:`dlvm_mlir.backend.conv_im2col`) and depthwise ones as one multiply-add per
    tap (over padded planes, one at a time) or output position
    (:mod:`dlvm_mlir.backend.conv_grouped`), biases and shortcuts added to
    a convolution's or matmul's result as its init (:mod:`dlvm_mlir.backend.epilogues`), pooling windows that tile
    their input as reductions of a reshaped input (:mod:`dlvm_mlir.backend.pooling`), pads of
    arguments and copying slice insertions as scheduled fills and copies
    (:mod:`dlvm_mlir.backend.scheduled_copies`) after strided slices became views of one
    phase copy (:mod:`dlvm_mlir.backend.phases`), returned reshapes computed in the result's
    buffer (:func:`reshaped_results_in_place`), merge the reduction loops of
    contractions that travel together (:mod:`dlvm_mlir.backend.collapse_dims`),
    then copy the streamed operand of large contractions into contiguous panels;
    canonicalize and cse after packing or if anything changed."""
    if not options.vectorize:
        return []

    def pack(module: ir.Module) -> None:
        changed = bool(widen_half_contractions(module))
        changed |= bool(bool_constants_as_bytes(module))
        if options.schedule.direct_convolutions:
            changed |= bool(direct_convolutions(module, options.target, options.threads))
            changed |= bool(kernel_gradient_convolutions(module, options.target, options.threads))
        changed |= bool(options.im2col and im2col_convolutions(module))
        changed |= bool(grouped_convolutions(module, options.threads))
        changed |= bool(epilogues_into_inits(module))
        changed |= bool(tiled_poolings(module))
        changed |= bool(strided_slices_as_phases(module))
        changed |= bool(scheduled_copies(module))
        changed |= bool(reshaped_results_in_place(module))
        changed |= collapse_contraction_reductions(module)
        if options.pack_operands:
            pack_contractions(module, options.target, options.schedule)
        elif changed:
            run_passes(module, "canonicalize,cse")

    return [Call("pack", pack), *([Passes("canonicalize,cse")] if options.pack_operands else [])]


def stage_pack(module: ir.Module, options: CpuOptions) -> None:
    """:func:`pack_steps`."""
    run_steps(module, pack_steps(options))


# --------------------------------------------------------------------------
# stage: tiling and vectorization
# --------------------------------------------------------------------------


def tile_and_vectorize_steps(options: CpuOptions) -> list[Step]:
    """Split large full reductions (so threads can share them), apply the
    per-op transform schedules (outcome: their :class:`OpScheduleRecord`
    list), then vector cleanups on tensors (a transform script; vector reads of
    expanded shapes as whole-row reads, :mod:`.flat_reads`)."""
    return [
        Call("split-reductions", lambda module: split_reductions(module, options.schedule)),
        Call("schedules", lambda module: apply_op_schedules(module, options.target, options.schedule)),
        Call("vector-cleanup", lambda module: run_transform_script(module, PRE_BUFFERIZE_CLEANUP)),
        Call("flat-reads", flat_reads),
        Call("splat-reads", read_splat_writes),
    ]


def stage_tile_and_vectorize(module: ir.Module, options: CpuOptions) -> list[OpScheduleRecord]:
    """:func:`tile_and_vectorize_steps`; the schedules applied."""
    return run_steps(module, tile_and_vectorize_steps(options))["schedules"]  # type: ignore[return-value]


# --------------------------------------------------------------------------
# stage: bufferization
# --------------------------------------------------------------------------


def _is_contiguous(memref_type: ir.MemRefType) -> bool:
    layout = memref_type.layout
    if isinstance(layout, ir.AffineMapAttr):
        return layout.value == ir.AffineMap.get_identity(memref_type.rank)
    strides, _ = memref_type.get_strides_and_offset()
    expected, running = [], 1
    for size in reversed(memref_type.shape):
        expected.append(running)
        running *= size
    return memref_type.has_static_shape and list(strides) == expected[::-1]


def copies_to_linalg(module: ir.Module, selects: Callable[[ir.Operation], bool]) -> int:
    """Replace each ``memref.copy`` that ``selects`` accepts by a ``linalg.copy``.

    Returns how many were rewritten.
    """
    copies = ops_where(module, lambda op: op.name == "memref.copy" and selects(op))
    with module.context, ir.Location.unknown():
        for op in copies:
            with ir.InsertionPoint(op), op.location:
                linalg_d.copy(op.operands[0], outs=[op.operands[1]])
            op.erase()
    return len(copies)


def copy_repeated_results(module: ir.Module) -> int:
    """Give each tensor a function returns more than once its own copy.

    ``buffer-results-to-out-params`` crashes (MLIR 22) when one buffer is
    returned twice (``return %e, %e``, or two ops that CSE merged); a copy per
    repeat makes every returned buffer distinct. Returns
    how many copies were added.
    """
    added = 0
    with module.context, ir.Location.unknown():
        for ret in ops_where(module, lambda op: op.name == "func.return"):
            seen: set[ir.Value] = set()
            for index, value in enumerate(list(ret.operands)):
                if value in seen and isinstance(value.type, ir.RankedTensorType):
                    with ir.InsertionPoint(ret), ret.location:
                        # alloc_tensor (not tensor.empty + linalg.copy, which
                        # eliminate-empty-tensors folds into a copy in place)
                        copy = bufferization_d.AllocTensorOp(value.type, [], copy=value)
                        ret.operands[index] = copy.result
                    added += 1
                seen.add(value)
    return added


def reshaped_results_in_place(module: ir.Module) -> int:
    """Compute a returned reshape (``return collapse_shape(%r)``) in the result's own buffer.

    ``buffer-results-to-out-params`` writes into the caller's buffer only a
    returned allocation; a reshape of one (AD's interleaved phases of a strided
    convolution's input gradient, a kernel gradient's transposed taps) was
    computed into a temporary and then copied out whole.  Where ``%r`` is a
    linalg op (or an ``scf.forall``, its shared output) used only by that reshape whose init is a ``tensor.empty``
    (possibly under a ``linalg.fill``) used only by it, the empty becomes the
    inverse reshape of an empty of the returned type, which bufferization folds
    into the out-parameter.  Returns how many results were rewritten.
    """
    inverse = {"tensor.collapse_shape": "expand", "tensor.expand_shape": "collapse"}
    rewritten = 0
    with module.context, ir.Location.unknown():
        for ret in ops_where(module, lambda op: op.name == "func.return"):
            for value in ret.operands:
                reshape = defining_op(value)
                if reshape is None or reshape.name not in inverse or len(reshape.operands) != 1:
                    continue
                op = defining_op(reshape.operands[0])
                if (op is None or not (op.name.startswith("linalg.") or op.name == "scf.forall") or len(op.results) != 1
                        or len(list(op.results[0].uses)) != 1 or len(list(value.uses)) != 1):
                    continue
                empty = defining_op(op.operands[-1])  # the init
                if empty is not None and empty.name == "linalg.fill" and len(list(empty.results[0].uses)) == 1:
                    empty = defining_op(empty.operands[1])
                if (empty is None or empty.name != "tensor.empty" or len(list(empty.results[0].uses)) != 1
                        or not ir.RankedTensorType(value.type).has_static_shape):
                    continue
                result = ir.RankedTensorType(value.type)
                inner = ir.RankedTensorType(empty.results[0].type)
                with ir.InsertionPoint(empty):
                    whole = tensor_d.EmptyOp(list(result.shape), result.element_type).result
                    groups = reshape.attributes["reassociation"]
                    if inverse[reshape.name] == "expand":
                        shaped = tensor_d.expand_shape(inner, whole, groups, [], list(inner.shape))
                    else:
                        shaped = tensor_d.collapse_shape(inner, whole, groups)
                empty.results[0].replace_all_uses_with(shaped)
                empty.erase()
                rewritten += 1
    return rewritten


def structure_control_flow(module: ir.Module) -> bool:
    """Turn CFGs (``cf`` branches between blocks) into ``scf`` ops; whether any function had one.

    The deallocation pipeline after bufferization rejects loops made of
    blocks ("Only structured control-flow loops are supported").
    """
    with module.context:
        if not any(len(fn.regions[0].blocks) > 1 for fn in _functions(module)):
            return False
    run_passes(module, "func.func(lift-cf-to-scf),canonicalize")
    return True


def legalize_tensor_poison(module: ir.Module) -> int:
    """Replace each ``ub.poison`` tensor by zeros, which One-Shot Bufferize can handle.

    ``lift-cf-to-scf`` (AD of a CFG) yields poison on the paths where a value is
    undefined; bufferization rejects a poison tensor. Zeros are a refinement of
    poison and what the interpreter gives; a dynamic size of a poison tensor
    becomes 0. Returns how many were replaced.
    """
    replaced = 0
    with module.context, ir.Location.unknown():
        for op in ops_where(module, lambda op: op.name == "ub.poison"):
            if not isinstance(op.results[0].type, ir.RankedTensorType):
                continue
            tensor_type = ir.RankedTensorType(op.results[0].type)
            element = tensor_type.element_type
            if isinstance(element, ir.FloatType):
                zero = ir.FloatAttr.get(element, 0.0)
            elif isinstance(element, (ir.IntegerType, ir.IndexType)):
                zero = ir.IntegerAttr.get(element, 0)
            else:
                continue
            with ir.InsertionPoint(op), op.location:
                if tensor_type.has_static_shape:
                    value = arith_d.ConstantOp(tensor_type, ir.DenseElementsAttr.get_splat(tensor_type, zero)).result
                else:
                    dynamic = ir.ShapedType.get_dynamic_size()
                    empty_sizes = [0 if n == dynamic else n for n in tensor_type.shape]
                    empty = tensor_d.EmptyOp(empty_sizes, element).result
                    value = tensor_d.CastOp(tensor_type, empty).result
            op.results[0].replace_all_uses_with(value)
            op.erase()
            replaced += 1
    return replaced


def copy_repeated_buffers(module: ir.Module) -> int:
    """After bufferization: give each buffer a function returns more than once its own copy.

    Distinct returned tensors can share one buffer after One-Shot Bufferize
    (``return %empty, %r`` where ``%r`` was computed in place into the
    uninitialized ``%empty``, as a zero-size result folds to), and
    ``buffer-results-to-out-params`` crashes (MLIR 22) on a buffer returned
    twice. Returns how many copies were added.
    """
    added = 0
    with module.context, ir.Location.unknown():
        for ret in ops_where(module, lambda op: op.name == "func.return"):
            seen: set[ir.Value] = set()
            for index, value in enumerate(list(ret.operands)):
                if value in seen and isinstance(value.type, ir.MemRefType):
                    memref_type = ir.MemRefType(value.type)
                    if memref_type.affine_map != ir.AffineMap.get_identity(memref_type.rank):
                        continue
                    with ir.InsertionPoint(ret), ret.location:
                        sizes = [
                            memref_d.DimOp(value, arith_d.ConstantOp(ir.IndexType.get(), d).result).result
                            for d, n in enumerate(memref_type.shape)
                            if n == ir.ShapedType.get_dynamic_size()
                        ]
                        copy = memref_d.AllocOp(memref_type, sizes, []).result
                        memref_d.CopyOp(value, copy)
                        ret.operands[index] = copy
                    added += 1
                seen.add(value)
    return added


def _is_strided_copy(op: ir.Operation) -> bool:
    types = [ir.MemRefType(v.type) for v in op.operands if isinstance(v.type, ir.MemRefType)]
    return len(types) != 2 or not all(_is_contiguous(t) for t in types)


def rewrite_strided_copies(module: ir.Module) -> int:
    """Turn ``memref.copy`` between non-contiguous memrefs into ``linalg.copy``.

    The LLVM lowering of such copies calls ``memrefCopy`` from
    ``libmlir_c_runner_utils.so``, which must not be loaded in-process; a
    ``linalg.copy`` becomes plain loops instead.  Returns how many were rewritten.
    """
    return copies_to_linalg(module, _is_strided_copy)


EMPTY_TENSORS = "eliminate-empty-tensors,empty-tensor-to-alloc-tensor"
"""Results computed in the buffers they are inserted into; the other empty tensors as allocations."""

ONE_SHOT = (
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map "
    "unknown-type-conversion=identity-layout-map allow-return-allocs-from-loops}"
)

ONE_SHOT_BUFFERIZE = f"{EMPTY_TENSORS},{ONE_SHOT}"
"""Bufferization as the CPU and GPU back ends run it."""

OUT_PARAMS = "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},canonicalize,cse"
"""Returned buffers -> caller-allocated out-parameters."""


def _prepare_bufferize(module: ir.Module) -> None:
    structure_control_flow(module)
    legalize_tensor_poison(module)
    copy_repeated_results(module)


def bufferize_steps(options: CpuOptions) -> list[Step]:
    """Tensors -> memrefs; results become caller-allocated out-parameters."""
    return [
        Call("bufferize", _prepare_bufferize),
        # fold loop results back to their buffers first, so that a returned
        # allocation is recognised and becomes the caller's out-parameter
        Passes(EMPTY_TENSORS),
        # after those passes: their pattern driver folds the slices this adds
        Call("read-padded-interiors", read_padded_interiors),
        Passes(ONE_SHOT + ",canonicalize,cse"),
        Call("copy-repeated-buffers", copy_repeated_buffers),
        Passes(OUT_PARAMS),
        Call("strided-copies", rewrite_strided_copies),
        Passes("func.func(buffer-hoisting,buffer-loop-hoisting),buffer-deallocation-pipeline,canonicalize"),
    ]


def stage_bufferize(module: ir.Module, options: CpuOptions) -> None:
    """:func:`bufferize_steps`."""
    run_steps(module, bufferize_steps(options))


# --------------------------------------------------------------------------
# stage: vector lowering
# --------------------------------------------------------------------------


def lower_vectors_steps(options: CpuOptions) -> list[Step]:
    """Vectorize bufferization's copies (the large ones split over the threads), hoist
    accumulators, lower vector ops to 1-D (a transform script); prefetches
    (:mod:`.prefetch`); then to loops; ``i1`` buffers as bytes."""

    def lower(module: ir.Module) -> None:
        large_copies = mark_copies(module, options.threads)
        mark_transfer_hoisting(module)
        run_transform_script(module, post_bufferize_script(options.target.vector_bits, large_copies))

    return [
        Call("lower-vectors", lower),
        Call("prefetch", prefetch_next_steps),
        # no canonicalize here: it folds chains of vector.insert into one
        # vector.from_elements of every scalar, which LLVM then has to rebuild
        # element by element (much slower code generation, worse code)
        Passes("convert-vector-to-scf{full-unroll},convert-linalg-to-loops,cse"),
        Call("widen-bools", widen_bool_memrefs),
    ]


def stage_lower_vectors(module: ir.Module, options: CpuOptions) -> None:
    """:func:`lower_vectors_steps`."""
    run_steps(module, lower_vectors_steps(options))


# --------------------------------------------------------------------------
# stage: parallelization
# --------------------------------------------------------------------------


def parallelize_steps(options: CpuOptions) -> list[Step]:
    """``scf.forall`` -> ``scf.parallel`` -> tasks on the async runtime's thread pool, every block
    of a loop a task (:mod:`dlvm_mlir.backend.parallel_dispatch`)."""
    if options.threads == 1:
        return [Passes("scf-forall-to-parallel,scf-parallel-for-to-nested-fors")]
    steps: list[Step] = [Passes(
        f"scf-forall-to-parallel,async-parallel-for{{async-dispatch=false num-workers={options.threads} min-task-size=1}}"
    )]
    if parallel_dispatch.DISPATCH_EVERY_BLOCK:
        steps.append(Call("dispatch-every-block", parallel_dispatch.dispatch_every_block))
    steps.append(Passes(
        "async-to-async-runtime,async-runtime-ref-counting,async-runtime-ref-counting-opt,convert-async-to-llvm"
    ))
    return steps


def stage_parallelize(module: ir.Module, options: CpuOptions) -> None:
    """:func:`parallelize_steps`."""
    run_steps(module, parallelize_steps(options))


# --------------------------------------------------------------------------
# stage: LLVM
# --------------------------------------------------------------------------


def to_llvm_steps(options: CpuOptions) -> list[Step]:
    """Everything else to the LLVM dialect."""
    return [Passes(
        "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
        # minimumf/maximumf to llvm.intr.minimum/maximum (IEEE 754-2019: -0 < +0,
        # NaN propagates) before arith-expand rewrites them as a compare and
        # select that ignores the sign of zero
        "convert-arith-to-llvm,arith-expand,"
        "convert-math-to-llvm,convert-math-to-libm,"
        "convert-vector-to-llvm{reassociate-fp-reductions},"
        f"finalize-memref-to-llvm{{use-generic-functions={str(options.caching_allocator).lower()}}},"
        # no canonicalize/cse after this: LLVM's pipeline does the same work, and on
        # the LLVM dialect they took 0.4-0.8 s of a CNN step's 7.3 s compile
        "convert-to-llvm,reconcile-unrealized-casts"
    )]


def stage_to_llvm(module: ir.Module, options: CpuOptions) -> None:
    """:func:`to_llvm_steps`."""
    run_steps(module, to_llvm_steps(options))


StageFn = Callable[[ir.Module, CpuOptions], object]
StepsFn = Callable[[CpuOptions], list[Step]]

#: the pipeline as steps, in order (the stage functions of :data:`CPU_STAGES` run these)
CPU_STAGE_STEPS: tuple[tuple[str, StepsFn], ...] = (
    ("entry-points", entry_points_steps),
    ("fuse", fuse_steps),
    ("approximate-math", approximate_math_steps),
    ("pack", pack_steps),
    ("tile-and-vectorize", tile_and_vectorize_steps),
    ("bufferize", bufferize_steps),
    ("lower-vectors", lower_vectors_steps),
    ("parallelize", parallelize_steps),
    ("to-llvm", to_llvm_steps),
)

#: the pipeline, in order
CPU_STAGES: tuple[tuple[str, StageFn], ...] = (
    ("entry-points", stage_entry_points),
    ("fuse", stage_fuse),
    ("approximate-math", stage_approximate_math),
    ("pack", stage_pack),
    ("tile-and-vectorize", stage_tile_and_vectorize),
    ("bufferize", stage_bufferize),
    ("lower-vectors", stage_lower_vectors),
    ("parallelize", stage_parallelize),
    ("to-llvm", stage_to_llvm),
)

STAGE_NAMES = tuple(name for name, _ in CPU_STAGES)


def run_stages(
    module: ir.Module,
    stages: list[tuple[str, Callable[[], object]]],
    *,
    kind: str,
    stage_seconds: dict[str, float],
    dump_dir: str | os.PathLike[str] | None = None,
    on_stage: Callable[[str, ir.Module], None] | None = None,
    stop_after: str | None = None,
) -> dict[str, object]:
    """Run a back end's stages in order (shared by the CPU and GPU pipelines); their outcomes by name.

    Times each stage into ``stage_seconds``; after each, writes the IR to
    ``dump_dir`` (or ``$DLVM_MLIR_DUMP_DIR``) as ``NN-<stage>.mlir``
    (``00-input.mlir`` is the input) and calls ``on_stage(name, module)``;
    ends after ``stop_after``. A stage's unexpected exception becomes an
    :class:`ExecutionError` naming the stage.
    """
    names = [name for name, _ in stages]
    if stop_after is not None and stop_after not in names:
        raise ValueError(f"unknown stage {stop_after!r}; stages: {', '.join(names)}")
    dump_path = dump_dir or os.environ.get("DLVM_MLIR_DUMP_DIR")
    dump_to = Path(dump_path) if dump_path else None
    if dump_to is not None:
        _dump(dump_to, 0, "input", module)
    outcomes: dict[str, object] = {}
    for index, (name, run) in enumerate(stages, start=1):
        report_stage(f"{kind} {name}")
        start = time.perf_counter()
        try:
            outcomes[name] = run()
        except ExecutionError:
            raise
        except Exception as exc:
            raise ExecutionError(f"{kind} pipeline stage '{name}' failed: {exc}") from exc
        stage_seconds[name] = time.perf_counter() - start
        if dump_to is not None:
            _dump(dump_to, index, name, module)
        if on_stage is not None:
            on_stage(name, module)
        if name == stop_after:
            break
    return outcomes


def _dump(dump_dir: Path, index: int, name: str, module: ir.Module) -> None:
    dump_dir.mkdir(parents=True, exist_ok=True)
    (dump_dir / f"{index:02d}-{name}.mlir").write_text(str(module))


def lower_to_llvm_cpu(
    module: ir.Module,
    *,
    threads: int | None = None,
    options: CpuOptions | None = None,
    dump_dir: str | os.PathLike[str] | None = None,
    on_stage: Callable[[str, ir.Module], None] | None = None,
    stop_after: str | None = None,
    skip: Collection[str] = (),
) -> LoweringResult:
    """Lower ``module`` (linalg on tensors) to the LLVM dialect, in place.

    ``options`` overrides ``threads``.  After each stage, ``on_stage(name,
    module)`` is called and, with ``dump_dir`` (or ``$DLVM_MLIR_DUMP_DIR``), the
    IR is written to ``NN-<stage>.mlir`` (``00-input.mlir`` is the input).
    ``stop_after`` ends the pipeline after the named stage; the stages named in
    ``skip`` do not run (the schedule search compiles a kernel that has been
    through them already, :mod:`.tuning`).
    """
    options = options or (CpuOptions() if threads is None else CpuOptions(threads=threads))
    result = LoweringResult(module=module, signatures=entry_point_signatures(module))
    stages = [(name, lambda stage=stage: stage(module, options)) for name, stage in CPU_STAGES if name not in skip]
    outcomes = run_stages(
        module, stages, kind="CPU", stage_seconds=result.stage_seconds,
        dump_dir=dump_dir, on_stage=on_stage, stop_after=stop_after,
    )
    if isinstance(outcomes.get("tile-and-vectorize"), list):
        result.schedules = outcomes["tile-and-vectorize"]
    return result

