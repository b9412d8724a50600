"""Derivative rules of the func dialect: calls.

A call differentiates through a derivative of the callee: in reverse mode a
seedable gradient with respect to the active arguments, called with the
result adjoints as seeds; in forward mode a JVP that also keeps the results.
The synthesizer creates each derivative once and reuses it, so a recursive
function's gradient calls itself.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.registry import adjoint, tangent


def _callee(op) -> str:
    return ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value


@adjoint("func.call")
def _call(r) -> None:
    operation = r.operation
    wrt = [i for i in range(len(operation.operands)) if r.wants(i)]
    if not wrt:
        return
    name = r.sweep.synthesizer.request_gradient(_callee(operation), wrt, operation)
    seeds = [r.grad_or_zeros(k) for k in range(len(operation.results))]
    args = [r.x(i) for i in range(len(operation.operands))]
    result_types = [operation.operands[i].type for i in wrt]
    call = func.CallOp(result_types, ir.FlatSymbolRefAttr.get(name), args + seeds)
    for k, i in enumerate(wrt):
        r.accumulate(i, call.results[k])


@tangent("func.call", emits_primal=True)
def _call_tangent(t) -> None:
    operation = t.operation
    wrt = [i for i in range(len(operation.operands)) if t.dx(i) is not None]
    args = [t.x(i) for i in range(len(operation.operands))]
    if not wrt:
        t.emit_primal()
        return
    name = t.sweep.synthesizer.request_tangent(_callee(operation), wrt, operation)
    results = list(operation.results)
    types = [r.type for r in results] * 2
    call = func.CallOp(types, ir.FlatSymbolRefAttr.get(name), args + [t.dx(i) for i in wrt])
    n = len(results)
    t.bind_results(list(call.results)[n:])
    for k in range(n):
        if vocab.is_float(results[k].type):
            t.set(k, call.results[k])
