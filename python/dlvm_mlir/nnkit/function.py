"""Staged functions: ``@dl.function``, specialization per argument types, JIT at first call.

A :class:`StagedFunction` is NNKit's ``Rep<(...) -> ...>``. Called on numpy
arrays it is *specialized* to their shapes and dtypes (a :class:`Specialization`:
a fresh module with the function, everything it applies, and the gradient
declarations it needs), lowered to DLVM IR, compiled by
:func:`dlvm_mlir.compile` (AD, dlvm-optimize, dlvm-to-linalg, back end) and
run; specializations are cached per argument Specs. Called while another
staged function is being traced, it is *staged application*: the callee is
specialized into the same module and a ``func.call`` is emitted.
"""

from __future__ import annotations

import inspect
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np
from mlir import ir
from mlir.dialects import func

import dlvm_mlir
from dlvm_mlir import interpreter
from dlvm_mlir.compiler import STAGES, CompileError, CompileOptions, Executable, lower
from dlvm_mlir import crash_guard

from .errors import ArityError, StagingError, TracingError
from .specs import Spec, TensorAnnotation, spec, to_argument
from .tensor import Tensor
from .tracing import Emitted, FunctionTrace, ModuleBuilder, build_op, current_trace, require_trace, tracing

__all__ = ["Function", "Specialization", "StagedFunction", "function"]

IR_STAGES = ("dlvm", *STAGES)
"""Stages ``.ir(stage=...)`` can show: the staged DLVM IR, then the compiler's stages."""


class Specialization:
    """A staged function at one list of argument Specs: its module, IR at each stage, executable.

    Compilation runs ``dlvm-differentiate`` first, then makes every function
    but the entry private (synthesized gradients come out public), so the back
    end compiles one entry point and inlines the rest; the remaining stages
    are :func:`dlvm_mlir.compile`'s.
    """

    def __init__(self, staged: StagedFunction, args: tuple[Spec, ...]) -> None:
        self.staged = staged
        self.args = args
        start = time.perf_counter()
        builder = ModuleBuilder()
        with builder.context, ir.Location.unknown():
            self.entry: Emitted = staged._emit_entry(builder, args)
        self.module: ir.Module = builder.module
        self.trace_seconds = time.perf_counter() - start
        self.compile_seconds: float | None = None
        self._differentiated: ir.Module | None = None
        self._executable: Executable | None = None
        self._run: Callable[..., Any] | None = None

    @property
    def results(self) -> tuple[Spec, ...]:
        return self.entry.results

    def differentiated(self) -> ir.Module:
        """The module after dlvm-differentiate, with only the entry function public."""
        if self._differentiated is None:
            module = lower(self.module, until="ad", filename=self.staged.name)
            with module.context:
                private = ir.StringAttr.get("private")
                for op in module.body.operations:
                    if "sym_name" in op.attributes and op.attributes["sym_name"].value != self.entry.symbol:
                        op.attributes["sym_visibility"] = private
            self._differentiated = module
        return self._differentiated

    def ir(self, stage: str = "dlvm", debug_info: bool = False) -> str:
        """The program's IR after ``stage`` ("dlvm": as staged; "ad", "optimize", "linalg")."""
        if stage not in IR_STAGES:
            raise CompileError(f"unknown stage '{stage}' (expected one of {', '.join(IR_STAGES)})")
        if stage == "dlvm":
            module = self.module
        elif stage == "ad":
            module = self.differentiated()
        else:
            options = CompileOptions(target=self.staged.target, **self.staged.compile_options)
            module = lower(self.differentiated(), until=stage, options=options, filename=self.staged.name)
        return module.operation.get_asm(enable_debug_info=debug_info)

    @property
    def executable(self) -> Executable:
        """The compiled module (compiled at first use; :func:`dlvm_mlir.compile` caches it)."""
        if self._executable is None:
            start = time.perf_counter()
            self._executable = dlvm_mlir.compile(
                self.module, self.staged.target, filename=self.staged.name,
                entry_points=[self.entry.symbol], **self.staged.compile_options,
            )
            self.compile_seconds = time.perf_counter() - start
        return self._executable

    def __call__(self, *arrays: np.ndarray) -> Any:
        """Run on arrays of exactly the Specs of this specialization."""
        if self._run is None:
            self._run = self.executable[self.entry.symbol]
        return self._shaped(self._run(*arrays))

    def interpret(self, *arrays: np.ndarray, dtype: Any = None) -> Any:
        """Run with the numpy reference interpreter (after AD; no compilation).

        ``dtype=np.float64`` computes every float in float64.
        """
        return self._shaped(interpreter.run(self.differentiated(), self.entry.symbol, *arrays, dtype=dtype))

    def _shaped(self, out: Any) -> Any:
        if self.entry.single:
            return out
        return out if isinstance(out, tuple) else (out,)


