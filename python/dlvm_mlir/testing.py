"""Numerical checks of synthesized derivatives against finite differences.

``check_gradients`` declares a seedable gradient of a function, runs
``dlvm-differentiate``, evaluates the gradient with the reference
interpreter in float64, and compares it with central finite differences of
``<seed, f(x)>``; ``check_tangents`` does the same for a forward-mode JVP
along a random direction. Both report the worst relative error per
differentiated argument (infinity norm of the difference over the infinity
norm of the finite-difference estimate)::

    report = check_gradients(text, "f", x, w, wrt=[1])
    report.assert_close(1e-6)

By default the derivative is taken with respect to every floating-point
argument. Bad input (IR that does not parse, an unknown function, a program
that cannot be differentiated or run) raises a :class:`~dlvm_mlir.errors.DLVMError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import func

import dlvm_mlir
from dlvm_mlir.ad.synthesis import differentiate
from dlvm_mlir.dialects.dlvm import DerivativeDecl
from dlvm_mlir.errors import DLVMError
from dlvm_mlir.interpreter import Interpreter
from dlvm_mlir.parsing import parse_module

__all__ = ["DerivativeCheck", "check_gradients", "check_tangents"]

_DERIVATIVE = "__checked_derivative"


@dataclass
class DerivativeCheck:
    """Synthesized vs finite-difference derivatives, per differentiated argument."""

    kind: str
    function: str
    wrt: list[int]
    analytic: list[np.ndarray]
    numeric: list[np.ndarray]
    errors: dict[int, float] = field(default_factory=dict)
    module: str = ""
    #: the tolerance of :attr:`ok` and the default of :meth:`assert_close`
    tolerance: float = 1e-6

    @property
    def worst(self) -> float:
        return max(self.errors.values(), default=0.0)

    @property
    def ok(self) -> bool:
        """Whether every error is within :attr:`tolerance` (NaN is not)."""
        return all(e <= self.tolerance for e in self.errors.values())

    def assert_close(self, tolerance: float | None = None) -> None:
        tolerance = self.tolerance if tolerance is None else tolerance
        if all(e <= tolerance for e in self.errors.values()):
            return
        lines = [f"{self.kind} of @{self.function}: worst relative error {self.worst:.3e} > {tolerance:.1e}"]
        for position, index in enumerate(self.wrt):
            lines.append(f"  argument #{index}: {self.errors[index]:.3e}")
            lines.append(f"    synthesized: {np.array2string(self.analytic[position], precision=6)}")
            lines.append(f"    finite diff: {np.array2string(self.numeric[position], precision=6)}")
        raise AssertionError("\n".join(lines))

    def __str__(self) -> str:
        parts = ", ".join(f"#{i}: {e:.2e}" for i, e in self.errors.items())
        return f"{self.kind} of @{self.function}: worst {self.worst:.2e} ({parts})"


def check_gradients(
    source: str | ir.Module,
    function: str,
    *args: Any,
    wrt: Sequence[int] | None = None,
    from_: int | None = None,
    seeds: Sequence[Any] | None = None,
    step: float = 1e-6,
    rng: int = 0,
    tolerance: float = 1e-6,
    filename: str = "<input>",
) -> DerivativeCheck:
    """Compare a synthesized seedable gradient of ``function`` with central differences.

    ``wrt`` defaults to every floating-point argument; ``filename`` names the
    source in error messages.
    """
    generator = np.random.default_rng(rng)
    inputs = [_as_array(a) for a in args]
    wrt_list = _float_arguments(inputs) if wrt is None else list(wrt)
    module = _parse_with_declaration(source, function, "gradient", wrt_list, from_, True, filename, len(inputs))
    interp = Interpreter(module, dtype=np.float64)
    outputs = _call(interp, function, inputs)
    results = list(range(len(outputs))) if from_ is None else [from_]
    seed_values = list(seeds) if seeds is not None else [_random_like(outputs[r], generator) for r in results]
    analytic = _call(interp, _DERIVATIVE, inputs + [_as_array(s) for s in seed_values])

    def objective(values: list[np.ndarray]) -> float:
        out = _call(interp, function, values)
        return float(sum(np.sum(np.asarray(out[r], dtype=np.float64) * seed) for r, seed in zip(results, seed_values)))

    numeric = [_numeric_gradient(objective, inputs, i, step) for i in wrt_list]
    analytic_grads = [np.asarray(a) for a in analytic[: len(wrt_list)]]
    report = DerivativeCheck("gradient", function, wrt_list, analytic_grads, numeric, tolerance=tolerance)
    report.errors = {i: _relative_error(a, n) for i, a, n in zip(wrt_list, report.analytic, numeric)}
    report.module = str(module)
    return report


def check_tangents(
    source: str | ir.Module,
    function: str,
    *args: Any,
    wrt: Sequence[int] | None = None,
    from_: int | None = None,
    step: float = 1e-6,
    rng: int = 0,
    tolerance: float = 1e-6,
    filename: str = "<input>",
) -> DerivativeCheck:
    """Compare a synthesized JVP of ``function`` along a random direction with central differences."""
    generator = np.random.default_rng(rng)
    inputs = [_as_array(a) for a in args]
    wrt_list = _float_arguments(inputs) if wrt is None else list(wrt)
    module = _parse_with_declaration(source, function, "tangent", wrt_list, from_, False, filename, len(inputs))
    interp = Interpreter(module, dtype=np.float64)
    directions = [_random_like(inputs[i], generator) for i in wrt_list]
    analytic = _call(interp, _DERIVATIVE, inputs + directions)
    outputs = _call(interp, function, inputs)
    results = list(range(len(outputs))) if from_ is None else [from_]

    def shifted(sign: float) -> list[np.ndarray]:
        values = list(inputs)
        for i, d in zip(wrt_list, directions):
            values[i] = inputs[i] + sign * step * d
        return _call(interp, function, values)

    plus, minus = shifted(1.0), shifted(-1.0)
    numeric = [(np.asarray(plus[r], np.float64) - np.asarray(minus[r], np.float64)) / (2 * step) for r in results]
    report = DerivativeCheck(
        "tangent", function, results, [np.asarray(a) for a in analytic[: len(results)]], numeric, tolerance=tolerance
    )
    report.errors = {r: _relative_error(a, n) for r, a, n in zip(results, report.analytic, numeric)}
    report.module = str(module)
    return report


def _float_arguments(inputs: list[np.ndarray]) -> list[int]:
    return [i for i, a in enumerate(inputs) if np.issubdtype(np.asarray(a).dtype, np.floating)]


def _parse_with_declaration(
    source: str | ir.Module,
    function: str,
    kind: str,
    wrt: Sequence[int],
    from_: int | None,
    seedable: bool,
    filename: str = "<input>",
    arity: int | None = None,
) -> ir.Module:
    """Parse ``source`` in a fresh context, declare the derivative to check, differentiate."""
    text = str(source) if isinstance(source, ir.Module) else source
    context = dlvm_mlir.make_context()
    module = parse_module(text, context, filename)
    with context, ir.Location.unknown():
        primal = next(
            (
                op.operation
                for op in module.body.operations
                if op.operation.name == "func.func"
                and ir.StringAttr(op.operation.attributes["sym_name"]).value == function
            ),
            None,
        )
        if primal is None:
            raise DLVMError(f"{filename}: no function @{function} to differentiate")
        primal_type = ir.FunctionType(ir.TypeAttr(primal.attributes["function_type"]).value)
        if arity is not None and arity != len(primal_type.inputs):
            raise DLVMError(f"@{function} takes {len(primal_type.inputs)} argument(s), got {arity}")
        if not wrt:
            raise DLVMError(f"@{function}: no floating-point argument to differentiate with respect to")
        bad = [i for i in wrt if not 0 <= i < len(primal_type.inputs)]
        if bad:
            raise DLVMError(f"@{function} has no argument #{bad[0]}")
        decl = DerivativeDecl(kind, function, tuple(wrt), (), from_, seedable)
        declaration = func.FuncOp(
            _DERIVATIVE, decl.expected_type(primal_type), visibility="private", ip=ir.InsertionPoint(module.body)
        )
        declaration.attributes[decl.attr_name] = decl.to_attr()
        differentiate(module)
        if not module.operation.verify():
            raise AssertionError(f"the differentiated module does not verify:\n{module}")
    return module


def _call(interp: Interpreter, name: str, args: list) -> list:
    out = interp.run(name, *args)
    return list(out) if isinstance(out, tuple) else [out]


def _as_array(value: Any) -> np.ndarray:
    return np.asarray(value)


def _random_like(value: Any, generator: np.random.Generator) -> np.ndarray:
    array = np.asarray(value)
    if not np.issubdtype(array.dtype, np.floating):
        return np.zeros_like(array)
    return generator.standard_normal(array.shape)


def _numeric_gradient(objective, inputs: list[np.ndarray], index: int, step: float) -> np.ndarray:
    base = np.asarray(inputs[index], dtype=np.float64)
    grad = np.zeros_like(base)
    flat = grad.reshape(-1)
    for j in range(base.size):
        h = step * max(1.0, abs(base.reshape(-1)[j]))
        values = list(inputs)
        plus = base.copy()
        plus.reshape(-1)[j] += h
        minus = base.copy()
        minus.reshape(-1)[j] -= h
        values[index] = plus
        f_plus = objective(values)
        values[index] = minus
        f_minus = objective(values)
        flat[j] = (f_plus - f_minus) / (2 * h)
    return grad


def _relative_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    analytic = np.asarray(analytic, dtype=np.float64)
    numeric = np.asarray(numeric, dtype=np.float64)
    scale = max(float(np.max(np.abs(numeric), initial=0.0)), 1e-8)
    return float(np.max(np.abs(analytic - numeric), initial=0.0)) / scale
