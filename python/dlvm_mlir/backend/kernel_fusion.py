"""Fusing the loop nests of linalg-on-tensors code, and counting them (both back ends,
and the ``dlvm-kernel-fusion`` pass of :mod:`dlvm_mlir.transforms.kernel_fusion`).

What a *kernel* is here
-----------------------
A kernel is one loop nest of the lowered program, counted statically in the
IR (an op inside an ``scf.for`` counts once, however often the loop runs):

* every op of the ``linalg`` dialect in a function, at any depth of ``scf`` /
  ``cf`` control flow, except ``linalg.yield`` and ``linalg.index`` and
  except ops nested in another linalg op's body (one op = one loop nest;
  ``linalg.softmax``, which later decomposes into four, counts as one);
* every ``arith`` / ``math`` op with a ranked-tensor result other than
  ``arith.constant`` (an implicit elementwise loop nest, which
  ``convert-elementwise-to-linalg`` makes explicit).

``linalg.fill`` **counts**: both back ends run it as a loop nest of its own
(the CPU schedules do not fuse it into its consumer's tiles), so it is listed
under its own kind and can be subtracted by whoever wants "compute kernels"
only.  Not counted: ``tensor`` ops (``tensor.pad``, ``concat``,
``insert_slice``, ``from_elements``, reshapes), which become views or copies
at bufferization, and the copies bufferization itself adds.  The count is
meant for IR before tiling (after it, each tile's op would count).

Kinds in the breakdown: ``matmul`` (every named contraction: matmul,
batch_matmul, matvec, vecmat, dot, ...), ``conv``, ``pooling``, ``generic``
(a ``linalg.generic`` with parallel loops only), ``generic-reduction`` (one
with a reduction loop: a reduction with its fused producers, or a
contraction written as a generic), and otherwise the op's own name without
the ``linalg.`` prefix (``fill``, ``reduce``, ``broadcast``, ``transpose``,
``add``, ``exp``, ...) or its full name for ``arith`` / ``math`` ops.

What the pass does
------------------
Input: linalg on tensors (after ``dlvm-to-linalg``); other ops are left alone.

1. Elementwise ``arith`` / ``math`` ops on tensors become ``linalg.generic``
   ops; generic contractions become named ones (``linalg.matmul``, ...).
2. Named elementwise, broadcast, transpose and copy ops (and, with
   ``reductions``, ``linalg.reduce``) are generalized.  Named contractions,
   fills and convolutions stay named: the back ends schedule them as such.
   With ``layouts`` (the default), elementwise and reduction results are then
   stored in the layout that cancels their transposes
   (:mod:`.layout_assignment`, the ``dlvm-layout-assignment`` pass): an NHWC
   model's bias, activation and residual adds run in the NCHW of its
   convolutions.
3. ``linalg-fuse-elementwise-ops``: every elementwise producer with a single
   use is fused into its consumer: chains of elementwise ops become one
   nest, a matmul's bias + activation epilogue becomes one nest consuming
   the matmul, and (with ``reductions``) elementwise producers are fused into
   the reductions that consume them (``sum(x * x)`` is one nest).
4. With ``duplicate-producers=N`` (N >= 2), an elementwise producer with
   2..N uses, all of them ``linalg.generic`` ops, is copied into each
   consumer and step 3 runs again: softmax's ``exp(x - max)`` is recomputed
   inside the row sum and inside the division, so softmax becomes three
   nests (max, sum, normalize) plus its two fills.  Recomputing beats a
   round trip through memory on a GPU; on a CPU the intermediate usually
   sits in cache, so the CPU back end leaves this off.

``report`` emits, for each function that has kernels, a remark
``@f: N kernels (loop nests) -> M after fusion (before: ...; after: ...)``.
:func:`count_kernels` gives the same counts to Python code (benchmarks).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import scf
from mlir.dialects.transform import interpreter

from dlvm_mlir.passes import Call, Passes, Step, run_passes, run_steps

from .analysis import use_owner
from .layout_assignment import assign_layouts

__all__ = [
    "FusionOptions",
    "count_kernels",
    "describe_counts",
    "duplicate_shared_producers",
    "function_kernels",
    "function_ops",
    "fuse_kernels",
    "fuse_linalg",
    "generalize_for_fusion",
    "fusion_steps",
    "kernel_counts_by_function",
    "kernel_kind",
    "normalize_linalg",
    "normalize_steps",
    "symbol_name",
]

#: named linalg ops generalized before elementwise fusion
GENERALIZED_OPS = (
    "linalg.add", "linalg.sub", "linalg.mul", "linalg.div", "linalg.div_unsigned",
    "linalg.max", "linalg.min", "linalg.powf", "linalg.exp", "linalg.log", "linalg.abs",
    "linalg.ceil", "linalg.floor", "linalg.negf", "linalg.reciprocal", "linalg.round",
    "linalg.sqrt", "linalg.rsqrt", "linalg.square", "linalg.tanh", "linalg.erf",
    "linalg.select", "linalg.elementwise", "linalg.map", "linalg.broadcast",
    "linalg.transpose", "linalg.copy",
)

_NOT_KERNELS = frozenset({"linalg.yield", "linalg.index"})
_CONTRACTIONS = frozenset({"dot", "contract", "mmt4d", "batch_mmt4d"})


# --------------------------------------------------------------------------
# counting
# --------------------------------------------------------------------------


def kernel_kind(op: ir.Operation) -> str | None:
    """The kind of kernel ``op`` is, or None when it is not one (see the module doc)."""
    name = op.name
    if name.startswith("linalg."):
        if name in _NOT_KERNELS:
            return None
        short = name[len("linalg."):]
        if short == "generic":
            iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
            return "generic-reduction" if any("reduction" in it for it in iterators) else "generic"
        if "matmul" in short or "matvec" in short or "vecmat" in short or short in _CONTRACTIONS:
            return "matmul"
        if short.startswith(("conv", "depthwise_conv")):
            return "conv"
        if short.startswith("pooling"):
            return "pooling"
        return short
    if name.startswith(("arith.", "math.")) and name != "arith.constant":
        if any(isinstance(result.type, ir.RankedTensorType) for result in op.results):
            return name
    return None


def function_kernels(fn: ir.Operation) -> Counter[str]:
    counts: Counter[str] = Counter()

    def visit(op: ir.Operation) -> ir.WalkResult:
        kind = kernel_kind(op)
        if kind is None:
            return ir.WalkResult.ADVANCE
        counts[kind] += 1
        return ir.WalkResult.SKIP  # a linalg op's body is part of its loop nest

    for region in fn.regions:
        for block in region.blocks:
            for op in block.operations:
                op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return counts


def symbol_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def function_ops(module: ir.Module | ir.Operation | ir.OpView) -> list[ir.Operation]:
    """Every ``func.func`` definition in the module (nested modules included)."""
    root = module.operation
    functions: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.func":
            if len(op.regions[0].blocks) > 0:
                functions.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return functions


def kernel_counts_by_function(module: ir.Module | ir.Operation | ir.OpView) -> dict[str, Counter[str]]:
    """``{function name: Counter(kind -> kernels)}`` for every function definition."""
    return {symbol_name(fn): function_kernels(fn) for fn in function_ops(module)}


def count_kernels(
    module: ir.Module | ir.Operation | ir.OpView, *, per_function: bool = False
) -> dict:
    """Kernels (loop nests, see the module doc) in ``module``.

    Returns ``{"total": N, kind: n, ...}`` summed over all functions, or with
    ``per_function=True`` one such dict per function name.
    """
    by_function = kernel_counts_by_function(module)

    def as_dict(counts: Counter[str]) -> dict[str, int]:
        return {"total": sum(counts.values()), **dict(sorted(counts.items()))}

    if per_function:
        return {name: as_dict(counts) for name, counts in by_function.items()}
    return as_dict(sum(by_function.values(), Counter()))


def describe_counts(counts: Counter[str] | dict[str, int]) -> str:
    """``fill 1, generic 2, matmul 1`` (kinds sorted by name, ``total`` left out)."""
    items = sorted((kind, n) for kind, n in counts.items() if kind != "total" and n)
    return ", ".join(f"{kind} {n}" for kind, n in items) or "none"


# --------------------------------------------------------------------------
# fusion
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class FusionOptions:
    """How :func:`fuse_linalg` fuses (see the module doc)."""

    #: generalize ``linalg.reduce`` so that elementwise producers fuse into it
    reductions: bool = True
    #: copy an elementwise producer with 2..N generic users into each (0: never)
    duplicate_producers: int = 0
    #: choose the layouts of elementwise and reduction results so that transposes cancel
    #: (:mod:`.layout_assignment`), between generalization and fusion
    layouts: bool = True


def _generalize_script(names: tuple[str, ...]) -> str:
    listed = ", ".join(f'"{n}"' for n in names)
    return (
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
        f"    %ops = transform.structured.match ops{{[{listed}]}} in %root"
        " : (!transform.any_op) -> !transform.any_op\n"
        "    %g = transform.structured.generalize %ops : (!transform.any_op) -> !transform.any_op\n"
        "    transform.yield\n"
        "  }\n"
        "}\n"
    )


def _generalize(module: ir.Module | ir.Operation, names: tuple[str, ...]) -> None:
    operation = module.operation
    with operation.context:
        script = ir.Module.parse(_generalize_script(names))
        entry = script.body.operations[0]
        interpreter.apply_named_sequence(operation, entry, script)


def generalize_for_fusion(module: ir.Module | ir.Operation, reductions: bool = True) -> None:
    """Step 2's generalization alone: named elementwise, broadcast, transpose and copy ops (and,
    with ``reductions``, ``linalg.reduce``) become ``linalg.generic`` ops."""
    _generalize(module, GENERALIZED_OPS + (("linalg.reduce",) if reductions else ()))


def _is_elementwise_generic(op: ir.Operation) -> bool:
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    return all("parallel" in it for it in iterators)


def duplicate_shared_producers(module: ir.Module | ir.Operation, max_uses: int = 4) -> int:
    """Give each generic consumer its own copy of a multi-use elementwise producer.

    ``linalg-fuse-elementwise-ops`` only fuses a producer with a single use.
    Only producers whose users are all ``linalg.generic`` ops (so that every
    copy fuses away) with at most ``max_uses`` uses are copied.  Returns the
    number of copies made.
    """
    producers: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if _is_elementwise_generic(op):
            producers.append(op)
        return ir.WalkResult.ADVANCE

    copies = 0
    operation = module.operation
    with operation.context, ir.Location.unknown():
        operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in producers:
            uses = list(op.results[0].uses)
            if not 1 < len(uses) <= max_uses:
                continue
            users = [use_owner(use) for use in uses]
            if not all(user.name == "linalg.generic" for user in users):
                continue
            for use, user in list(zip(uses, users))[1:]:
                clone = op.clone(ir.InsertionPoint(user))
                user.operands[use.operand_number] = clone.results[0]
                copies += 1
    return copies


def normalize_steps() -> list[Step]:
    """Step 1 as steps (:mod:`dlvm_mlir.passes.steps`)."""
    return [
        Call("selects-to-if", _whole_tensor_selects_to_if),
        Passes("func.func(convert-elementwise-to-linalg),linalg-specialize-generic-ops"),
    ]


def normalize_linalg(module: ir.Module | ir.Operation) -> None:
    """Step 1: elementwise tensor ops -> ``linalg.generic``; generic contractions -> named."""
    run_steps(module, normalize_steps())


def _whole_tensor_selects_to_if(module: ir.Module | ir.Operation) -> None:
    """``arith.select %c, %a, %b : tensor`` with a scalar ``%c`` picks a whole tensor: an ``scf.if``.

    convert-elementwise-to-linalg takes every operand of an elementwise op on
    tensors for a tensor and aborts the process on the scalar condition
    (dlvm-fuzz seed 404: the forward derivative of a loop in ``cf`` form).
    """
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if (
            op.name == "arith.select"
            and not isinstance(op.operands[0].type, ir.ShapedType)
            and isinstance(op.results[0].type, ir.RankedTensorType)
        ):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root = module.operation if isinstance(module, ir.Module) else module
    root.walk(visit)
    for op in found:
        with ir.InsertionPoint(op), op.location:
            branch = scf.IfOp(op.operands[0], [op.results[0].type], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([op.operands[1]])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([op.operands[2]])
        op.results[0].replace_all_uses_with(branch.results[0])
        op.erase()


def fusion_steps(options: FusionOptions = FusionOptions()) -> list[Step]:
    """Steps 2-4 (generalize, fuse, duplicate shared producers and fuse again), then cse, as steps."""
    def duplicate(module: ir.Module | ir.Operation) -> None:
        if duplicate_shared_producers(module, options.duplicate_producers):
            run_passes(module, "linalg-fuse-elementwise-ops,canonicalize")

    steps: list[Step] = [Call("generalize", lambda module: generalize_for_fusion(module, options.reductions))]
    if options.layouts:
        steps.append(Call("assign-layouts", assign_layouts))
    steps.append(Passes("linalg-fuse-elementwise-ops,canonicalize"))
    if options.duplicate_producers >= 2:
        steps.append(Call("duplicate-producers", duplicate))
    steps.append(Passes("cse"))
    return steps


def fuse_linalg(module: ir.Module | ir.Operation, options: FusionOptions = FusionOptions()) -> None:
    """Steps 2-4 (generalize, fuse, duplicate shared producers and fuse again), then cse."""
    run_steps(module, fusion_steps(options))


def fuse_kernels(module: ir.Module | ir.Operation, options: FusionOptions = FusionOptions()) -> None:
    """The whole fusion (steps 1-4) on ``module``, in place."""
    run_steps(module, normalize_steps() + fusion_steps(options))


# --------------------------------------------------------------------------
# the pass
# --------------------------------------------------------------------------