class StagedFunction(ABC):
    """A function that is staged into DLVM IR and compiled per argument Specs."""

    def __init__(
        self,
        name: str,
        target: str = "cpu",
        optimize: bool = True,
        checkpoint: str = "save-everything",
        checkpoint_budget: str = "",
    ) -> None:
        self.name = name
        self.target = target
        self.optimize = optimize
        self.checkpoint = checkpoint
        self.checkpoint_budget = checkpoint_budget
        CompileOptions(target=target, **self.compile_options)  # reject bad options here
        self._cache: dict[tuple[Spec, ...], Specialization] = {}
        # a staged function gets compiled: the compiler process starts
        # (importing the compiler) while the caller prepares its data
        crash_guard.prestart()

    @property
    def compile_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`dlvm_mlir.compile` this function is compiled with."""
        return {"optimize": self.optimize, "checkpoint": self.checkpoint, "checkpoint_budget": self.checkpoint_budget}

    # -- what subclasses define -------------------------------------------------

    @abstractmethod
    def param_count(self, builder: ModuleBuilder, args: tuple[Spec, ...]) -> int:
        """How many arguments the function takes (given the Specs it is called with)."""

    @abstractmethod
    def _emit(self, builder: ModuleBuilder, args: tuple[Spec, ...], public: bool) -> Emitted:
        """Emit the function specialized to ``args`` into ``builder`` (called once per Specs)."""

    def annotations(self) -> list[TensorAnnotation | None] | None:
        """Declared parameter types (None: unknown count)."""
        return None

    variadic = False
    """Whether calls may pass more arguments than ``annotations()`` lists (``*args``)."""

    def _check_count(self, given: int, names: str = "") -> None:
        """``given`` arguments are as many as the parameters (at least, with ``*args``)."""
        annotations = self.annotations()
        if annotations is None:
            return
        if given < len(annotations) or (given > len(annotations) and not self.variadic):
            at_least = "at least " if self.variadic else ""
            listed = f" ({names})" if names else ""
            raise ArityError(f"'{self.name}' takes {at_least}{len(annotations)} arguments{listed}, got {given}")

    def _emit_entry(self, builder: ModuleBuilder, args: tuple[Spec, ...]) -> Emitted:
        """The public function a Specialization runs."""
        return builder.emit(self, args, public=True)

    # -- calling ----------------------------------------------------------------

    def __call__(self, *args: Any) -> Any:
        """Staged application while tracing; otherwise specialize, compile (once) and run."""
        if current_trace() is not None:
            return self.apply(*args)
        arrays, specs = self._arguments(args)
        return self._specialization(specs)(*arrays)

    def interpret(self, *args: Any, dtype: Any = None) -> Any:
        """Like calling, but run by the numpy reference interpreter (``dtype=np.float64``: in float64)."""
        arrays, specs = self._arguments(args)
        return self._specialization(specs).interpret(*arrays, dtype=dtype)

    def apply(self, *args: Any) -> Any:
        """Staged application: a ``func.call`` of this function specialized to the arguments' Specs."""
        trace = require_trace(f"staged application of '{self.name}'")
        annotations = self.annotations()
        tensors = []
        for position, arg in enumerate(args):
            annotation = annotations[position] if annotations and position < len(annotations) else None
            tensors.append(_lift(arg, annotation))
        emitted = trace.builder.emit(self, tuple(t.spec for t in tensors))
        values = [t.checked() for t in tensors]
        result_types = [s.mlir() for s in emitted.results]
        call = build_op(
            f"call of '{self.name}'",
            lambda loc: func.CallOp(result_types, ir.FlatSymbolRefAttr.get(emitted.symbol), values, loc=loc),
        )
        results = [Tensor(r, trace.scope) for r in call.results]
        return results[0] if emitted.single else tuple(results)

    def _arguments(self, args: Sequence[Any]) -> tuple[list[np.ndarray], tuple[Spec, ...]]:
        """Arrays to pass and their Specs (the specialization key)."""
        self._check_count(len(args))
        annotations = self.annotations() or []
        pairs = [
            to_argument(arg, annotations[i] if i < len(annotations) else None, f"argument {i} of '{self.name}'")
            for i, arg in enumerate(args)
        ]
        return [array for array, _ in pairs], tuple(spec for _, spec in pairs)

    def _specialization(self, args: tuple[Spec, ...]) -> Specialization:
        found = self._cache.get(args)
        if found is None:
            found = Specialization(self, args)
            self._cache[args] = found
        return found

    # -- inspection -------------------------------------------------------------

    def specialize(self, *examples: Any) -> Specialization:
        """The Specialization for example arguments: arrays, :func:`spec`\\ s, shape tuples or annotations.

        A shape tuple takes the parameter's annotated dtype (default f32).
        """
        annotations = self.annotations()
        specs = []
        for position, example in enumerate(examples):
            annotation = annotations[position] if annotations and position < len(annotations) else None
            specs.append(_example_spec(example, annotation, f"argument {position} of '{self.name}'"))
        self._check_count(len(specs))
        return self._specialization(tuple(specs))

    def ir(self, *examples: Any, stage: str = "dlvm", debug_info: bool = False) -> str:
        """The IR of the specialization for ``examples`` after ``stage`` (dlvm, ad, optimize, linalg)."""
        return self.specialize(*examples).ir(stage, debug_info)

    @property
    def specializations(self) -> dict[tuple[Spec, ...], Specialization]:
        """The specializations made so far, by argument Specs."""
        return dict(self._cache)

    def __repr__(self) -> str:
        return f"<staged function '{self.name}' ({len(self._cache)} specializations)>"


