"""Derivative rules of structured control flow: scf.for, scf.while, scf.if, scf.index_switch.

Reverse mode keeps the loop-carried values of every iteration on a *tape*: a
tensor with one slot per iteration, filled in the forward sweep with
``tensor.insert``/``tensor.insert_slice`` and read back with
``tensor.extract``/``tensor.extract_slice``. The reverse loop runs the
iterations last to first; each recomputes its body from the tape and runs
the body's reverse sweep, carrying the adjoints of the loop-carried values
and of the outside values the body uses.

- ``scf.for``: the tape has the trip count's size (static when the bounds
  are constants).
- ``scf.while``: the trip count is data-dependent, so the forward sweep first
  runs the loop counting its iterations, then replays it as an ``scf.for``
  of that many iterations that fills the tape.
- ``scf.if`` / ``scf.index_switch``: a branch on the same condition
  recomputes the taken branch and reverses it.

Forward mode carries tangents as extra loop-carried values or results.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf, tensor

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.cloning import Scope, terminator
from dlvm_mlir.ad.adjoints import Adjoints
from dlvm_mlir.ad.errors import DifferentiationError
from dlvm_mlir.ad.registry import adjoint, augmented_forward, tangent

_DYNAMIC = ir.ShapedType.get_dynamic_size()

# --------------------------------------------------------------------------
# Tapes
# --------------------------------------------------------------------------


def _tape_alloc(like: ir.Value, count: ir.Value, static: int | None) -> ir.Value:
    """An empty tape with one slot per iteration for values shaped like ``like``.

    A dynamic dimension takes its size from ``like`` (the loop's initial
    value): a loop-carried tensor keeps its type, and the tape assumes it
    keeps its sizes too.
    """
    inner = _sizes(like, vocab.shape(like.type))
    size = static if static is not None else count
    return tensor.EmptyOp([size, *inner], vocab.element_type(like.type)).result


MAX_TAPE_ELEMENTS = 1 << 48
"""More elements than any memory holds: a static tape this large is a located error, not an
integer overflow in the back end's size computations (dlvm-fuzz seed 505: 2^63-1 iterations)."""


def _memory_bytes() -> int:
    """This machine's physical memory (2^48 where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 48


def _check_tape_size(op: ir.Operation, iterations: int, saved: list[ir.Value]) -> None:
    """A static tape larger than this machine's memory is a located error: its allocation
    would fail at run time, and the compiled code has no way to report that (dlvm-fuzz seed
    2828: 2^32 iterations saving a tensor<3xf32>, 51 GB, died of SIGSEGV)."""
    counts = [math.prod(d for d in vocab.shape(v.type) if d != _DYNAMIC) for v in saved]
    per_iteration = sum(counts)
    widths = [vocab.element_type(v.type) for v in saved]
    widths = [w.width if isinstance(w, ir.FloatType | ir.IntegerType) else 64 for w in widths]
    size = iterations * sum(n * max(1, bits // 8) for n, bits in zip(counts, widths))
    if saved and (iterations * per_iteration >= MAX_TAPE_ELEMENTS or size > _memory_bytes()):
        raise DifferentiationError(
            f"the reverse sweep of this loop would save {per_iteration} element(s) for each of its "
            f"{iterations} iterations, more than memory can hold (checkpoint or shorten the loop)",
            op,
        )


def _sizes(value: ir.Value, dims: list[int]) -> list[int | ir.Value]:
    """Static sizes as ints, dynamic ones as tensor.dim of ``value``."""
    return [tensor.DimOp(value, vocab.index(d)).result if n == _DYNAMIC else n for d, n in enumerate(dims)]


def _slot(position: ir.Value, sizes: list[int | ir.Value]):
    """Offsets/sizes/strides (dynamic lists and static arrays) of one tape slot."""
    dynamic_sizes = [s for s in sizes if isinstance(s, ir.Value)]
    static_sizes = [1] + [_DYNAMIC if isinstance(s, ir.Value) else s for s in sizes]
    static_offsets = [_DYNAMIC] + [0] * len(sizes)
    return [position], dynamic_sizes, [], static_offsets, static_sizes, [1] * (len(sizes) + 1)


def _tape_store(tape: ir.Value, value: ir.Value, position: ir.Value) -> ir.Value:
    """Write ``value`` into slot ``position`` of ``tape``; return the new tape."""
    if not vocab.is_tensor(value):
        return tensor.InsertOp(value, tape, [position]).result
    if _statically_empty(value.type):
        return tape  # nothing to keep; a slice of a size-0 dimension does not verify upstream
    slot = _slot(position, _sizes(value, vocab.shape(value.type)))
    if _rank_reducing(value.type):
        return tensor.InsertSliceOp(value, tape, *slot).result
    return tensor.InsertSliceOp(vocab.pad_shape(value, 0), tape, *slot).result


def _tape_load(tape: ir.Value, value_type: ir.Type, position: ir.Value) -> ir.Value:
    if not vocab.is_tensor(value_type):
        return tensor.ExtractOp(tape, [position]).result
    dims = vocab.shape(value_type)
    sizes = [tensor.DimOp(tape, vocab.index(d + 1)).result if n == _DYNAMIC else n for d, n in enumerate(dims)]
    if _statically_empty(value_type):
        return tensor.EmptyOp(sizes, vocab.element_type(value_type)).result
    if _rank_reducing(value_type):
        return tensor.ExtractSliceOp(value_type, tape, *_slot(position, sizes)).result
    slot_type = ir.RankedTensorType.get([1, *dims], vocab.element_type(value_type))
    return vocab.squeeze_shape(tensor.ExtractSliceOp(slot_type, tape, *_slot(position, sizes)).result, 0)


def _statically_empty(value_type: ir.Type) -> bool:
    """A tensor type with a static size of 0: it has no elements to tape."""
    return 0 in vocab.shape(value_type)


def _rank_reducing(value_type: ir.Type) -> bool:
    """Slots are full-rank (a unit dimension added with dlvm.pad_shape), except for index
    tensors, which dlvm ops do not take; full-rank slots avoid an upstream assertion on
    rank-reducing slices in the CPU back end's tiling."""
    return isinstance(vocab.element_type(value_type), ir.IndexType)


