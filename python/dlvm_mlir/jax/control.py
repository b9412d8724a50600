"""Calls and control flow: jit/pjit, closed_call, remat, custom_jvp/vjp calls (inlined),
scan (``dl.fori_loop``, or unrolled), while (``dl.while_loop``), cond (``dl.cond``)."""

from __future__ import annotations

from typing import Any

import dlvm_mlir.nnkit as dl
from dlvm_mlir.nnkit import Tensor

from .importer import Unsupported, inline, register

# -- calls: the inner jaxpr is staged in place -----------------------------------------

_CALLS = {
    "jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
    "remat": "jaxpr", "checkpoint": "jaxpr", "remat2": "jaxpr",
    "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
}


@register("calls", *_CALLS)
def _call(eqn: Any, *args: Tensor) -> list[Tensor]:
    """The callee inlined. custom_jvp/custom_vjp functions are differentiated by DLVM's AD
    of their primal, not by their custom rule, except ``jax.nn.relu`` (a custom_jvp of
    ``max(x, 0)``): it becomes ``dl.relu``, whose derivative is JAX's rule (0 at 0, where
    ``max``'s is 1/2) and which the CPU back end computes on a convolution's accumulators."""
    params = eqn.params
    jaxpr = params.get(_CALLS[eqn.primitive.name])
    if jaxpr is None:
        jaxpr = params.get("call_jaxpr", params.get("fun_jaxpr", params.get("jaxpr")))
    if jaxpr is None:
        raise Unsupported(f"no inner jaxpr among its parameters ({', '.join(params)})")
    count = len(jaxpr.jaxpr.invars if hasattr(jaxpr, "jaxpr") else jaxpr.invars)
    if eqn.primitive.name == "custom_jvp_call" and count == 1 and _is_relu(jaxpr):
        return [dl.relu(args[-1])]
    return inline(jaxpr, list(args[len(args) - count:]))


def _is_relu(jaxpr: Any) -> bool:
    """Is ``jaxpr`` ``max(x, 0)`` of its one argument (through nested jit calls)?"""
    inner = jaxpr.jaxpr if hasattr(jaxpr, "jaxpr") else jaxpr
    if len(inner.eqns) != 1 or len(inner.invars) != 1:
        return False
    (eqn,) = inner.eqns
    if eqn.primitive.name in ("jit", "pjit", "closed_call"):
        callee = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
        return callee is not None and list(eqn.invars) == list(inner.invars) and _is_relu(callee)
    if eqn.primitive.name != "max" or list(inner.outvars) != list(eqn.outvars):
        return False
    operands = list(eqn.invars)
    literals = [v for v in operands if hasattr(v, "val")]
    return (len(literals) == 1 and inner.invars[0] in operands and not getattr(literals[0].aval, "shape", ())
            and float(literals[0].val) == 0.0)


# -- scan ------------------------------------------------------------------------------

UNROLL_LIMIT = 0
"""Scans of at most this many steps are unrolled (as are those JAX is told to unroll fully)."""


def _step(x: Tensor, t: Any) -> Tensor:
    """``x[t]`` for a staged or Python step ``t``."""
    rest = list(x.shape[1:])
    return dl.reshape(dl.dynamic_slice(x, [t] + [0] * len(rest), [1] + rest), rest)


@register("control", "scan")
def _scan(eqn: Any, *args: Tensor) -> list[Tensor]:
    """``lax.scan``: a ``dl.fori_loop`` whose state is the carry and the stacked outputs
    (each step reads ``xs[t]`` by ``dl.dynamic_slice`` and writes ``ys[t]`` by
    ``dl.dynamic_update_slice``); unrolled when JAX's ``unroll`` covers every step."""
    p = eqn.params
    body, length, reverse = p["jaxpr"], int(p["length"]), bool(p["reverse"])
    n_consts, n_carry = int(p["num_consts"]), int(p["num_carry"])
    consts, init, xs = list(args[:n_consts]), list(args[n_consts:n_consts + n_carry]), list(args[n_consts + n_carry:])
    ys_avals = [v.aval for v in eqn.outvars[n_carry:]]
    unroll = p.get("unroll", 1)
    if unroll is True or (not isinstance(unroll, bool) and int(unroll) >= length) or length <= UNROLL_LIMIT:
        carry, stacked = init, [[] for _ in ys_avals]
        for k in range(length):
            t = length - 1 - k if reverse else k
            outs = inline(body, consts + carry + [_step(x, t) for x in xs])
            carry = outs[:n_carry]
            for out, y in zip(stacked, outs[n_carry:]):
                out.append(y)
        if reverse:
            stacked = [list(reversed(ys)) for ys in stacked]
        return carry + [
            dl.concatenate([dl.reshape(y, [1, *y.shape]) for y in ys], 0) if ys else
            dl.zeros(list(aval.shape), _dtype(aval)) for ys, aval in zip(stacked, ys_avals)
        ]
    ys_init = [dl.zeros(list(aval.shape), _dtype(aval)) for aval in ys_avals]

    def step(i: Tensor, state: tuple) -> tuple:
        carry, ys = list(state[:n_carry]), list(state[n_carry:])
        t = dl.sub(dl.constant(length - 1, i.dtype), i) if reverse else i
        outs = inline(body, consts + carry + [_step(x, t) for x in xs])
        ys = [dl.dynamic_update_slice(buf, dl.reshape(y, [1, *y.shape]), [t] + [0] * y.ndim)
              for buf, y in zip(ys, outs[n_carry:])]
        return tuple(outs[:n_carry] + ys)

    return list(dl.fori_loop(0, length, step, tuple(init + ys_init)))


def _dtype(aval: Any) -> dl.DType:
    from .importer import dtype

    return dtype(aval.dtype)


# -- while and cond --------------------------------------------------------------------


@register("control", "while")
def _while(eqn: Any, *args: Tensor) -> list[Tensor]:
    p = eqn.params
    n_cond, n_body = int(p["cond_nconsts"]), int(p["body_nconsts"])
    cond_consts, body_consts, init = list(args[:n_cond]), list(args[n_cond:n_cond + n_body]), list(args[n_cond + n_body:])

    def cond_fn(state: tuple) -> Tensor:
        return inline(p["cond_jaxpr"], cond_consts + list(state))[0]

    def body_fn(state: tuple) -> tuple:
        return tuple(inline(p["body_jaxpr"], body_consts + list(state)))

    return list(dl.while_loop(cond_fn, body_fn, tuple(init)))


@register("control", "cond")
def _cond(eqn: Any, index: Tensor, *operands: Tensor) -> list[Tensor]:
    """``lax.cond`` / ``lax.switch``: nested ``dl.cond``s (the index clamped, as JAX does)."""
    branches = list(eqn.params["branches"])

    def select(first: int) -> Any:
        if first == len(branches) - 1:
            return lambda *ops: tuple(inline(branches[first], list(ops)))
        if index.dtype.is_bool:
            pred = dl.logical_not(index)
        else:
            pred = dl.less_equal(index, dl.constant(first, index.dtype))
        return lambda *ops: dl.cond(pred, select_branch(first), select(first + 1), *ops)

    def select_branch(k: int) -> Any:
        return lambda *ops: tuple(inline(branches[k], list(ops)))

    return list(select(0)(*operands))
