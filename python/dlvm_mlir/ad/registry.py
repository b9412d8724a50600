"""The one table of derivative rules, filled by the per-dialect modules in ``rules/``.

A rules module registers, per op name:

- an *adjoint* rule (reverse mode): ``fn(r: Reverse) -> None`` reads the
  op's forward values and result adjoints and accumulates operand adjoints
  with ``r.accumulate(i, value)``;
- a *tangent* rule (forward mode): ``fn(t: Tangent) -> None`` reads the
  operands' tangents and sets the results' tangents with ``t.set(i, value)``;
- an *augmented forward* rule (reverse mode, ops whose reverse needs saved
  state, i.e. loops): ``fn(sweep, op, scope) -> None`` emits the forward op
  with a tape and records it in ``scope`` for the adjoint rule;
- or declares the op *inactive* (no derivative: comparisons, rounding,
  constants, random numbers, index arithmetic).

``Reverse`` and ``Tangent`` are defined by the drivers (``core.py``,
``forward.py``); rules only use their small documented surface.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "adjoint",
    "adjoint_rule",
    "augmented_forward",
    "augmented_forward_rule",
    "inactive",
    "is_inactive_op",
    "tangent",
    "tangent_emits_primal",
    "tangent_rule",
]

AdjointRule = Callable[[Any], None]
TangentRule = Callable[[Any], None]

_ADJOINTS: dict[str, AdjointRule] = {}
_TANGENTS: dict[str, TangentRule] = {}
_EMITS_PRIMAL: set[str] = set()
_AUGMENTED: dict[str, Callable[..., None]] = {}
_INACTIVE: set[str] = set()


def adjoint(*names: str) -> Callable[[AdjointRule], AdjointRule]:
    """Decorator: ``fn`` is the adjoint rule of the ops ``names``."""

    def register(fn: AdjointRule) -> AdjointRule:
        for name in names:
            _check_new(name, _ADJOINTS, "an adjoint")
            _ADJOINTS[name] = fn
        return fn

    return register


def tangent(*names: str, emits_primal: bool = False) -> Callable[[TangentRule], TangentRule]:
    """Decorator: ``fn`` is the tangent rule of the ops ``names``.

    By default the driver copies the primal op first and the rule only adds
    tangents; with ``emits_primal`` the rule emits both (loops and branches
    that carry tangents alongside the primal values).
    """

    def register(fn: TangentRule) -> TangentRule:
        for name in names:
            _check_new(name, _TANGENTS, "a tangent")
            _TANGENTS[name] = fn
            if emits_primal:
                _EMITS_PRIMAL.add(name)
        return fn

    return register


def augmented_forward(*names: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Decorator: ``fn`` emits the taping forward sweep of the ops ``names``."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        for name in names:
            _check_new(name, _AUGMENTED, "an augmented forward")
            _AUGMENTED[name] = fn
        return fn

    return register


def inactive(names: Iterable[str]) -> None:
    """Declare ops whose results carry no derivative."""
    for name in names:
        if name in _ADJOINTS or name in _TANGENTS:
            raise ValueError(f"'{name}' has derivative rules and cannot be inactive")
        _INACTIVE.add(name)


def is_inactive_op(name: str) -> bool:
    _load_rules()
    return name in _INACTIVE


def adjoint_rule(name: str) -> AdjointRule | None:
    _load_rules()
    return _ADJOINTS.get(name)


def augmented_forward_rule(name: str) -> Callable[..., None] | None:
    _load_rules()
    return _AUGMENTED.get(name)


def tangent_rule(name: str) -> TangentRule | None:
    _load_rules()
    return _TANGENTS.get(name)


def tangent_emits_primal(name: str) -> bool:
    _load_rules()
    return name in _EMITS_PRIMAL


def _check_new(name: str, table: dict[str, Any], what: str) -> None:
    if name in table:
        raise ValueError(f"'{name}' already has {what} rule")
    if name in _INACTIVE:
        raise ValueError(f"'{name}' is declared inactive")


_loaded = False


def _load_rules() -> None:
    """Import the rules package once (its modules register themselves)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from dlvm_mlir.ad import rules  # noqa: F401