def _trip_count(op: ir.Operation, lb: ir.Value, ub: ir.Value, step: ir.Value) -> tuple[ir.Value, int | None]:
    """Iterations of ``for lb to ub step step`` as an index (and its value when static)."""
    bounds = [vocab.constant_int(v) for v in (lb, ub, step)]
    if None not in bounds:
        low, high, stride = bounds
        n = max(0, -(-(high - low) // stride)) if high > low else 0
        if n >= 1 << 63:  # dlvm-fuzz seed 1515: from -2^63 to 3, not a 64-bit index
            raise DifferentiationError(
                f"cannot differentiate 'scf.for' running {n} iterations: its trip count does not fit "
                "a 64-bit index", op)
        return vocab.index(n), n
    # no iteration unless lb < ub, whatever the step (dlvm-fuzz seed 606: with a negative step
    # and ub < lb, ceil((ub - lb) / step) counted iterations that never ran)
    one, zero = vocab.int_const(lb.type, 1), vocab.int_const(lb.type, 0)
    step = _positive(step)
    span = vocab.iadd(vocab.isub(ub, lb), vocab.isub(step, one))
    n = vocab.imax(vocab.idiv(span, step), zero)
    runs = arith.CmpIOp(arith.CmpIPredicate.slt, lb, ub).result
    return vocab.to_index(arith.SelectOp(runs, n, zero).result), None


def _positive(step: ir.Value) -> ir.Value:
    """``max(step, 1)``: the divisor for a run-time step. A step that is not positive makes
    ``scf.for`` undefined (a step of 0 never ends, as the primal loop does); dividing by it
    killed the process with SIGFPE (dlvm-fuzz seed 2828: a step of ``n + n`` with ``n = 0``)."""
    constant = vocab.constant_int(step)
    if constant is not None and constant > 0:
        return step
    return vocab.imax(step, vocab.int_const(step.type, 1))


def _has_uses(value: ir.Value) -> bool:
    return any(True for _ in value.uses)


def _reverse_position(count: ir.Value, k: ir.Value) -> ir.Value:
    """count - 1 - k: the forward iteration that reverse iteration k undoes."""
    return vocab.isub(vocab.isub(count, vocab.index(1)), k)


# --------------------------------------------------------------------------
# Shared reverse-sweep steps
# --------------------------------------------------------------------------


def _recompute(sweep, block: ir.Block, scope: Scope, bindings: dict[ir.Value, ir.Value]) -> Scope:
    """Copy ``block``'s ops with its arguments bound as given; return the body's scope."""
    inner = Scope(scope)
    for primal, value in bindings.items():
        inner.bind(primal, value)
    sweep.emit_forward_block(block, inner)
    return inner


def _reverse_recomputed(
    sweep,
    block: ir.Block,
    inner: Scope,
    seeds: list[tuple[ir.Value, ir.Value | None]],
    free: list[ir.Value],
    accumulators: list[ir.Value],
) -> Adjoints:
    """Reverse a recomputed block given adjoints of what it yields; free values accumulate."""
    adjoints = Adjoints()
    for value, accumulator in zip(free, accumulators, strict=True):
        adjoints.set(value, accumulator)
    for value, seed in seeds:
        if seed is not None and sweep.activity.active(value):
            adjoints.accumulate(value, seed)
    sweep.reverse_block(block, inner, adjoints)
    return adjoints


def _free_accumulators(r, free: list[ir.Value]) -> list[ir.Value]:
    """Current adjoints of the free values (zeros where none yet)."""
    return [r.adjoints.get(v) if r.adjoints.has(v) else vocab.zeros_like(r.scope[v]) for v in free]


def _grad_or_zeros(adjoints: Adjoints, primal: ir.Value, like: ir.Value) -> ir.Value:
    found = adjoints.get(primal)
    return found if found is not None else vocab.zeros_like(like)


# --------------------------------------------------------------------------
# scf.for
# --------------------------------------------------------------------------


@dataclass
class _ForTape:
    lower: ir.Value
    step: ir.Value
    count: ir.Value
    tapes: dict[int, ir.Value]  # carried index -> tape


@augmented_forward("scf.for")
def _for_forward(sweep, op: ir.Operation, scope: Scope) -> None:
    body = op.regions[0].blocks[0]
    lower, upper, step = (scope[v] for v in list(op.operands)[:3])
    inits = [scope[v] for v in list(op.operands)[3:]]
    carried = list(body.arguments)[1:]
    n = len(carried)
    taped = [i for i, arg in enumerate(carried) if _has_uses(arg)]
    if vocab.constant_int(step) == 0:
        raise DifferentiationError("cannot differentiate 'scf.for' with a step of 0: it has no trip count", op)
    count, static = _trip_count(op, lower, upper, step)
    if static is not None:
        _check_tape_size(op, static, [inits[i] for i in taped])
    empty = [_tape_alloc(inits[i], count, static) for i in taped]
    loop = scf.ForOp(lower, upper, step, inits + empty)
    with ir.InsertionPoint(loop.body):
        iterates = list(loop.inner_iter_args)
        position = vocab.to_index(vocab.idiv(vocab.isub(loop.induction_variable, lower), _positive(step)))
        stored = [_tape_store(iterates[n + k], iterates[i], position) for k, i in enumerate(taped)]
        inner = Scope(scope)
        inner.bind(body.arguments[0], loop.induction_variable)
        inner.bind_all(carried, iterates[:n])
        sweep.emit_forward_block(body, inner, plain=True)
        scf.YieldOp([inner[v] for v in terminator(body).operands] + stored)
    results = list(loop.results)
    scope.bind_all(op.results, results[:n])
    scope.record(op, _ForTape(lower, step, count, {i: results[n + k] for k, i in enumerate(taped)}))


@adjoint("scf.for")
def _for_adjoint(r) -> None:
    op, sweep = r.operation, r.sweep
    activity = sweep.activity
    body = op.regions[0].blocks[0]
    carried = list(body.arguments)[1:]
    yielded = list(terminator(body).operands)
    record: _ForTape = r.scope.recorded(op)
    active = _active_pairs(activity, carried, op.results)
    free = sweep.active_free_values(op)
    inits = [_grad_or_zeros(r.adjoints, op.results[i], r.y(i)) for i in active] + _free_accumulators(r, free)
    loop = scf.ForOp(vocab.index(0), record.count, vocab.index(1), inits)
    with ir.InsertionPoint(loop.body):
        iterates = list(loop.inner_iter_args)
        position = _reverse_position(record.count, loop.induction_variable)
        iv_type = body.arguments[0].type
        iv = vocab.iadd(record.lower, vocab.imul(vocab.from_index(position, iv_type), record.step))
        bindings = {body.arguments[0]: iv}
        for i, tape in record.tapes.items():
            bindings[carried[i]] = _tape_load(tape, carried[i].type, position)
        inner = _recompute(sweep, body, r.scope, bindings)
        seeds = [(yielded[i], iterates[k]) for k, i in enumerate(active)]
        adjoints = _reverse_recomputed(sweep, body, inner, seeds, free, iterates[len(active) :])
        carried_adjoints = [
            _grad_or_zeros(adjoints, carried[i], bindings.get(carried[i], r.x(3 + i))) for i in active
        ]
        scf.YieldOp(carried_adjoints + [adjoints.get(v) for v in free])
    results = list(loop.results)
    for k, v in enumerate(free):
        r.adjoints.set(v, results[len(active) + k])
    for k, i in enumerate(active):
        r.accumulate(3 + i, results[k])


# --------------------------------------------------------------------------
# scf.while
# --------------------------------------------------------------------------


@dataclass
class _WhileTape:
    count: ir.Value
    tapes: dict[int, ir.Value]  # state index -> tape
    final: list[ir.Value]  # the state when the condition failed


def _while_parts(op: ir.Operation):
    before = op.regions[0].blocks[0]
    after = op.regions[1].blocks[0]
    condition = terminator(before)
    return before, after, condition, list(condition.operands)[1:], list(terminator(after).operands)


def _new_while(result_types: list[ir.Type], inits: list[ir.Value], before_types: list[ir.Type]) -> ir.Operation:
    op = ir.Operation.create("scf.while", results=result_types, operands=inits, regions=2)
    op.regions[0].blocks.append(*before_types)
    op.regions[1].blocks.append(*result_types)
    return op


@augmented_forward("scf.while")
def _while_forward(sweep, op: ir.Operation, scope: Scope) -> None:
    before, after, _, forwarded, nexts = _while_parts(op)
    inits = [scope[v] for v in op.operands]
    state_types = [a.type for a in before.arguments]
    count = _counting_while(sweep, op, scope, inits)
    taped = [i for i, arg in enumerate(before.arguments) if _has_uses(arg)]
    empty = [_tape_alloc(inits[i], count, None) for i in taped]
    m = len(state_types)
    replay = scf.ForOp(vocab.index(0), count, vocab.index(1), inits + empty)
    with ir.InsertionPoint(replay.body):
        iterates = list(replay.inner_iter_args)
        stored = [_tape_store(iterates[m + k], iterates[i], replay.induction_variable) for k, i in enumerate(taped)]
        head = Scope(scope)
        head.bind_all(before.arguments, iterates[:m])
        sweep.emit_forward_block(before, head, plain=True)
        tail = Scope(scope)
        tail.bind_all(after.arguments, [head[v] for v in forwarded])
        sweep.emit_forward_block(after, tail, plain=True)
        scf.YieldOp([tail[v] for v in nexts] + stored)
    results = list(replay.results)
    scope.record(op, _WhileTape(count, {i: results[m + k] for k, i in enumerate(taped)}, results[:m]))


def _counting_while(sweep, op: ir.Operation, scope: Scope, inits: list[ir.Value]) -> ir.Value:
    """Emit the loop with an iteration counter; bind its results; return the count."""
    before, after, condition, forwarded, nexts = _while_parts(op)
    index = vocab.index_type()
    result_types = [r.type for r in op.results] + [index]
    loop = _new_while(result_types, inits + [vocab.index(0)], [a.type for a in before.arguments] + [index])
    head_block, tail_block = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    with ir.InsertionPoint(head_block):
        head = Scope(scope)
        head.bind_all(before.arguments, list(head_block.arguments)[:-1])
        sweep.emit_forward_block(before, head, plain=True)
        counter = head_block.arguments[len(head_block.arguments) - 1]
        scf.ConditionOp(head[condition.operands[0]], [head[v] for v in forwarded] + [counter])
    with ir.InsertionPoint(tail_block):
        tail = Scope(scope)
        tail.bind_all(after.arguments, list(tail_block.arguments)[:-1])
        sweep.emit_forward_block(after, tail, plain=True)
        counter = tail_block.arguments[len(tail_block.arguments) - 1]
        scf.YieldOp([tail[v] for v in nexts] + [vocab.iadd(counter, vocab.index(1))])
    results = list(loop.results)
    scope.bind_all(op.results, results[:-1])
    return results[-1]


@adjoint("scf.while")
def _while_adjoint(r) -> None:
    op, sweep = r.operation, r.sweep
    activity = sweep.activity
    before, after, _, forwarded, nexts = _while_parts(op)
    record: _WhileTape = r.scope.recorded(op)
    states = list(before.arguments)
    active = [i for i, arg in enumerate(states) if activity.active(arg)]
    free = sweep.active_free_values(op)
    # The last evaluation of the condition region, on the final state.
    last = _recompute(sweep, before, r.scope, dict(zip(states, record.final, strict=True)))
    seeds = [(value, r.grad(j)) for j, value in enumerate(forwarded)]
    adjoints = _reverse_recomputed(sweep, before, last, seeds, free, _free_accumulators(r, free))
    inits = [_grad_or_zeros(adjoints, states[i], record.final[i]) for i in active] + [adjoints.get(v) for v in free]
    loop = scf.ForOp(vocab.index(0), record.count, vocab.index(1), inits)
    with ir.InsertionPoint(loop.body):
        iterates = list(loop.inner_iter_args)
        position = _reverse_position(record.count, loop.induction_variable)
        bindings = {states[i]: _tape_load(tape, states[i].type, position) for i, tape in record.tapes.items()}
        head = _recompute(sweep, before, r.scope, bindings)
        arguments = [head[v] for v in forwarded]
        tail = _recompute(sweep, after, r.scope, dict(zip(after.arguments, arguments, strict=True)))
        state_seeds = [(nexts[i], iterates[k]) for k, i in enumerate(active)]
        accumulators = iterates[len(active) :]
        tail_adjoints = _reverse_recomputed(sweep, after, tail, state_seeds, free, accumulators)
        forwarded_seeds = [(v, tail_adjoints.get(arg)) for v, arg in zip(forwarded, after.arguments, strict=True)]
        accumulators = [tail_adjoints.get(v) for v in free]
        head_adjoints = _reverse_recomputed(sweep, before, head, forwarded_seeds, free, accumulators)
        state_adjoints = [
            _grad_or_zeros(head_adjoints, states[i], bindings.get(states[i], record.final[i])) for i in active
        ]
        scf.YieldOp(state_adjoints + [head_adjoints.get(v) for v in free])
    results = list(loop.results)
    for k, v in enumerate(free):
        r.adjoints.set(v, results[len(active) + k])
    for k, i in enumerate(active):
        r.accumulate(i, results[k])


# --------------------------------------------------------------------------
# scf.if and scf.index_switch
# --------------------------------------------------------------------------


def _branch_adjoint(r, make_branch) -> None:
    """Reverse a branch op: the same branch recomputes and reverses the taken region."""
    op, sweep = r.operation, r.sweep
    free = sweep.active_free_values(op)
    if not free:
        return
    accumulators = _free_accumulators(r, free)
    branch = make_branch([v.type for v in free])
    for region, new_region in zip(op.regions, branch.regions, strict=True):
        if not len(region.blocks):
            continue
        block = region.blocks[0]
        with ir.InsertionPoint(new_region.blocks[0]):
            inner = _recompute(sweep, block, r.scope, {})
            yielded = list(terminator(block).operands)
            seeds = [(value, r.grad(i)) for i, value in enumerate(yielded)]
            adjoints = _reverse_recomputed(sweep, block, inner, seeds, free, accumulators)
            scf.YieldOp([adjoints.get(v) for v in free])
    for k, v in enumerate(free):
        r.adjoints.set(v, branch.results[k])


@adjoint("scf.if")
def _if_adjoint(r) -> None:
    def make(types):
        return scf.IfOp(r.x(0), types, has_else=True).operation

    _branch_adjoint(r, make)


@adjoint("scf.index_switch")
def _index_switch_adjoint(r) -> None:
    _branch_adjoint(r, lambda types: _new_switch(r.operation, r.x(0), types))


def _new_switch(op: ir.Operation, selector: ir.Value, types: list[ir.Type]) -> ir.Operation:
    switch = ir.Operation.create(
        "scf.index_switch",
        results=types,
        operands=[selector],
        attributes={"cases": op.attributes["cases"]},
        regions=len(op.regions),
    )
    for region in switch.regions:
        region.blocks.append()
    return switch


# --------------------------------------------------------------------------
# Forward mode
# --------------------------------------------------------------------------


def _tangents_or_zeros(tangents: Scope, inner: Scope, values: list[ir.Value]) -> list[ir.Value]:
    """Tangents of primal ``values`` (zeros where a value has none)."""
    found = [tangents.get(v) for v in values]
    return [d if d is not None else vocab.zeros_like(inner[v]) for d, v in zip(found, values, strict=True)]


def _active_pairs(activity, arguments, results) -> list[int]:
    """Indices i where the region argument or the op result i is active."""
    return [i for i, (a, r) in enumerate(zip(arguments, results)) if activity.active(a) or activity.active(r)]


@tangent("scf.for", emits_primal=True)
def _for_tangent(t) -> None:
    op, sweep = t.operation, t.sweep
    body = op.regions[0].blocks[0]
    carried = list(body.arguments)[1:]
    yielded = list(terminator(body).operands)
    active = _active_pairs(sweep.activity, carried, op.results)
    inits = [t.x(3 + i) for i in range(len(carried))]
    loop = scf.ForOp(t.x(0), t.x(1), t.x(2), inits + [t.dx_or_zeros(3 + i) for i in active])
    n = len(carried)
    with ir.InsertionPoint(loop.body):
        iterates = list(loop.inner_iter_args)
        inner, tangents = t.nested()
        inner.bind(body.arguments[0], loop.induction_variable)
        inner.bind_all(carried, iterates[:n])
        for k, i in enumerate(active):
            tangents.bind(carried[i], iterates[n + k])
        sweep.emit_block(body, inner, tangents)
        out = _tangents_or_zeros(tangents, inner, [yielded[i] for i in active])
        scf.YieldOp([inner[v] for v in yielded] + out)
    results = list(loop.results)
    t.bind_results(results[:n])
    for k, i in enumerate(active):
        t.set(i, results[n + k])


@tangent("scf.while", emits_primal=True)
def _while_tangent(t) -> None:
    op, sweep = t.operation, t.sweep
    before, after, condition, forwarded, nexts = _while_parts(op)
    states = list(before.arguments)
    active_states = [i for i, a in enumerate(states) if sweep.activity.active(a)]
    active_results = _active_pairs(sweep.activity, after.arguments, op.results)
    inits = [t.x(i) for i in range(len(states))] + [t.dx_or_zeros(i) for i in active_states]
    state_types = [a.type for a in states] + [states[i].type for i in active_states]
    result_types = [r.type for r in op.results] + [op.results[j].type for j in active_results]
    loop = _new_while(result_types, inits, state_types)
    head_block, tail_block = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    m, p = len(states), len(op.results)
    with ir.InsertionPoint(head_block):
        inner, tangents = t.nested()
        args = list(head_block.arguments)
        inner.bind_all(states, args[:m])
        for k, i in enumerate(active_states):
            tangents.bind(states[i], args[m + k])
        sweep.emit_block(before, inner, tangents)
        out = _tangents_or_zeros(tangents, inner, [forwarded[j] for j in active_results])
        scf.ConditionOp(inner[condition.operands[0]], [inner[v] for v in forwarded] + out)
    with ir.InsertionPoint(tail_block):
        inner, tangents = t.nested()
        args = list(tail_block.arguments)
        inner.bind_all(after.arguments, args[:p])
        for k, j in enumerate(active_results):
            tangents.bind(after.arguments[j], args[p + k])
        sweep.emit_block(after, inner, tangents)
        out = _tangents_or_zeros(tangents, inner, [nexts[i] for i in active_states])
        scf.YieldOp([inner[v] for v in nexts] + out)
    results = list(loop.results)
    t.bind_results(results[:p])
    for k, j in enumerate(active_results):
        t.set(j, results[p + k])


def _branch_tangent(t, make_branch) -> None:
    op, sweep = t.operation, t.sweep
    active = [i for i, r in enumerate(op.results) if sweep.activity.active(r)]
    types = [r.type for r in op.results]
    branch = make_branch(types + [types[i] for i in active])
    for region, new_region in zip(op.regions, branch.regions, strict=True):
        if not len(region.blocks):
            continue
        block = region.blocks[0]
        yielded = list(terminator(block).operands)
        with ir.InsertionPoint(new_region.blocks[0]):
            inner, tangents = t.nested()
            sweep.emit_block(block, inner, tangents)
            out = _tangents_or_zeros(tangents, inner, [yielded[i] for i in active])
            scf.YieldOp([inner[v] for v in yielded] + out)
    results = list(branch.results)
    t.bind_results(results[: len(types)])
    for k, i in enumerate(active):
        t.set(i, results[len(types) + k])


@tangent("scf.if", emits_primal=True)
def _if_tangent(t) -> None:
    _branch_tangent(t, lambda types: scf.IfOp(t.x(0), types, has_else=True).operation)


@tangent("scf.index_switch", emits_primal=True)
def _index_switch_tangent(t) -> None:
    _branch_tangent(t, lambda types: _new_switch(t.operation, t.x(0), types))
