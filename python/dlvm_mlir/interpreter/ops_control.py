"""Functions, calls and control flow: ``func``, ``cf``, ``scf``."""

from __future__ import annotations

import numpy as np

from .core import FunctionRef, InterpreterError, op, terminator


def _truth(v) -> bool:
    a = np.asarray(v)
    if a.ndim != 0:
        raise InterpreterError(f"expected a scalar condition, got shape {a.shape}")
    return bool(a)


# --------------------------------------------------------------------------
# func
# --------------------------------------------------------------------------


@terminator("func.return", "scf.yield", "scf.condition", "tensor.yield", "affine.yield")
def _exit(frame, node, args):
    return None, args


@op("func.call", seq=True)
def _call(frame, node, args):
    return frame.call(node.attr("callee"), args)


@op("func.constant")
def _func_constant(frame, node, args):
    return FunctionRef(node.attr("value"))


@op("func.call_indirect", seq=True)
def _call_indirect(frame, node, args):
    ref = args[0]
    if not isinstance(ref, FunctionRef):
        raise InterpreterError(f"callee is not a function reference: {ref!r}")
    return frame.call(ref.name, args[1:])


# --------------------------------------------------------------------------
# cf
# --------------------------------------------------------------------------


@terminator("cf.br")
def _br(frame, node, args):
    return node.succ[0], args


@terminator("cf.cond_br")
def _cond_br(frame, node, args):
    _, n_true, _ = node.segments()
    if _truth(args[0]):
        return node.succ[0], args[1 : 1 + n_true]
    return node.succ[1], args[1 + n_true :]


@terminator("cf.switch")
def _switch(frame, node, args):
    n_flag, n_default, _ = node.segments()
    flag = int(np.asarray(args[0]))
    default_args = args[n_flag : n_flag + n_default]
    case_args = args[n_flag + n_default :]
    values = node.attr("case_values")
    if values is not None:
        sizes = node.attr("case_operand_segments")
        start = 0
        for i, v in enumerate(np.asarray(values).reshape(-1)):
            if int(v) == flag:
                return node.succ[1 + i], case_args[start : start + sizes[i]]
            start += sizes[i]
    return node.succ[0], default_args


@op("cf.assert")
def _assert(frame, node, args):
    if not _truth(args[0]):
        raise node.error(f"assertion failed: {node.attr('msg', '')}")


# --------------------------------------------------------------------------
# scf
# --------------------------------------------------------------------------


@op("scf.for", seq=True)
def _for(frame, node, args):
    lb, ub, step, *values = args
    body = node.regions[0]
    iv_type = type(lb)
    # bounds and step are signed (i1 true is -1) unless unsignedCmp says otherwise
    i, ub_, step_ = (-int(v) if isinstance(v, np.bool_) else int(v) for v in (lb, ub, step))
    if node.has_attr("unsignedCmp"):
        bits = np.dtype(type(lb)).itemsize * 8 if not isinstance(lb, np.bool_) else 1
        mask = (1 << bits) - 1
        i, ub_, step_ = i & mask, ub_ & mask, step_ & mask
    if i < ub_ and step_ <= 0:
        raise node.error(f"scf.for step must be positive, got {step_}")
    run = frame.run
    while i < ub_:
        # the counter in its type (an unsigned count past the signed range wraps)
        iv = i if iv_type is int else np.array(i & 0xFFFFFFFFFFFFFFFF, np.uint64).astype(iv_type)[()]
        values = run(body, [iv, *values])
        i += step_
    return values


@op("scf.while", seq=True)
def _while(frame, node, args):
    before, after = node.regions
    values = args
    run = frame.run
    while True:
        cond, *forwarded = run(before, values)
        if not _truth(cond):
            return forwarded
        values = run(after, forwarded)


@op("scf.if", seq=True)
def _if(frame, node, args):
    region = node.regions[0] if _truth(args[0]) else node.regions[1]
    return frame.run(region, [])


@op("scf.execute_region", seq=True)
def _execute_region(frame, node, args):
    return frame.run(node.regions[0], [])


@op("scf.index_switch", seq=True)
def _index_switch(frame, node, args):
    value = int(np.asarray(args[0]))
    cases = node.attr("cases") or ()
    for i, case in enumerate(cases):
        if case == value:
            return frame.run(node.regions[1 + i], [])
    return frame.run(node.regions[0], [])
