"""The jaxpr interpreter onto NNKit: each JAX primitive of a jaxpr becomes NNKit ops.

``PRIMITIVES`` maps a JAX primitive's name to its *rule*: ``rule(eqn, *args)``
takes the jaxpr equation (for its ``params`` and result avals) and its operands
as NNKit tensors (literals and constants already staged as ``dl.constant``), and
returns the result tensor (or a list of them for a multiple-results primitive).
The rules live in the modules of their family (``elementwise``, ``linalg``,
``reductions``, ``shapes``, ``control``); each registers itself with
:func:`register`.

:func:`stage` turns a closed jaxpr into an NNKit staged function of a fixed
positional signature (one parameter per jaxpr input), so that ``dl.gradient``
(``seedable=True``) can differentiate it. A primitive without a rule, or one
whose rule NNKit rejects, is a :class:`dlvm_mlir.errors.FrontendError` at the
user's line (``eqn.source_info``), never a traceback from inside the importer.
"""

from __future__ import annotations

import inspect
import linecache
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax._src import core
from jax._src import source_info_util

import dlvm_mlir.nnkit as dl
from dlvm_mlir.errors import DLVMError, FrontendError, SourceLocation
from dlvm_mlir.nnkit import Tensor

__all__ = ["PRIMITIVES", "JaxFrontendError", "dtype", "eval_jaxpr", "inline", "register", "stage"]

Rule = Callable[..., Any]

PRIMITIVES: dict[str, Rule] = {}
"""JAX primitive name -> rule (``rule(eqn, *tensors)``)."""

FAMILIES: dict[str, str] = {}
"""JAX primitive name -> its family (for :func:`dlvm_mlir.jax.coverage`)."""


def register(family: str, *names: str) -> Callable[[Rule], Rule]:
    """Decorator: the rule of the primitives ``names``."""

    def decorate(rule: Rule) -> Rule:
        for name in names:
            PRIMITIVES[name] = rule
            FAMILIES[name] = family
        return rule

    return decorate


class JaxFrontendError(FrontendError):
    """``dlvm_mlir.jax`` cannot import a jaxpr: an unsupported primitive or dtype, or a
    primitive whose NNKit ops reject their operands. ``location`` is the user's line
    that made the primitive, ``primitive`` its name."""

    def __init__(self, message: str, location: SourceLocation | None = None, primitive: str | None = None) -> None:
        self.message = message
        self.location = location
        self.primitive = primitive
        if location is None:
            text = f"error: {message}"
        else:
            text = f"{location.filename}:{location.line}: error: {message}"
            line = linecache.getline(location.filename, location.line).strip()
            if line:
                text += f"\n    {line}"
        super().__init__(text)


# -- dtypes ------------------------------------------------------------------------


def dtype(numpy_dtype: Any, what: str = "") -> dl.DType:
    """The NNKit DType of a JAX / numpy dtype (bfloat16 included)."""
    npd = np.dtype(numpy_dtype)
    if npd.name == "bfloat16":
        return dl.bf16
    try:
        return dl.dtypes.dtype_of(npd)
    except TypeError:
        raise JaxFrontendError(f"{what}dtype {npd.name} is not supported by dlvm_mlir.jax "
                               "(float16/32/64, int8/16/32/64, uint8/16/32/64 and bool are)") from None


def aval_dtype(var: Any) -> dl.DType:
    return dtype(var.aval.dtype)


def constant(value: Any, numpy_dtype: Any) -> Tensor:
    """A jaxpr constant or literal as a ``dl.constant`` of its JAX dtype."""
    target = dtype(numpy_dtype)
    array = np.asarray(value)
    if target.numpy is None:  # bfloat16: staged in f32, then cast
        return dl.cast(dl.constant(array.astype(np.float32), dl.f32), target)
    return dl.constant(array.astype(target.numpy), target)


# -- locations and errors -------------------------------------------------------------


def location(eqn: Any) -> SourceLocation | None:
    """The user's ``file:line:col`` that made ``eqn`` (JAX's own frames skipped)."""
    try:
        frame = source_info_util.user_frame(eqn.source_info.traceback)
    except Exception:  # noqa: BLE001 - JAX's internals changed: no location
        return None
    if frame is None:
        return None
    return SourceLocation(frame.file_name, frame.start_line, max(frame.start_column, 0) + 1)


