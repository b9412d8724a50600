"""dlvm-check-bounds: guard every tensor access at a run-time index.

``tensor.extract`` and ``tensor.insert`` whose indices are not constants
within the tensor's static shape (function arguments, loop counters, values
read from tensors, constants out of range), and ``tensor.extract_slice`` /
``insert_slice`` whose windows are not statically inside the tensor (a
run-time offset, size or stride; a negative stride), are wrapped
in a check: when every index (for a slice: the first and the last along each
dimension) is within its dimension the access runs as
before; otherwise it is skipped (an extract yields zero, a slice an
uninitialized tensor, an insert leaves the tensor unchanged) and the check's
number is stored in the module's error slot, the
global ``@_mlir___dlvm_error``. Compiled code never touches memory out of
bounds; the caller (``CpuExecutable``) reads the global after each call and
raises an ``ExecutionError`` naming the op and its source location, listed
in the module attribute ``dlvm.bounds_checks`` (check ``n`` is entry
``n - 1``).

Accesses inside ``linalg`` bodies are not checked: the lowering computes
their indices from the iteration space.

    dlvm-opt --dlvm-check-bounds model.mlir
    dlvm_mlir.compile(text, check_bounds=True)
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf, tensor

from dlvm_mlir.backend.runtime import CHECKS_ATTR, ERROR_GLOBAL
from dlvm_mlir.errors import source_location
from dlvm_mlir.passes import ModulePass, register_pass

__all__ = ["CheckBounds"]
_ACCESSES = ("tensor.extract", "tensor.insert")
_SLICES = ("tensor.extract_slice", "tensor.insert_slice")
_DYNAMIC = -(2**63)  # ShapedType::kDynamic in static_offsets / sizes / strides


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "arith.constant":
        return ir.IntegerAttr(owner.attributes["value"]).value
    return None


def _statically_in_bounds(source: ir.Value, indices: list[ir.Value]) -> bool:
    shape = ir.RankedTensorType(source.type).shape
    for extent, index in zip(shape, indices):
        value = _constant(index)
        if value is None or extent < 0 or not 0 <= value < extent:
            return False
    return True


def _inside_linalg(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name.startswith("linalg."):
            return True
        parent = parent.parent
    return False


class _Window:
    """The offsets, sizes and strides of a tensor.extract_slice / insert_slice, each an int
    (static) or an ir.Value (dynamic), and the tensor they index."""

    def __init__(self, op: ir.Operation):
        operands = list(op.operands)
        self.source = operands[0] if op.name == "tensor.extract_slice" else operands[1]
        dynamic = iter(operands[1:] if op.name == "tensor.extract_slice" else operands[2:])
        self.parts = []
        for name in ("static_offsets", "static_sizes", "static_strides"):
            values = ir.DenseI64ArrayAttr(op.attributes[name])
            self.parts.append([next(dynamic) if v == _DYNAMIC else v for v in values])

    def statically_in_bounds(self) -> bool:
        shape = ir.RankedTensorType(self.source.type).shape
        for extent, offset, size, stride in zip(shape, *self.parts):
            if not all(isinstance(v, int) for v in (offset, size, stride)) or extent < 0:
                return False
            if size and not (0 <= offset < extent and 0 <= offset + (size - 1) * stride < extent):
                return False
            if not size and not 0 <= offset <= extent:
                return False
        return True

    def in_bounds(self) -> ir.Value:
        """First and last index of every non-empty dimension inside the tensor, as one i1
        (the slice is contiguous between them for any stride sign)."""
        index = ir.IndexType.get()

        def value(v: int | ir.Value) -> ir.Value:
            return arith.constant(index, v) if isinstance(v, int) else v

        ok = arith.constant(ir.IntegerType.get_signless(1), 1)
        shape = ir.RankedTensorType(self.source.type).shape
        for d, (offset, size, stride) in enumerate(zip(*self.parts)):
            extent = value(shape[d]) if shape[d] >= 0 else tensor.dim(self.source, arith.constant(index, d))
            off, n, step = value(offset), value(size), value(stride)
            last = arith.addi(off, arith.muli(arith.subi(n, arith.constant(index, 1)), step))
            inside = arith.andi(arith.cmpi(arith.CmpIPredicate.ult, off, extent),
                                arith.cmpi(arith.CmpIPredicate.ult, last, extent))
            empty = arith.cmpi(arith.CmpIPredicate.eq, n, arith.constant(index, 0))
            # an empty slice may start at the end
            ok = arith.andi(ok, arith.ori(inside, arith.andi(empty, arith.cmpi(arith.CmpIPredicate.ule, off, extent))))
        return ok


def _accesses(module: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in _ACCESSES and not _inside_linalg(op):
            operands = list(op.operands)
            source, indices = (operands[0], operands[1:]) if op.name == "tensor.extract" else (operands[1], operands[2:])
            if not _statically_in_bounds(source, indices):
                found.append(op)
        elif op.name in _SLICES and not _inside_linalg(op) and not _Window(op).statically_in_bounds():
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _describe(op: ir.Operation) -> str:
    where = source_location(op.location)
    return f"'{op.name}' at {where}" if where else f"'{op.name}'"


def _in_bounds(source: ir.Value, indices: list[ir.Value]) -> ir.Value:
    """``0 <= i_d < dim(source, d)`` for every index, as one i1."""
    ok = None
    shape = ir.RankedTensorType(source.type).shape
    for d, index in enumerate(indices):
        extent = arith.constant(ir.IndexType.get(), shape[d]) if shape[d] >= 0 else tensor.dim(source, arith.constant(ir.IndexType.get(), d))
        # one unsigned comparison: a negative index is a huge unsigned one
        below = arith.cmpi(arith.CmpIPredicate.ult, index, extent)
        ok = below if ok is None else arith.andi(ok, below)
    return ok


def _record(check: int) -> None:
    slot = memref.get_global(ir.MemRefType.get([], ir.IntegerType.get_signless(64)), ERROR_GLOBAL)
    memref.store(arith.constant(ir.IntegerType.get_signless(64), check), slot, [])


def _zero(element: ir.Type) -> ir.Value:
    if isinstance(element, (ir.IntegerType, ir.IndexType)):
        return arith.constant(element, 0)
    return arith.constant(element, 0.0)


def _guard(op: ir.Operation, check: int) -> None:
    """Wrap ``op`` in ``scf.if`` on its indices being in bounds."""
    operands = list(op.operands)
    with ir.InsertionPoint(op), op.location:
        result_type = op.results[0].type
        if op.name == "tensor.extract":
            ok, fallback = _in_bounds(operands[0], operands[1:]), None
        elif op.name == "tensor.insert":
            ok, fallback = _in_bounds(operands[1], operands[2:]), operands[1]
        else:
            window = _Window(op)
            ok = window.in_bounds()
            fallback = operands[1] if op.name == "tensor.insert_slice" else None
        branch = scf.IfOp(ok, [result_type], has_else=True)
        with ir.InsertionPoint(branch.else_block):
            _record(check)
            if fallback is None and op.name == "tensor.extract_slice":
                fallback = _empty_like(ir.RankedTensorType(result_type), window)
            scf.YieldOp([fallback if fallback is not None else _zero(result_type)])
        with ir.InsertionPoint(branch.then_block):
            yield_op = scf.YieldOp([op.results[0]])
        op.results[0].replace_all_uses_except(branch.results[0], yield_op.operation)
        op.move_before(yield_op)


def _empty_like(result: ir.RankedTensorType, window: _Window) -> ir.Value:
    """A tensor.empty of a slice's result type, standing for the slice that was not read: a
    dynamic result dimension takes the next dynamic size of the slice (the dimensions a
    rank-reducing slice drops are static ones)."""
    dynamic = iter(s for s in window.parts[1] if not isinstance(s, int))
    sizes = [next(dynamic) if d < 0 else d for d in result.shape]
    return tensor.EmptyOp(sizes, result.element_type).result


@register_pass
class CheckBounds(ModulePass):
    name = "dlvm-check-bounds"
    summary = ("Guard tensor.extract/insert and slices at run-time indices; an out-of-range index is reported, "
               "never accessed")

    def run(self, module: ir.Operation) -> None:
        accesses = _accesses(module)
        if not accesses:
            return
        body = module.regions[0].blocks[0]
        checks = [ir.StringAttr(a).value for a in module.attributes[CHECKS_ATTR]] if CHECKS_ATTR in module.attributes else []
        with ir.Location.unknown():
            if not any(op.name == "memref.global" and ir.StringAttr(op.attributes["sym_name"]).value == ERROR_GLOBAL
                       for op in body.operations):
                i64 = ir.IntegerType.get_signless(64)
                scalar = ir.RankedTensorType.get([], i64)
                with ir.InsertionPoint.at_block_begin(body):
                    memref.GlobalOp(
                        sym_name=ERROR_GLOBAL,
                        type_=ir.MemRefType.get([], i64),
                        initial_value=ir.DenseElementsAttr.get_splat(scalar, ir.IntegerAttr.get(i64, 0)),
                    )
        for op in accesses:
            checks.append(_describe(op))
            _guard(op, len(checks))
        module.attributes[CHECKS_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(c) for c in checks])
