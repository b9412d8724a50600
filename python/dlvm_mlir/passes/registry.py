"""The one registry of Python passes and named pipelines.

``dlvm-opt`` and Python code both read it. A pass is a small declarative
class; a pipeline is a function returning pipeline text::

    @register_pass
    class AlgebraSimplify(ModulePass):
        name = "dlvm-algebra-simplify"
        summary = "Simplify algebraic identities"
        options = (Option("reassociate", bool, False, "allow reassociation"),)

        def run(self, module: ir.Operation) -> None:
            ...  # self.reassociate holds the option value

    @register_pipeline("dlvm-optimize", "Canonicalize and simplify")
    def optimize() -> str:
        return "canonicalize,cse,dlvm-algebra-simplify"

Passes defined in modules under ``dlvm_mlir.transforms`` register themselves
when the registry is first read (every module there is imported).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from mlir import ir
from mlir.passmanager import ExternalPass

from dlvm_mlir import _dlvm
from dlvm_mlir.errors import PassError, PipelineError, RegistryError
from dlvm_mlir.passes.options import (
    Option,
    OptionValue,
    format_options,
    resolve_options,
)

__all__ = [
    "ModulePass",
    "PipelineSpec",
    "emit_error",
    "emit_remark",
    "emit_warning",
    "get_pass",
    "get_pipeline",
    "load_plugin",
    "register_pass",
    "register_pipeline",
    "registered_passes",
    "registered_pipelines",
    "unregister",
]

PASS_PACKAGES = ("dlvm_mlir.transforms",)
"""Packages whose modules are imported so that the passes they define register."""

_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")

_passes: dict[str, type[ModulePass]] = {}
_pipelines: dict[str, PipelineSpec] = {}
_plugins: list[Path] = []
_discovered = False


class ModulePass(ABC):
    """A pass written in Python; it runs on the top-level ``builtin.module``.

    Subclasses set ``name`` (the pipeline/flag name), ``summary`` (one line for
    ``--help``) and ``options``, and implement ``run``. Option values are
    attributes named after the option (``-`` becomes ``_``).

    To reject the input, ``raise PassError(message, at=op)`` or call
    ``self.emit_error(op, message)`` (which lets ``run`` go on to report more
    errors); either way the pass fails with an MLIR error at ``op``'s location.
    ``self.emit_warning`` and ``self.emit_remark`` report without failing
    (dlvm-opt prints them; from Python, attach a diagnostic handler to see them).
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    options: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **values: object) -> None:
        declared = {option.attr: option for option in self.options}
        unknown = sorted(set(values) - set(declared))
        if unknown:
            raise PipelineError(f"'{self.name}' has no option '{unknown[0]}'")
        for attr, option in declared.items():
            value = values.get(attr, option.default)
            setattr(self, attr, option.validate(value))
        self._failed = False

    @classmethod
    def from_text(cls, text: str) -> ModulePass:
        """An instance configured from pipeline option text (``a=1 b=foo``)."""
        return cls(**resolve_options(cls.name, cls.options, text))

    @abstractmethod
    def run(self, module: ir.Operation) -> None:
        """Transform ``module`` in place."""

    def expand(self) -> Sequence[str | ModulePass] | None:
        """The steps this pass runs as in a pass manager, or None (the default): itself.

        A pass made of upstream passes and Python steps (the back ends'
        pipelines) returns them in order: pipeline text for upstream passes,
        ModulePass instances (e.g. :class:`dlvm_mlir.passes.steps.StepPass`)
        for the Python steps. ``Pipeline.build`` then adds each as a pass of
        its own, so that MLIR's instrumentation (``--mlir-timing``,
        ``--mlir-print-ir-after-all``) sees every one. The steps must do what
        ``run`` does.
        """
        return None

    @property
    def display_name(self) -> str:
        """The name MLIR shows for this pass (timing report, IR dumps): the class name."""
        return type(self).__name__

    def emit_error(
        self, at: ir.Operation | ir.OpView | ir.Location, message: str
    ) -> None:
        """Report an error at ``at`` and make this run of the pass fail."""
        emit_error(at, message)
        self._failed = True

    def emit_warning(self, at: ir.Operation | ir.OpView | ir.Location, message: str) -> None:
        """Report a warning at ``at`` (the pass does not fail)."""
        emit_warning(at, message)

    def emit_remark(self, at: ir.Operation | ir.OpView | ir.Location, message: str) -> None:
        """Report a remark at ``at`` (e.g. what an analysis found)."""
        emit_remark(at, message)

    def option_values(self) -> dict[str, OptionValue]:
        return {option.attr: getattr(self, option.attr) for option in self.options}

    def pipeline_text(self) -> str:
        """This pass as a pipeline element, e.g. ``dlvm-x{a=2}``."""
        return self.name + format_options(self.options, self.option_values())

    def __call__(self, module: ir.Operation, external_pass: ExternalPass) -> None:
        """Entry point for ``PassManager.add``: run, then report failure to MLIR."""
        self._failed = False
        try:
            with module.context:
                self.run(module)
        except PassError as err:
            emit_error(err.at if err.at is not None else module, err.message)
            self._failed = True
        if self._failed:
            external_pass.signal_pass_failure()