def unsupported(eqn: Any, detail: str = "") -> JaxFrontendError:
    name = eqn.primitive.name
    extra = f" ({detail})" if detail else " (supported: see dlvm_mlir.jax.coverage())"
    return JaxFrontendError(f"JAX primitive '{name}' is not supported by dlvm_mlir.jax{extra}", location(eqn), name)


class Unsupported(Exception):
    """Raised by a rule for parameters it does not cover; becomes a JaxFrontendError."""


# -- the interpreter ---------------------------------------------------------------


def _read(env: dict[Any, Any], var: Any) -> Any:
    if isinstance(var, core.Literal):
        return constant(var.val, var.aval.dtype)
    return env[var]


def eval_jaxpr(jaxpr: core.Jaxpr, consts: Sequence[Any], args: Sequence[Any]) -> list[Tensor]:
    """Stage ``jaxpr`` on NNKit tensors ``args`` (its constants ``consts``: arrays or tensors)."""
    env: dict[Any, Any] = {}
    for var, value in zip(jaxpr.constvars, consts):
        env[var] = value if isinstance(value, Tensor) else constant(value, var.aval.dtype)
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        outs = apply(eqn, [_read(env, v) for v in eqn.invars])
        for var, value in zip(eqn.outvars, outs, strict=True):
            if not isinstance(var, core.DropVar):
                env[var] = value
    return [_read(env, v) for v in jaxpr.outvars]


def inline(jaxpr: Any, args: Sequence[Any]) -> list[Tensor]:
    """Stage a ClosedJaxpr or an open Jaxpr (no constants) in place."""
    if isinstance(jaxpr, core.ClosedJaxpr):
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, args)
    return eval_jaxpr(jaxpr, [], args)


def apply(eqn: Any, args: list[Tensor]) -> list[Tensor]:
    """The NNKit tensors of one equation's results (checked against its avals)."""
    name = eqn.primitive.name
    rule = PRIMITIVES.get(name)
    if rule is None:
        raise unsupported(eqn)
    try:
        out = rule(eqn, *args)
    except JaxFrontendError:
        raise
    except Unsupported as err:
        raise unsupported(eqn, str(err)) from None
    except DLVMError as err:
        message = getattr(err, "message", str(err))
        raise JaxFrontendError(f"JAX primitive '{name}': NNKit rejected it: {message}", location(eqn), name) from None
    except Exception as err:  # noqa: BLE001 - a bug of a rule, reported at the user's line
        raise JaxFrontendError(
            f"JAX primitive '{name}': internal error of dlvm_mlir.jax ({type(err).__name__}: {err})",
            location(eqn), name,
        ) from err
    outs = list(out) if eqn.primitive.multiple_results else [out]
    if len(outs) != len(eqn.outvars):
        raise JaxFrontendError(f"JAX primitive '{name}': internal error of dlvm_mlir.jax "
                               f"({len(outs)} results for {len(eqn.outvars)})", location(eqn), name)
    for var, value in zip(eqn.outvars, outs):
        want = (tuple(var.aval.shape), aval_dtype(var))
        have = (tuple(value.shape), value.dtype) if isinstance(value, Tensor) else None
        if have != want:
            raise JaxFrontendError(
                f"JAX primitive '{name}': internal error of dlvm_mlir.jax (staged {have}, JAX says {want})",
                location(eqn), name,
            )
    return outs


# -- staging ---------------------------------------------------------------------------


def stage(closed: core.ClosedJaxpr, name: str, outputs: Sequence[int] | None = None, **options: Any) -> dl.Function:
    """An NNKit function of ``len(closed.in_avals)`` positional parameters that stages
    ``closed`` (returning a tuple of its results, or of the results at ``outputs``)."""
    count = len(closed.jaxpr.invars)

    def body(*args: Tensor) -> tuple[Tensor, ...]:
        results = eval_jaxpr(closed.jaxpr, closed.consts, args)
        if outputs is not None:
            results = [results[i] for i in outputs]
        return tuple(results)

    body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(count)]
    )
    symbol = re.sub(r"\W", "_", name) or "jax_fn"
    if symbol[0].isdigit():
        symbol = f"f_{symbol}"
    body.__name__ = body.__qualname__ = symbol
    return dl.function(body, name=symbol, **options)


# the rule modules register themselves
from . import control, elementwise, linalg, reductions, shapes  # noqa: E402,F401
