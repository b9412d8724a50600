"""Reductions: reduce_*, argmax/argmin, cumulative ops, windowed reductions (pooling), sort, top_k."""

from __future__ import annotations

from typing import Any

import dlvm_mlir.nnkit as dl
from dlvm_mlir.nnkit import Tensor

from .importer import Unsupported, dtype, register

_REDUCE = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "prod",
           "reduce_and": "and", "reduce_or": "or"}


def _reduce(kind: str) -> Any:
    def rule(eqn: Any, x: Tensor) -> Tensor:
        axes = [int(a) for a in eqn.params["axes"]]
        return dl.reduce(kind, x, axes) if axes else x

    return rule


for _name, _kind in _REDUCE.items():
    register("reductions", _name)(_reduce(_kind))


@register("reductions", "argmax", "argmin")
def _arg(eqn: Any, x: Tensor) -> Tensor:
    (axis,) = eqn.params["axes"]
    op = dl.argmax if eqn.primitive.name == "argmax" else dl.argmin
    return op(x, int(axis), dtype(eqn.params["index_dtype"]))


_CUMULATIVE = {"cumsum": "add", "cumprod": "mul", "cummax": "max", "cummin": "min"}


def _cumulative(kind: str) -> Any:
    def rule(eqn: Any, x: Tensor) -> Tensor:
        return dl.scan(kind, x, int(eqn.params["axis"]), reverse=bool(eqn.params.get("reverse", False)))

    return rule


for _name, _kind in _CUMULATIVE.items():
    register("reductions", _name)(_cumulative(_kind))

_WINDOW = {"reduce_window_sum": "add", "reduce_window_max": "max", "reduce_window_min": "min"}


def _window(kind: str) -> Any:
    def rule(eqn: Any, x: Tensor) -> Tensor:
        p = eqn.params
        return dl.reduce_window(
            kind, x, list(p["window_dimensions"]), list(p["window_strides"]),
            [(int(lo), int(hi)) for lo, hi in p["padding"]],
            window_dilation=list(p["window_dilation"]), base_dilation=list(p["base_dilation"]),
        )

    return rule


for _name, _kind in _WINDOW.items():
    register("reductions", _name)(_window(_kind))


@register("reductions", "sort")
def _sort(eqn: Any, *xs: Tensor) -> list[Tensor]:
    if int(eqn.params.get("num_keys", 1)) != 1:
        raise Unsupported("sorting by more than one key")
    return list(dl.sort(list(xs), int(eqn.params["dimension"])))


@register("reductions", "top_k")
def _top_k(eqn: Any, x: Tensor) -> list[Tensor]:
    axis = int(eqn.params.get("axis", -1)) % x.ndim
    last = x.ndim - 1
    if axis == last:
        return list(dl.top_k(x, int(eqn.params["k"])))
    perm = list(range(x.ndim))
    perm[axis], perm[last] = last, axis
    values, indices = dl.top_k(dl.transpose(x, perm), int(eqn.params["k"]))
    return [dl.transpose(values, perm), dl.transpose(indices, perm)]
