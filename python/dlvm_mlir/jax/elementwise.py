"""Elementwise JAX primitives: unary and binary math, comparisons, select_n, clamp, casts."""

from __future__ import annotations

from typing import Any

import dlvm_mlir.nnkit as dl
from dlvm_mlir.nnkit import Tensor

from .importer import Unsupported, dtype, register

UNARY = {
    "neg": "neg", "exp": "exp", "log": "log", "tanh": "tanh", "logistic": "sigmoid", "sqrt": "sqrt",
    "rsqrt": "rsqrt", "square": "square", "sign": "sign", "abs": "abs", "sin": "sin", "cos": "cos",
    "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh",
    "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "floor": "floor", "ceil": "ceil",
    "erf": "erf", "erfc": "erfc", "lgamma": "lgamma", "digamma": "digamma", "log1p": "log1p",
    "expm1": "expm1", "exp2": "exp2", "cbrt": "cbrt", "is_finite": "isfinite",
    "population_count": "popcount", "not": "logical_not",
}
"""JAX primitive -> NNKit elementwise op of one operand."""

BINARY = {
    "add": "add", "sub": "sub", "mul": "mul", "pow": "pow", "max": "maximum", "min": "minimum",
    "atan2": "arctan2", "and": "logical_and", "or": "logical_or", "xor": "logical_xor",
    "shift_left": "left_shift", "shift_right_arithmetic": "right_shift",
    "shift_right_logical": "right_shift_logical", "rem": "remainder",
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
}
"""JAX primitive -> NNKit elementwise op of two operands (comparisons included)."""


def _unary(op: str) -> Any:
    fn = getattr(dl, op)
    return lambda eqn, x: fn(x)


def _binary(op: str) -> Any:
    fn = getattr(dl, op)

    def rule(eqn: Any, x: Tensor, y: Tensor) -> Tensor:
        if x.dtype != y.dtype:  # pow(float, int)
            y = dl.cast(y, x.dtype)
        return fn(x, y)

    return rule


for _name, _op in UNARY.items():
    register("elementwise", _name)(_unary(_op))
for _name, _op in BINARY.items():
    register("elementwise", _name)(_binary(_op))


@register("elementwise", "div")
def _div(eqn: Any, x: Tensor, y: Tensor) -> Tensor:
    return dl.div(x, y) if x.dtype.is_float else dl.trunc_div(x, y)


@register("elementwise", "round")
def _round(eqn: Any, x: Tensor) -> Tensor:
    method = int(eqn.params.get("rounding_method", 0))
    return dl.round(x) if method == 0 else dl.rint(x)


@register("elementwise", "integer_pow")
def _integer_pow(eqn: Any, x: Tensor) -> Tensor:
    """``x ** y`` for a Python int ``y``: products by repeated squaring (exact, differentiable)."""
    y = int(eqn.params["y"])
    n = abs(y)
    if n == 0:
        return dl.ones_like(x)
    result, power = None, x
    while n:
        if n & 1:
            result = power if result is None else dl.mul(result, power)
        n >>= 1
        if n:
            power = dl.mul(power, power)
    return dl.div(dl.ones_like(x), result) if y < 0 else result


@register("elementwise", "select_n")
def _select_n(eqn: Any, which: Tensor, *cases: Tensor) -> Tensor:
    """``cases[which]``: a bool ``which`` picks ``cases[1]`` where true; an int one chains."""
    if len(cases) == 1:
        return cases[0]
    if which.dtype.is_bool:
        return dl.where(which, cases[1], cases[0])
    result = cases[0]
    for k in range(1, len(cases)):
        result = dl.where(dl.equal(which, k), cases[k], result)
    return result


@register("elementwise", "clamp")
def _clamp(eqn: Any, low: Tensor, x: Tensor, high: Tensor) -> Tensor:
    return dl.clip(x, low, high)


@register("elementwise", "convert_element_type")
def _convert(eqn: Any, x: Tensor) -> Tensor:
    target = dtype(eqn.params["new_dtype"])
    if target == x.dtype:
        return x
    if target.is_bool:  # nonzero, as JAX (a cast would truncate 0.5 to false)
        return dl.not_equal(x, dl.zeros_like(x))
    return dl.cast(x, target)


@register("elementwise", "stop_gradient")
def _stop_gradient(eqn: Any, x: Tensor) -> Tensor:
    """A ``dlvm.bitcast`` to the same type: the identity, which DLVM's AD treats as inactive."""
    return dl.bitcast(x, x.dtype) if x.dtype.is_float else x


@register("elementwise", "copy", "copy_p", "optimization_barrier", "sharding_constraint", "device_put")
def _identity(eqn: Any, *xs: Tensor) -> Any:
    return list(xs) if eqn.primitive.multiple_results else xs[0]


@register("elementwise", "reduce_precision")
def _reduce_precision(eqn: Any, x: Tensor) -> Tensor:
    bits = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}.get(x.dtype.name)
    want = (int(eqn.params["exponent_bits"]), int(eqn.params["mantissa_bits"]))
    if bits is None or want[0] < bits[0] or want[1] < bits[1]:
        raise Unsupported(f"rounding {x.dtype} to {want[0]} exponent and {want[1]} mantissa bits")
    return x