def _lift(arg: Any, annotation: TensorAnnotation | None) -> Tensor:
    from .ops import lift

    return lift(arg, annotation.dtype if annotation is not None else None)


def _example_spec(example: Any, annotation: TensorAnnotation | None, what: str) -> Spec:
    if isinstance(example, Spec):
        return example
    if isinstance(example, TensorAnnotation):
        found = example.default_spec()
        if found is None:
            raise StagingError(f"{what}: {example} is not a complete type (give sizes for every dimension)")
        return found
    if isinstance(example, tuple) and all(isinstance(d, int) for d in example):
        dtype = annotation.dtype if annotation is not None and annotation.dtype is not None else None
        return spec(example) if dtype is None else spec(example, dtype)
    return to_argument(example, annotation, what)[1]


class Function(StagedFunction):
    """A Python function staged by ``@dl.function``."""

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        target: str = "cpu",
        optimize: bool = True,
        checkpoint: str = "save-everything",
        checkpoint_budget: str = "",
    ) -> None:
        super().__init__(name or fn.__name__, target, optimize, checkpoint, checkpoint_budget)
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._signature = inspect.signature(fn)
        fixed = []
        for param in self._signature.parameters.values():
            if param.kind == param.VAR_POSITIONAL:
                self.variadic = True
            elif param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                fixed.append(param.name)
            else:
                raise StagingError(
                    f"staged function '{self.name}': parameter '{param.name}' must be positional (or a *args)"
                )
        hints = _annotations(fn)
        self._annotations = [hints.get(p) if isinstance(hints.get(p), TensorAnnotation) else None for p in fixed]
        code = fn.__code__
        self._defined_at = (code.co_filename, code.co_firstlineno)
        self.traces = 0
        """How many times the Python function was traced (once per specialization)."""

    def annotations(self) -> list[TensorAnnotation | None]:
        return self._annotations

    def param_count(self, builder: ModuleBuilder, args: tuple[Spec, ...]) -> int:
        return len(args) if self.variadic else len(self._annotations)

    def _check(self, args: tuple[Spec, ...]) -> None:
        params = self._signature.parameters.values()
        names = ", ".join(("*" if p.kind == p.VAR_POSITIONAL else "") + p.name for p in params)
        self._check_count(len(args), names)
        bindings: dict[str, int] = {}
        for param, annotation, actual in zip(self._signature.parameters, self._annotations, args):
            if annotation is not None:
                annotation.check(actual, bindings, f"argument '{param}' of '{self.name}'")

    def _emit(self, builder: ModuleBuilder, args: tuple[Spec, ...], public: bool) -> Emitted:
        self._check(args)
        name = builder.symbol(self.name)
        loc = ir.Location.file(*self._defined_at, 1)
        fop = builder.new_function(name, ir.FunctionType.get([s.mlir() for s in args], []), loc, public)
        block = fop.add_entry_block(arg_locs=[loc] * len(args))
        trace = FunctionTrace(builder, fop, name)
        self.traces += 1
        with tracing(trace, block):
            out = self.fn(*(Tensor(arg, trace.scope) for arg in block.arguments))
            single = not isinstance(out, (tuple, list))
            leaves = [] if out is None else [out] if single else list(out)
            if out is None:
                single = False
            if any(isinstance(leaf, (tuple, list)) for leaf in leaves):
                raise TracingError(f"staged function '{self.name}' returns a nested tuple; return a flat tuple")
            results = [_lift(leaf, None) for leaf in leaves]
            values = [r.checked() for r in results]
            func.ReturnOp(values, loc=loc)
        specs = tuple(r.spec for r in results)
        fop.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([s.mlir() for s in args], [s.mlir() for s in specs])
        )
        return Emitted(name, args, specs, single)


