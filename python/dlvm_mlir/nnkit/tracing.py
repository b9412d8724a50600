"""Staging state: the module being built, the function being traced, op creation.

Calling a staged function on concrete arguments builds one
:class:`ModuleBuilder` (a fresh MLIR context and module). Tracing a Python
function into it pushes a :class:`FunctionTrace`; staged control flow pushes a
:class:`Scope` per region. Every op is created by :func:`build_op`, which
gives it the user's ``file:line:col`` as its MLIR location and turns MLIR's
complaints (result-type inference, verifiers) into :class:`StagingError`\\ s at
that line.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from mlir import ir
from mlir.dialects import func

import dlvm_mlir

from .errors import DTypeError, ShapeError, StagingError, TracingError, user_location
from .specs import Spec

if TYPE_CHECKING:
    from .function import StagedFunction

__all__ = [
    "Emitted",
    "FunctionTrace",
    "ModuleBuilder",
    "Scope",
    "build_op",
    "current_trace",
    "here",
    "require_trace",
]

T = TypeVar("T")


class Scope:
    """A region being traced: a function body or a region of an scf op."""

    __slots__ = ("parent", "trace")

    def __init__(self, trace: FunctionTrace, parent: Scope | None) -> None:
        self.trace = trace
        self.parent = parent

    def within(self, other: Scope) -> bool:
        """True when this scope is ``other`` or nested inside it."""
        scope: Scope | None = self
        while scope is not None:
            if scope is other:
                return True
            scope = scope.parent
        return False


class FunctionTrace:
    """A ``func.func`` whose body the user's Python function is filling in."""

    def __init__(self, builder: ModuleBuilder, func_op: func.FuncOp, name: str) -> None:
        self.builder = builder
        self.func_op = func_op
        self.name = name
        self.scope = Scope(self, None)

    @contextmanager
    def region(self, block: ir.Block, scope: Scope | None = None) -> Iterator[Scope]:
        """Trace into ``block`` (a region of an op in the current scope); ``scope`` re-enters one."""
        scope = scope or Scope(self, self.scope)
        outer, self.scope = self.scope, scope
        try:
            with ir.InsertionPoint(block):
                yield scope
        finally:
            self.scope = outer


_LOCAL = threading.local()


def _stack() -> list[FunctionTrace]:
    if not hasattr(_LOCAL, "stack"):
        _LOCAL.stack = []
    return _LOCAL.stack


def current_trace() -> FunctionTrace | None:
    """The innermost function being traced in this thread, or None."""
    stack = _stack()
    return stack[-1] if stack else None


def require_trace(what: str) -> FunctionTrace:
    trace = current_trace()
    if trace is None:
        raise TracingError(
            f"{what} stages code and can only be used while a staged function is traced "
            "(inside a @dl.function)"
        )
    return trace


@contextmanager
def tracing(trace: FunctionTrace, entry: ir.Block) -> Iterator[FunctionTrace]:
    """Make ``trace`` current and insert into ``entry``."""
    stack = _stack()
    stack.append(trace)
    try:
        with trace.builder.context, ir.Location.unknown(), ir.InsertionPoint(entry):
            yield trace
    finally:
        stack.pop()


def here() -> ir.Location:
    """The MLIR location of the user's current line (unknown when there is none)."""
    loc = user_location()
    if loc is None:
        return ir.Location.unknown()
    return ir.Location.file(loc.filename, loc.line, loc.column)


_OP_PREFIX = re.compile(r"^'([\w.]+)' op ")


def _messages(err: ir.MLIRError) -> list[str]:
    messages = [diag.message for diag in err.error_diagnostics] or [str(err)]
    return [_OP_PREFIX.sub("", message) for message in messages]


def _staging_error(what: str, err: ir.MLIRError) -> StagingError:
    message = f"{what}: " + "; ".join(_messages(err))
    if "element type" in message or re.search(r"must be .* values", message):
        return DTypeError(message)
    return ShapeError(message)


def build_op(what: str, build: Callable[[ir.Location], T], *, verify: bool = True) -> T:
    """Create an op with ``build(location)`` at the user's line; verify it.

    ``build`` returns the op's (first) result or the op. A failure of
    result-type inference or of the op's verifier becomes a ShapeError or
    DTypeError naming ``what`` at the user's line.
    """
    loc = here()
    try:
        result = build(loc)
    except ir.MLIRError as err:
        raise _staging_error(what, err) from None
    if verify:
        op = (result.owner if isinstance(result, ir.Value) else result).operation
        try:
            op.verify()
        except ir.MLIRError as err:
            op.erase()
            raise _staging_error(what, err) from None
    return result


@dataclass(frozen=True)
class Emitted:
    """A function emitted into a module: its symbol and its argument and result types."""

    symbol: str
    args: tuple[Spec, ...]
    results: tuple[Spec, ...]
    single: bool = False
    """Whether a call yields one value (else a tuple of the results)."""

    def function_type(self) -> ir.FunctionType:
        return ir.FunctionType.get([s.mlir() for s in self.args], [s.mlir() for s in self.results])


class ModuleBuilder:
    """One module under construction: unique symbols, one function per (staged function, Specs)."""

    def __init__(self) -> None:
        self.context = dlvm_mlir.make_context()
        with self.context, ir.Location.unknown():
            self.module = ir.Module.create()
        self._emitted: dict[tuple[int, tuple[Spec, ...]], Emitted] = {}
        self._keep: list[StagedFunction] = []
        self._active: set[tuple[int, tuple[Spec, ...]]] = set()
        self._names: set[str] = set()

    def symbol(self, base: str) -> str:
        """A fresh symbol name derived from ``base``."""
        base = re.sub(r"\W", "_", base) or "fn"
        if base[0].isdigit():
            base = "_" + base
        name, counter = base, 0
        while name in self._names:
            counter += 1
            name = f"{base}_{counter}"
        self._names.add(name)
        return name

    def emit(self, staged: StagedFunction, specs: tuple[Spec, ...], public: bool = False) -> Emitted:
        """``staged`` specialized to ``specs`` in this module (emitted once)."""
        key = (id(staged), specs)
        if key in self._emitted:
            return self._emitted[key]
        if key in self._active:
            raise TracingError(
                f"recursive staged application of '{staged.name}' is not supported "
                "(use dl.while_loop or dl.fori_loop)"
            )
        self._active.add(key)
        try:
            with self.context, ir.Location.unknown():
                emitted = staged._emit(self, specs, public)
        finally:
            self._active.discard(key)
        self._emitted[key] = emitted
        self._keep.append(staged)
        return emitted

    def insertion_point(self) -> ir.InsertionPoint:
        """Where a new function goes: before the function being traced, else at the end."""
        trace = current_trace()
        if trace is not None and trace.builder is self:
            return ir.InsertionPoint(trace.func_op)
        return ir.InsertionPoint(self.module.body)

    def new_function(
        self, name: str, function_type: ir.FunctionType, loc: ir.Location, public: bool
    ) -> func.FuncOp:
        with self.insertion_point():
            return func.FuncOp(name, function_type, visibility=None if public else "private", loc=loc)

    def text(self, debug_info: bool = False) -> str:
        return self.module.operation.get_asm(enable_debug_info=debug_info)
