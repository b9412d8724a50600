"""Store ``i1`` buffers as bytes: ``memref<...xi1>`` -> ``memref<...xi8>``.

The LLVM lowering of MLIR 22 refuses loads and stores of sub-byte memref
elements (an assertion in ``MemRefToLLVM``), and numpy stores a ``bool`` per
byte anyway.  After bufferization and loop lowering, every memref of ``i1``
becomes a memref of ``i8`` with the same shape and layout; scalar loads get an
``arith.trunci`` and stores an ``arith.extui``; globals and function types
follow.  Linalg ops with ``i1`` operands are never vectorized (see
``analysis.LoopNest.vectorizable``), so no vector transfers of ``i1`` are left
at this point.

So that masks given as constants do not keep their ops from being vectorized,
:func:`bool_constants_as_bytes` gives a ``linalg.generic`` each ``i1`` constant
input as an ``i8`` constant, truncated back to ``i1`` in its body (AD's one-hot
masks of window positions in a max pooling's gradient).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from .linalg_rewrite import defining_op, ops_where

__all__ = ["bool_constants_as_bytes", "widen_bool_memrefs"]


def _widened(value_type: ir.Type, i1: ir.Type, i8: ir.Type) -> ir.Type | None:
    if isinstance(value_type, ir.MemRefType) and value_type.element_type == i1:
        return ir.MemRefType.get(
            value_type.shape, i8, layout=value_type.layout, memory_space=value_type.memory_space
        )
    return None


def _widen_dense(attr: ir.Attribute, i8: ir.Type) -> ir.Attribute:
    """An ``i1`` dense initializer as ``i8`` (0/1 per element)."""
    dense = ir.DenseIntElementsAttr(attr)
    shaped = ir.RankedTensorType(dense.type)
    tensor_i8 = ir.RankedTensorType.get(shaped.shape, i8)
    if dense.is_splat:
        return ir.DenseElementsAttr.get_splat(tensor_i8, ir.IntegerAttr.get(i8, int(bool(dense.get_splat_value().value))))
    values = [ir.IntegerAttr.get(i8, 1 if dense[i] else 0) for i in range(len(dense))]
    return ir.DenseElementsAttr.get(values, type=tensor_i8)


def bool_constants_as_bytes(module: ir.Module) -> int:
    """Each ``i1`` constant input of a ``linalg.generic`` as an ``i8`` constant and an
    ``arith.trunci`` in the body; the count."""
    count = 0
    with module.context:
        i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)
        for op in ops_where(module, lambda op: op.name == "linalg.generic"):
            inputs = len(op.operands) - len(op.results)
            block = op.regions[0].blocks[0]
            for number in range(inputs):
                constant = defining_op(op.operands[number])
                if (constant is None or constant.name != "arith.constant"
                        or ir.RankedTensorType(op.operands[number].type).element_type != i1):
                    continue
                shape = ir.RankedTensorType(op.operands[number].type).shape
                with ir.InsertionPoint(constant), constant.location:
                    widened = arith.ConstantOp(ir.RankedTensorType.get(shape, i8),
                                               _widen_dense(constant.attributes["value"], i8)).result
                op.operands[number] = widened
                argument = block.arguments[number]
                argument.set_type(i8)
                with ir.InsertionPoint.at_block_begin(block), op.location:
                    bit = arith.trunci(i1, argument)
                argument.replace_all_uses_except(bit, bit.owner.operation)
                count += 1
    return count


def widen_bool_memrefs(module: ir.Module) -> int:
    """Rewrite ``i1`` memrefs of ``module`` to ``i8``; returns how many values changed type."""
    changed = 0
    with module.context, ir.Location.unknown():
        i1 = ir.IntegerType.get_signless(1)
        i8 = ir.IntegerType.get_signless(8)
        loads: list[ir.Operation] = []
        stores: list[ir.Operation] = []
        globals_: list[ir.Operation] = []
        functions: list[ir.Operation] = []

        def retype(value: ir.Value) -> None:
            nonlocal changed
            new_type = _widened(value.type, i1, i8)
            if new_type is not None:
                value.set_type(new_type)
                changed += 1

        def visit(op: ir.Operation) -> ir.WalkResult:
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.arguments:
                        retype(arg)
            for result in op.results:
                retype(result)
            name = op.name
            if name == "memref.load":
                loads.append(op)
            elif name == "memref.store":
                stores.append(op)
            elif name == "memref.global":
                globals_.append(op)
            elif name in ("func.func", "llvm.func"):
                functions.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in loads:
            if op.results[0].type == i1:
                op.results[0].set_type(i8)
                _truncate_after(op, i1)
        for op in stores:
            value = op.operands[0]
            if value.type == i1:
                with ir.InsertionPoint(op):
                    op.operands[0] = arith.extui(i8, value)
        for op in globals_:
            type_attr = ir.TypeAttr(op.attributes["type"])
            new_type = _widened(type_attr.value, i1, i8)
            if new_type is None:
                continue
            op.attributes["type"] = ir.TypeAttr.get(new_type)
            if "initial_value" in op.attributes:
                initial = op.attributes["initial_value"]
                if isinstance(initial, ir.DenseIntElementsAttr) or isinstance(initial, ir.DenseElementsAttr):
                    op.attributes["initial_value"] = _widen_dense(initial, i8)
        for op in functions:
            if op.name != "func.func":
                continue
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            inputs = [_widened(t, i1, i8) or t for t in ftype.inputs]
            results = [_widened(t, i1, i8) or t for t in ftype.results]
            op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    return changed


def _truncate_after(load: ir.Operation, i1: ir.Type) -> None:
    """``%b = arith.trunci %load : i8 to i1`` right after the load, used instead of it."""
    result = load.results[0]
    with ir.InsertionPoint.after(load):
        narrowed = arith.trunci(i1, result)
    result.replace_all_uses_except(narrowed, narrowed.owner.operation)
