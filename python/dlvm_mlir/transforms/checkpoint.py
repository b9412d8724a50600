"""dlvm-checkpoint: which forward values a gradient function saves, which it recomputes.

A gradient body's reverse sweep reads forward values (its *residuals*, see
:mod:`dlvm_mlir.ad.residuals`); each is held in memory from the forward
sweep until its last read. Instead of holding a value, the reverse sweep can
recompute it from other values: from arguments, constants, saved values, or
values it recomputes in turn. The pass chooses, per forward op, *saved* or
*recomputed*, then emits a copy of every recomputed op right before the
first reverse-sweep op that needs it (the copies carry the ``dlvm.recompute``
attribute, which keeps CSE from merging them back, and a
``"dlvm.recompute"(...)`` location) and erases forward ops left unused.

Policies (``policy=``), after JAX's ``jax.checkpoint`` policies:

- ``save-everything``: recompute nothing (the AD's own output);
- ``save-dots``: save the results of contractions (``dlvm.dot``,
  ``dlvm.convolve``), recompute everything else from them;
- ``save-nothing``: recompute every forward value from the arguments;
- ``min-recompute`` (default): the least recomputation (in flops) whose
  residuals fit in ``budget`` bytes (no budget: save everything).

Ops that cannot be recomputed (loops, calls, ops with effects) are always
saved when the reverse sweep needs them. A function that already holds
recomputed copies (the pass ran before) is left as it is.

The choice is a minimum cut, the formulation of the min-cut partitioner of
PyTorch's AOTAutograd extended with recomputation costs. Every forward op
``v`` is an edge ``v_in -> v_out`` whose capacity is the cost of saving it
(its bytes); an edge ``source -> v_in`` is the cost of recomputing it (its
flops); ``u_out -> v_in`` (infinite) for each operand ``u`` of ``v``, and
``v_out -> sink`` (infinite) when the reverse sweep reads ``v``. A cut then
separates saved values (``v_in`` on the source side, ``v_out`` on the sink
side) from recomputed ones (both on the sink side) so that everything the
reverse sweep reads can be rebuilt from saved values and arguments. Policies
set capacities to infinity where they forbid saving or recomputing. With a
budget, the cut minimizes ``mu * bytes + flops``; a search over ``mu``
finds the smallest ``mu`` (least recomputation) whose saved bytes fit: exact
for the trade-offs on the lower convex hull of (bytes, flops), a feasible
cut close to it otherwise. Values of dynamic shape count as 0 bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from dlvm_mlir.ad.residuals import (
    RECOMPUTE_ATTR,
    Sweeps,
    is_constant,
    is_recomputable,
    op_flops,
    type_bytes,
)
from dlvm_mlir.ad.sweeps import Sweep, recompute_location
from dlvm_mlir.passes import ModulePass, Option, PassError, register_pass

__all__ = ["POLICIES", "Checkpoint", "Plan", "parse_bytes", "plan_checkpoints"]

POLICIES = ("min-recompute", "save-everything", "save-dots", "save-nothing")
_CONTRACTIONS = {"dlvm.dot", "dlvm.convolve"}
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-z]*)\s*")


def parse_bytes(text: str) -> int:
    """``'4096'``, ``'512KiB'``, ``'1.5MB'`` -> bytes; ValueError otherwise."""
    match = _SIZE.fullmatch(text.lower())
    if not match or match.group(2) not in _UNITS:
        raise ValueError(f"'{text}' is not a size (examples: 65536, 64KiB, 1.5MB)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


@dataclass(frozen=True)
class Plan:
    """The decision for one function: forward ops to save and to recompute."""

    saved: frozenset[ir.Operation]
    recomputed: frozenset[ir.Operation]
    saved_bytes: int
    recompute_flops: int


def _bytes(op: ir.Operation) -> int:
    return sum(type_bytes(r.type) or 0 for r in op.results)


class _Graph:
    """The forward ops of one body as the flow network of the module docstring."""

    def __init__(self, sweeps: Sweeps, policy: str):
        self.sweeps = sweeps
        self.nodes = [op for op in sweeps.forward_ops() if not is_constant(op)]
        self.index = {op: i for i, op in enumerate(self.nodes)}
        self.needed = [op for op in self.nodes if sweeps.reads_in_reverse(op)]
        self.recomputable = {op: is_recomputable(op) and self._policy_recomputes(op, policy) for op in self.nodes}
        self.saveable = {op: self._policy_saves(op, policy) or not self.recomputable[op] for op in self.nodes}
        self.flops = {op: op_flops(op) for op in self.nodes}

    @staticmethod
    def _policy_recomputes(op: ir.Operation, policy: str) -> bool:
        if policy == "save-everything":
            return False
        if policy == "save-dots":
            return op.name not in _CONTRACTIONS
        return True

    @staticmethod
    def _policy_saves(op: ir.Operation, policy: str) -> bool:
        if policy == "save-nothing":
            return False
        if policy == "save-dots":
            return op.name in _CONTRACTIONS
        return True

    def producers(self, op: ir.Operation) -> Iterable[ir.Operation]:
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, ir.Block):
                continue
            producer = owner.operation
            if producer in self.index:
                yield producer

    def cut(self, mu: int, flops_weight: int = 1) -> Plan:
        """The minimum cut for ``mu * bytes + flops_weight * flops``."""
        import networkx as nx  # on first use: importing it takes 0.3 s

        g = nx.DiGraph()
        source, sink = "source", "sink"
        g.add_nodes_from([source, sink])
        for i, op in enumerate(self.nodes):
            inner, outer = ("in", i), ("out", i)
            if self.saveable[op]:
                g.add_edge(inner, outer, capacity=mu * _bytes(op))
            else:
                g.add_edge(inner, outer)  # no capacity: infinite
            if self.recomputable[op]:
                g.add_edge(source, inner, capacity=flops_weight * self.flops[op])
            else:
                g.add_edge(source, inner)
            for producer in self.producers(op):
                g.add_edge(("out", self.index[producer]), inner)
        for op in self.needed:
            g.add_edge(("out", self.index[op]), sink)
        _, (reachable, _) = nx.minimum_cut(g, source, sink)
        recompute_side = {op for i, op in enumerate(self.nodes) if ("in", i) not in reachable}
        return self.plan(recompute_side)

    def improve(self, plan: Plan, budget: int) -> Plan:
        """Save recomputed ops one at a time while that lowers flops within the budget.

        The cuts only reach the convex hull of the (bytes, flops) trade-off;
        this walks from there to cheaper plans that the hull skips over.
        """
        improved = True
        while improved:
            improved = False
            for op in sorted(plan.recomputed, key=lambda o: -self.flops[o]):
                candidate = self.plan(set(plan.recomputed) - {op})
                if candidate.saved_bytes <= budget and candidate.recompute_flops < plan.recompute_flops:
                    plan, improved = candidate, True
                    break
        return plan

    def plan(self, recompute_side: set[ir.Operation]) -> Plan:
        """Saved and recomputed ops: what the reverse sweep reads, traced through recomputations."""
        saved: set[ir.Operation] = set()
        recomputed: set[ir.Operation] = set()
        work = list(self.needed)
        while work:
            op = work.pop()
            if op in saved or op in recomputed:
                continue
            if op in recompute_side:
                recomputed.add(op)
                work.extend(self.producers(op))
            else:
                saved.add(op)
        return Plan(
            frozenset(saved),
            frozenset(recomputed),
            sum(_bytes(op) for op in saved),
            sum(self.flops[op] for op in recomputed),
        )


def plan_checkpoints(fn: func.FuncOp | ir.Operation, policy: str, budget: int | None) -> Plan:
    """The checkpointing decision for ``fn`` (see the module docstring)."""
    graph = _Graph(Sweeps(fn), policy)
    if not graph.needed:
        return Plan(frozenset(), frozenset(), 0, 0)
    if policy != "min-recompute":
        return graph.cut(mu=1)  # the policy leaves one choice per op
    everything = graph.plan(set())
    if budget is None or everything.saved_bytes <= budget:
        return everything
    upper = sum(graph.flops.values()) + 1  # above this, saving any byte costs more than recomputing all
    least = graph.cut(mu=upper)
    if least.saved_bytes > budget:
        raise _BudgetError(least)
    lower = 0  # infeasible (saves everything)
    best = least
    while upper - lower > 1:
        mu = (lower + upper) // 2
        candidate = graph.cut(mu)
        if candidate.saved_bytes <= budget:
            upper, best = mu, candidate
        else:
            lower = mu
    return graph.improve(best, budget)


class _BudgetError(Exception):
    def __init__(self, least: Plan):
        self.least = least


def recompute(sweeps: Sweeps, plan: Plan) -> int:
    """Rewrite the body: copies of the recomputed ops feed the reverse sweep. Returns the copies made."""
    copies: dict[ir.Operation, ir.Operation] = {}

    def copy_of(op: ir.Operation, before: ir.Operation) -> ir.Operation:
        if op in copies:
            return copies[op]
        # The operands' copies first, so that they precede this copy.
        replacements = [_replacement(operand, before) for operand in op.operands]
        new = op.clone(ip=ir.InsertionPoint(before))
        for i, replacement in enumerate(replacements):
            if replacement is not None:
                new.operands[i] = replacement
        new.location = recompute_location(op.location)
        new.attributes[RECOMPUTE_ATTR] = ir.UnitAttr.get()
        copies[op] = new
        return new

    def _replacement(value: ir.Value, before: ir.Operation) -> ir.Value | None:
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.operation not in plan.recomputed:
            return None
        producer = owner.operation
        return copy_of(producer, before).results[_result_number(producer, value)]

    for user in sweeps.reverse_ops():
        for nested in _self_and_nested(user):
            for i, operand in enumerate(nested.operands):
                replacement = _replacement(operand, user)
                if replacement is not None:
                    nested.operands[i] = replacement
    _erase_unused(sweeps, plan.recomputed)
    return len(copies)


def _result_number(op: ir.Operation, value: ir.Value) -> int:
    return next(i for i, r in enumerate(op.results) if r == value)


def _self_and_nested(op: ir.Operation) -> Iterable[ir.Operation]:
    found = [op]

    def visit(nested: ir.Operation) -> ir.WalkResult:
        found.append(nested.operation)
        return ir.WalkResult.ADVANCE

    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner.operation.walk(visit)
    return found


def _erase_unused(sweeps: Sweeps, candidates: frozenset[ir.Operation]) -> None:
    for op in reversed(sweeps.ops):
        if op in candidates and all(not list(r.uses) for r in op.results):
            op.erase()


@register_pass
class Checkpoint(ModulePass):
    name = "dlvm-checkpoint"
    summary = "AD checkpointing: save or recompute each forward value a gradient's reverse sweep reads"
    options = (
        Option("policy", str, "min-recompute", "which values to save", choices=POLICIES),
        Option("budget", str, "", "residual memory budget for min-recompute (e.g. 65536, 64KiB, 1.5MB)"),
    )

    def run(self, module: ir.Operation) -> None:
        budget = self._budget(module)
        for op in module.regions[0].blocks[0].operations:
            if isinstance(op.opview, func.FuncOp) and len(op.regions[0].blocks):
                self._checkpoint(op.operation, budget)

    def _budget(self, module: ir.Operation) -> int | None:
        if not self.budget:
            return None
        if self.policy != "min-recompute":
            raise PassError(f"budget applies to policy=min-recompute, not policy={self.policy}", at=module)
        try:
            return parse_bytes(self.budget)
        except ValueError as err:
            raise PassError(f"dlvm-checkpoint: bad budget: {err}", at=module) from None

    def _checkpoint(self, fn: ir.Operation, budget: int | None) -> None:
        sweeps = Sweeps(fn)
        if not sweeps.has_reverse_sweep or any(s is Sweep.RECOMPUTE for s in sweeps.sweep.values()):
            return  # not a gradient body, or already checkpointed
        try:
            plan = plan_checkpoints(fn, self.policy, budget)
        except _BudgetError as err:
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            self.emit_error(
                fn,
                f"dlvm-checkpoint: @{name} cannot meet budget={self.budget} ({budget} bytes): "
                f"its reverse sweep needs at least {err.least.saved_bytes} bytes of values that "
                "cannot be recomputed",
            )
            return
        if plan.recomputed:
            recompute(sweeps, plan)
