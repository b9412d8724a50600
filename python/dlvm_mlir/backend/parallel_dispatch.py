"""On a shared OpenMP team, every block of a parallel loop is a task: the caller awaits them
instead of running the first.

``async-parallel-for{async-dispatch=false}`` lowers a parallel loop of ``n``
blocks to: a group of ``n - 1`` tasks (blocks ``1 .. n - 1``), a call of the
first block on the calling thread, then an await of the group.  On the
runtime's own pool the worker starts block 1 while the caller runs block 0.
Sharing PyTorch's OpenMP team instead (:func:`.runtime.share_openmp_threads`),
queued tasks start only when a thread awaits (the await opens an OpenMP
region whose threads drain the queue), so the caller ran block 0 alone before
the team joined in: with 4 blocks on 2 threads, a quarter of the loop on one
core.  :func:`dispatch_every_block` makes the first block depend on
``dlvmRuntimeSharesOpenMP()``: while the runtime shares a team, block 0 is
queued too and the await starts every block at once; otherwise the caller
runs it, as before (queueing it there measured 5-10% slower on an MLP step of
0.7 ms, whose loops are small).  The torch back end's MLP step (batch 128,
``benchmarks/torch_backend.py``): 3.99 -> 3.08 ms; its gradient call alone
2.62 -> 1.79 ms.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, scf

from .linalg_rewrite import defining_op, ops_where

__all__ = ["DISPATCH_EVERY_BLOCK", "dispatch_every_block"]

#: rewrite the parallel loops (``False``: the caller runs the first block, as upstream lowers it)
DISPATCH_EVERY_BLOCK = True


def _constant_value(value: ir.Value) -> int | None:
    owner = defining_op(value)
    if owner is None or owner.name != "arith.constant":
        return None
    attribute = owner.attributes["value"]
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None


def _first_block_call(await_op: ir.Operation) -> tuple[ir.Operation, ir.Operation, ir.Operation] | None:
    """(group creation, dispatch loop, call of block 0) of the parallel loop ``await_op``
    awaits, if it has the shape ``async-parallel-for`` gives it."""
    group = await_op.operands[0]
    create = defining_op(group)
    ops = [op.operation for op in await_op.operation.block.operations]
    index = ops.index(await_op)
    if create is None or create.name != "async.create_group" or index < 2:
        return None
    call, loop = ops[index - 1], ops[index - 2]
    if (call.name != "func.call" or _constant_value(call.operands[0]) != 0 or loop.name != "scf.for"
            or _constant_value(loop.operands[0]) != 1):
        return None
    body = [op.operation for op in loop.regions[0].blocks[0].operations]
    executes = [op for op in body if op.name == "async.execute"]
    adds = [op for op in body if op.name == "async.add_to_group"]
    if len(executes) != 1 or len(adds) != 1 or adds[0].operands[1] != group:
        return None
    inner = [op.operation for op in executes[0].regions[0].blocks[0].operations]
    if not inner or inner[0].name != "func.call" or str(inner[0].attributes["callee"]) != str(call.attributes["callee"]):
        return None
    return create, loop, call


SHARES_OPENMP = "dlvmRuntimeSharesOpenMP"


def _declare_shares_openmp(module: ir.Module) -> None:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == SHARES_OPENMP:
            return
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
        func.FuncOp(SHARES_OPENMP, ir.FunctionType.get([], [ir.IntegerType.get_signless(32)]), visibility="private")


def dispatch_every_block(module: ir.Module) -> int:
    """Rewrite every parallel loop ``async-parallel-for`` made so that, while the runtime shares
    an OpenMP team, its first block is a task too (the module docstring); the number rewritten."""
    count = 0
    with module.context:
        for await_op in ops_where(module, lambda op: op.name == "async.await_all"):
            found = _first_block_call(await_op)
            if found is None:
                continue
            create, loop, call = found
            with ir.InsertionPoint(create), create.location:
                index = ir.IndexType.get()
                i32 = ir.IntegerType.get_signless(32)
                flag = func.CallOp([i32], SHARES_OPENMP, []).results[0]
                shared = arith.cmpi(arith.CmpIPredicate.ne, flag, arith.constant(i32, 0))
                extra = arith.index_cast(index, arith.extui(i32, shared))
                size = arith.addi(create.operands[0], extra)
                first = arith.subi(arith.constant(index, 1), extra)
            create.operands[0] = size
            loop.operands[0] = first
            with ir.InsertionPoint(call), call.location:
                inline = scf.IfOp(arith.xori(shared, arith.constant(ir.IntegerType.get_signless(1), 1)))
                with ir.InsertionPoint(inline.then_block):
                    scf.YieldOp([])
            call.move_before(inline.then_block.operations[0])
            count += 1
        if count:
            _declare_shares_openmp(module)
    return count
