"""Keep each GPU thread's running sums in registers: accumulators of loops promoted to loop-carried values.

Every thread of a ``parallel`` plan (:mod:`dlvm_mlir.backend.gpu_schedule`)
computes its outputs with the reduction loops inside it, and
``convert-linalg-to-loops`` writes the running sum back to memory at every
step::

    scf.for %c ... {                      // a convolution's channels, taps, ...
      %x = memref.load %in[...]
      %w = memref.load %filter[...]
      %acc = memref.load %out[%i, %j]      // the same element at every step
      memref.store (%acc + %x * %w), %out[%i, %j]
    }

LLVM cannot keep ``%out[%i, %j]`` in a register: the kernel's buffers are
plain pointers that may alias as far as it knows, so every step is three loads
and a store.  Here, where the indices do not change inside the loop and no other
access in the loop reaches the same buffer (every other access's buffer is
another allocation or argument, :func:`.gpu_host.root_buffer`), the element becomes a
loop-carried value (``iter_args``): loaded once before the loop, stored once
after it.  Applied innermost loop first, so a sum over several loops is carried
out through all of them.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import memref, scf

from .analysis import ops_where
from .gpu_host import inside_launch, root_buffer

__all__ = ["promote_accumulators"]

_ACCESSES = ("memref.load", "memref.store", "memref.atomic_rmw")


def _accessed(op: ir.Operation) -> ir.Value:
    return op.operands[1] if op.name in ("memref.store", "memref.atomic_rmw") else op.operands[0]


def _indices(op: ir.Operation) -> list[ir.Value]:
    return list(op.operands[2:] if op.name in ("memref.store", "memref.atomic_rmw") else op.operands[1:])


def _inside(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether ``value`` is defined inside ``loop`` (its induction variable included)."""
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner
    op = op.operation if op is not None else None
    while op is not None:
        if op == loop:
            return True
        op = op.parent
    return False


def _candidate(loop: ir.Operation) -> tuple[ir.Operation, ir.Operation] | None:
    """A load and a later store of the same element in the loop's body, at indices fixed
    in the loop, of a buffer that nothing else in the loop touches."""
    body = loop.regions[0].blocks[0]
    accesses = ops_where(loop, lambda op: op.name in _ACCESSES)
    top = [op.operation for op in body.operations]
    for load in top:
        if load.name != "memref.load":
            continue
        target = load.operands[0]
        indices = _indices(load)
        if any(_inside(index, loop) for index in indices) or _inside(target, loop):
            continue
        stores = [op for op in top[top.index(load) + 1:] if op.name == "memref.store" and op.operands[1] == target
                  and _indices(op) == indices]
        if len(stores) != 1:
            continue
        root = root_buffer(target)
        others = [op for op in accesses if op != load and op != stores[0]]
        if any(root_buffer(_accessed(op)) == root for op in others):
            continue
        return load, stores[0]
    return None


def _promote(loop: ir.Operation, load: ir.Operation, store: ir.Operation) -> ir.Operation:
    """Carry ``load``'s element through ``loop``; returns the new loop."""
    body = loop.regions[0].blocks[0]
    target, indices = load.operands[0], _indices(load)
    lower, upper, step = list(loop.operands)[:3]
    carried = list(loop.operands)[3:]
    with ir.InsertionPoint(loop), loop.location:
        initial = memref.LoadOp(target, indices).result
        new = scf.ForOp(lower, upper, step, [*carried, initial])
    new_body = new.body
    body.arguments[0].replace_all_uses_with(new.induction_variable)
    for old_arg, new_arg in zip(list(body.arguments)[1:], list(new.inner_iter_args)[: len(carried)]):
        old_arg.replace_all_uses_with(new_arg)
    load.results[0].replace_all_uses_with(new.inner_iter_args[len(carried)])
    stored = store.operands[0]
    load.erase()
    store.erase()
    terminator = None
    for op in list(body.operations):
        op = op.operation
        if op.name == "scf.yield":
            terminator = op
            continue
        op.detach_from_parent()
        new_body.append(op)
    assert terminator is not None
    with ir.InsertionPoint(new_body), loop.location:
        scf.YieldOp([*terminator.operands, stored])
    for old_result, new_result in zip(loop.results, list(new.results)[: len(carried)]):
        old_result.replace_all_uses_with(new_result)
    with ir.InsertionPoint(loop), loop.location:  # right after the new loop
        memref.StoreOp(new.results[len(carried)], target, indices)
    loop.erase()
    return new.operation


def promote_accumulators(module: ir.Module) -> int:
    """Promote the accumulators of the loops inside every ``gpu.launch``; the number promoted."""
    count = 0
    loops = ops_where(module, lambda op: op.name == "scf.for" and inside_launch(op))
    with module.context:
        for loop in reversed(loops):  # innermost first
            while (found := _candidate(loop)) is not None:
                loop = _promote(loop, *found)
                count += 1
    return count
