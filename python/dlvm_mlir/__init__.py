"""dlvm-mlir: DLVM rebuilt as an MLIR project driven from Python.

Importing this package registers the ``dlvm`` dialect into the global dialect
registry of the ``mlir`` Python bindings, so every ``mlir.ir.Context`` created
afterwards knows ``dlvm`` ops, and parsed ``dlvm`` ops come back as the
ODS-generated classes of :mod:`dlvm_mlir.dialects.dlvm`.
"""

from mlir import ir as _ir
from mlir._mlir_libs import get_dialect_registry as _get_dialect_registry
from mlir.dialects._ods_common import _cext as _ods_cext

from . import _dlvm

_dlvm.register_dialect(_get_dialect_registry())
_dlvm.register_passes()
_ods_cext.globals.append_dialect_search_prefix("dlvm_mlir.dialects")


def make_context() -> _ir.Context:
    """Returns a new Context that has the dlvm dialect loaded."""
    ctx = _ir.Context()
    _dlvm.load_dialect(ctx)
    return ctx


_REWRITES_API = ("rewrite_rule", "validate_rule", "apply_rules", "Exactness")


def __getattr__(name: str) -> object:
    """``dlvm_mlir.rewrite_rule`` etc.: the rewrite-rule API of :mod:`dlvm_mlir.rewrites`."""
    if name in _REWRITES_API:
        from . import rewrites

        return getattr(rewrites, name)
    raise AttributeError(f"module 'dlvm_mlir' has no attribute '{name}'")


__all__ = ["compile", "load", "make_context", *_REWRITES_API]


def compile(source, target="cpu", **kwargs):  # noqa: A001
    """Compile DLVM IR for ``target``; see :func:`dlvm_mlir.compiler.compile`."""
    from .compiler import compile as _compile

    return _compile(source, target, **kwargs)


def load(path):
    """The Executable of a shared object built by ``compile`` or ``dlvm-compile``; see :func:`dlvm_mlir.compiler.load`."""
    from .compiler import load as _load

    return _load(path)