def emit_error(at: ir.Operation | ir.OpView | ir.Location, message: str) -> None:
    """Emit an MLIR error diagnostic at an operation's location (or a location)."""
    _location(at).emit_error(message)


def emit_warning(at: ir.Operation | ir.OpView | ir.Location, message: str) -> None:
    """Emit an MLIR warning at an operation's location (the pass does not fail)."""
    _dlvm.emit_diagnostic(_location(at), "warning", message)


def emit_remark(at: ir.Operation | ir.OpView | ir.Location, message: str) -> None:
    """Emit an MLIR remark (a report, e.g. of an analysis) at an operation's location."""
    _dlvm.emit_diagnostic(_location(at), "remark", message)


def _location(at: ir.Operation | ir.OpView | ir.Location) -> ir.Location:
    return at if isinstance(at, ir.Location) else at.location


@dataclass(frozen=True)
class PipelineSpec:
    """A named pipeline: ``build(**options)`` returns pipeline text."""

    name: str
    summary: str
    options: tuple[Option, ...]
    build: Callable[..., str]

    def expand(self, text: str) -> str:
        """The pipeline text for option text ``text``."""
        return self.build(**resolve_options(self.name, self.options, text))


_P = TypeVar("_P", bound=type[ModulePass])


def register_pass(cls: _P) -> _P:
    """Class decorator: make a ModulePass available by its ``name``."""
    owner = getattr(cls, "__name__", repr(cls))
    if not (isinstance(cls, type) and issubclass(cls, ModulePass)):
        raise RegistryError(f"{owner}: only ModulePass subclasses can be registered")
    for attr in ("name", "summary"):
        if not isinstance(getattr(cls, attr, None), str):
            raise RegistryError(f"{owner}: class attribute '{attr}' (a str) is missing")
    _check_new_name(cls.name, cls.summary, cls.options)
    _passes[cls.name] = cls
    return cls


def register_pipeline(
    name: str, summary: str, options: tuple[Option, ...] = ()
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Function decorator: register ``fn(**options) -> str`` as the pipeline ``name``."""

    def decorate(build: Callable[..., str]) -> Callable[..., str]:
        _check_new_name(name, summary, options)
        _pipelines[name] = PipelineSpec(name, summary, tuple(options), build)
        return build

    return decorate


def unregister(name: str) -> None:
    """Remove a pass or pipeline (meant for tests that register their own)."""
    if _passes.pop(name, None) is None and _pipelines.pop(name, None) is None:
        raise RegistryError(f"nothing named '{name}' is registered")


def get_pass(name: str) -> type[ModulePass] | None:
    _discover()
    return _passes.get(name)


def get_pipeline(name: str) -> PipelineSpec | None:
    _discover()
    return _pipelines.get(name)


def registered_passes() -> list[type[ModulePass]]:
    """Every registered pass, sorted by name."""
    _discover()
    return [_passes[name] for name in sorted(_passes)]


def registered_pipelines() -> list[PipelineSpec]:
    """Every registered pipeline, sorted by name."""
    _discover()
    return [_pipelines[name] for name in sorted(_pipelines)]


def load_plugin(path: str | Path) -> None:
    """Run a Python file that registers passes or pipelines (once per file)."""
    resolved = Path(path).resolve()
    if resolved in _plugins:
        return
    if not resolved.is_file():
        raise RegistryError(f"pass plugin '{path}' is not a file")
    stem = re.sub(r"\W", "_", resolved.stem)
    module_name = f"dlvm_mlir_plugin_{len(_plugins)}_{stem}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise RegistryError(f"pass plugin '{path}' is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    _plugins.append(resolved)


def _check_new_name(name: str, summary: str, options: tuple[Option, ...]) -> None:
    if not _NAME.fullmatch(name):
        raise RegistryError(f"'{name}': pass names are lower-case words joined by '-'")
    if name in _passes or name in _pipelines:
        raise RegistryError(f"'{name}' is already registered")
    if not summary:
        raise RegistryError(f"'{name}': summary is missing")
    names = [option.name for option in options]
    if len(set(names)) != len(names):
        raise RegistryError(f"'{name}': two options share a name")
    for option in options:
        option.check_declaration(name)


def _discover() -> None:
    """Import every module of PASS_PACKAGES once, so their decorators run."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for package_name in PASS_PACKAGES:
        if importlib.util.find_spec(package_name) is None:
            continue
        package = importlib.import_module(package_name)
        prefix = package.__name__ + "."
        for module in pkgutil.walk_packages(package.__path__, prefix):
            importlib.import_module(module.name)
