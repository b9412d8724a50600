"""The dlvm dialect's op classes, enums and attribute helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from mlir import ir

from ._dlvm_enum_gen import *  # noqa: F401,F403
from ._dlvm_ops_gen import *  # noqa: F401,F403

GRADIENT_ATTR = "dlvm.gradient"
TANGENT_ATTR = "dlvm.tangent"


@dataclass(frozen=True)
class DerivativeDecl:
    """A ``#dlvm.gradient<...>`` or ``#dlvm.tangent<...>`` declaration.

    ``wrt`` is None for "all arguments"; ``from_`` is None for "all results".
    """

    kind: Literal["gradient", "tangent"]
    of: str
    wrt: tuple[int, ...] | None = None
    keeping: tuple[int, ...] = field(default_factory=tuple)
    from_: int | None = None
    seedable: bool = False

    @staticmethod
    def from_attr(attr: ir.Attribute) -> DerivativeDecl:
        from .. import _dlvm

        kind, of, wrt, keeping, from_, seedable = _dlvm.derivative_attr_fields(attr)
        return DerivativeDecl(
            kind, of, None if wrt is None else tuple(wrt), tuple(keeping), from_, seedable
        )

    @staticmethod
    def of_function(func: ir.Operation) -> DerivativeDecl | None:
        """The declaration carried by a function, or None."""
        attrs = func.attributes
        for name in (GRADIENT_ATTR, TANGENT_ATTR):
            if name in attrs:
                return DerivativeDecl.from_attr(attrs[name])
        return None

    @property
    def attr_name(self) -> str:
        return GRADIENT_ATTR if self.kind == "gradient" else TANGENT_ATTR

    def to_attr(self, context: ir.Context | None = None) -> ir.Attribute:
        from .. import _dlvm

        ctx = context or ir.Context.current
        wrt = None if self.wrt is None else list(self.wrt)
        return _dlvm.derivative_attr_get(
            ctx, self.kind, self.of, wrt, list(self.keeping), self.from_, self.seedable
        )

    def wrt_indices(self, num_args: int) -> list[int]:
        return list(range(num_args)) if self.wrt is None else list(self.wrt)

    def from_indices(self, num_results: int) -> list[int]:
        return list(range(num_results)) if self.from_ is None else [self.from_]

    def expected_type(self, primal_type: ir.FunctionType) -> ir.FunctionType:
        """The FunctionType this declaration must have given the primal's."""
        from .. import _dlvm

        return ir.FunctionType(_dlvm.derivative_expected_type(self.to_attr(primal_type.context), primal_type))