def _annotations(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return inspect.get_annotations(fn, eval_str=True)
    except Exception:
        raw = inspect.get_annotations(fn)
        return {k: v for k, v in raw.items() if not isinstance(v, str)}


@overload
def function(fn: Callable[..., Any], /) -> Function: ...
@overload
def function(
    *,
    name: str | None = None,
    target: str = "cpu",
    optimize: bool = True,
    checkpoint: str = "save-everything",
    checkpoint_budget: str = "",
) -> Callable[[Callable[..., Any]], Function]: ...


def function(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    target: str = "cpu",
    optimize: bool = True,
    checkpoint: str = "save-everything",
    checkpoint_budget: str = "",
) -> Function | Callable[[Callable[..., Any]], Function]:
    """Stage a Python function (NNKit's ``lambda``): ``@dl.function`` or ``@dl.function(target="cuda")``.

    Parameters may be annotated ``dl.Tensor[dtype, shape]``; unannotated
    parameters take any type. ``target``, ``optimize``, ``checkpoint`` and
    ``checkpoint_budget`` are passed to :func:`dlvm_mlir.compile` (the
    checkpoint policy applies to every gradient the function computes).
    """
    options = (name, target, optimize, checkpoint, checkpoint_budget)
    if fn is not None:
        return Function(fn, *options)
    return lambda f: Function(f, *options)


lambda_ = function
