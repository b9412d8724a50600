"""Textual pass pipelines that mix upstream MLIR passes and Python passes.

``Pipeline.parse`` reads MLIR's pipeline syntax, e.g.
``builtin.module(canonicalize,dlvm-x{a=1 b=foo},func.func(cse),dlvm-optimize)``:
registered pipelines are expanded, Python passes are configured from their
options, and upstream passes are checked against MLIR's own registry, so every
mistake is reported (as a ``PipelineError``) before any IR is touched.

``Pipeline.build`` turns it into an ``mlir.passmanager.PassManager``: runs of
upstream passes are added as text, Python passes as callables. The bindings
cannot nest a Python pass (no ``nest()``, and a Python pass with an ``op_name``
aborts), so Python passes run on the top-level module only and a nested
pipeline such as ``func.func(...)`` may hold upstream passes only.

A Python pass whose ``expand()`` gives steps (the back ends' pipelines,
``dlvm-cpu-pipeline`` and ``dlvm-gpu-pipeline``) is added as those steps:
its upstream passes and Python steps are passes of the one pass manager, so
``--mlir-timing`` and ``--mlir-print-ir-after-all`` see each of them.
:func:`run_passes` runs upstream passes from inside a Python step (where a
stage decides at run time whether to run them) and gives that pass manager
the outer run's IR printing.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from mlir import ir
from mlir.passmanager import PassManager

from dlvm_mlir.errors import Diagnostic, PassPipelineFailure, PipelineError, Reproducer
from dlvm_mlir.passes import registry
from dlvm_mlir.passes.options import format_scalar
from dlvm_mlir.passes.registry import ModulePass
from dlvm_mlir.reproducers import new_directory as new_reproducer_directory

__all__ = ["Pipeline", "is_upstream_pass", "pass_text", "run_passes", "run_pipeline"]

ROOT_OP = "builtin.module"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.$-]*")
_UNKNOWN_PASS = "does not refer to a registered pass or pass pipeline"


# --------------------------------------------------------------------------
# Syntax tree of the pipeline text
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _PassRef:
    """``name`` or ``name{options}``; ``offset`` points into the source text."""

    name: str
    options: str
    offset: int

    def text(self) -> str:
        return self.name + ("{" + self.options + "}" if self.options else "")


@dataclass(frozen=True)
class _Nest:
    """``op_name(elements)``: run ``elements`` on every nested ``op_name``."""

    op_name: str
    elements: tuple[_PassRef | _Nest, ...]
    offset: int


_Element = _PassRef | _Nest


class _Parser:
    """Recursive-descent parser for MLIR's textual pipeline syntax."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def parse(self) -> list[_Element]:
        self._skip_spaces()
        if self.pos == len(self.text):
            return []
        elements = self._elements()
        if self.pos != len(self.text):
            self._fail(f"unexpected '{self.text[self.pos]}'")
        return elements

    def _elements(self) -> list[_Element]:
        elements = [self._element()]
        while self._peek() == ",":
            self.pos += 1
            elements.append(self._element())
        return elements

    def _element(self) -> _Element:
        self._skip_spaces()
        start = self.pos
        match = _IDENT.match(self.text, self.pos)
        if not match:
            self._fail("expected a pass or pipeline name")
        self.pos = match.end()
        if self._peek() == "(":
            self.pos += 1
            inner = () if self._peek() == ")" else tuple(self._elements())
            self._expect(")")
            return _Nest(match.group(), inner, start)
        options = self._options() if self._peek() == "{" else ""
        self._skip_spaces()
        return _PassRef(match.group(), options, start)

    def _options(self) -> str:
        """Text between balanced braces (quotes may hide braces)."""
        open_pos = self.pos
        depth, quote = 0, ""
        for index in range(self.pos, len(self.text)):
            ch = self.text[index]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    self.pos = index + 1
                    return self.text[open_pos + 1 : index].strip()
        self._fail("missing '}' closing the options", open_pos)

    def _peek(self) -> str:
        self._skip_spaces()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _expect(self, ch: str) -> None:
        if self._peek() != ch:
            self._fail(f"expected '{ch}'")
        self.pos += 1

    def _skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _fail(self, message: str, pos: int | None = None) -> NoReturn:
        raise PipelineError(
            _point_at(self.text, self.pos if pos is None else pos, message)
        )


def _point_at(text: str, offset: int, message: str) -> str:
    """``message`` followed by the pipeline text and a caret under ``offset``."""
    return f"{message}\n  {text}\n  {' ' * offset}^"


def _render(element: _Element) -> str:
    if isinstance(element, _PassRef):
        return element.text()
    return (
        f"{element.op_name}({','.join(_render(inner) for inner in element.elements)})"
    )


# --------------------------------------------------------------------------
# Expansion: registered pipelines inlined, Python passes instantiated
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _UpstreamStep:
    """Upstream pipeline text added to the pass manager as is."""

    text: str


@dataclass(frozen=True)
class _PythonStep:
    """A configured Python pass."""

    instance: ModulePass


@dataclass(frozen=True)
class _Expansion:
    """A Python pass added to the pass manager as its steps (``ModulePass.expand``)."""

    instance: ModulePass
    steps: tuple[_UpstreamStep | _PythonStep, ...]


_Step = _UpstreamStep | _PythonStep | _Expansion


def _expansion(instance: ModulePass) -> _Step:
    """``instance`` as one step, or as its steps when it expands into several."""
    steps = instance.expand()
    if steps is None:
        return _PythonStep(instance)
    inner: list[_UpstreamStep | _PythonStep] = []
    for step in steps:
        if isinstance(step, str):
            inner.append(_UpstreamStep(step))
        else:
            expanded = _expansion(step)
            inner += expanded.steps if isinstance(expanded, _Expansion) else [expanded]
    return _Expansion(instance, tuple(inner))


class _Expander:
    """Turns the syntax tree into steps, checking every name and option.

    ``via`` lists the named pipelines being expanded (outermost first); an
    error inside an expansion points at the outermost one in the source text.
    """

    def __init__(self, source: str):
        self.source = source
        self.origins: list[str] = []
        """Modules defining the Python passes and pipelines used, in order of use."""

    def top_level(
        self, element: _Element, via: tuple[_PassRef, ...] = ()
    ) -> list[_Step]:
        if isinstance(element, _Nest):
            text = self._nested(element, via)
            _check_upstream(text, lambda message: self._error(element, via, message))
            return [_UpstreamStep(text)]
        pass_cls = registry.get_pass(element.name)
        if pass_cls is not None:
            return [_expansion(self._configure(pass_cls, element, via))]
        spec = registry.get_pipeline(element.name)
        if spec is not None:
            inner = self._expand(spec, element, via)
            return [step for e in inner for step in self.top_level(e, (*via, element))]
        self._check_upstream_leaf(element, via)
        return [_UpstreamStep(element.text())]

    def _nested(self, nest: _Nest, via: tuple[_PassRef, ...]) -> str:
        """The nest as upstream text; a Python pass inside it is an error."""
        if not nest.elements:
            raise self._error(nest, via, f"empty pipeline for '{nest.op_name}'")
        parts = [
            self._nested_element(element, nest.op_name, via)
            for element in nest.elements
        ]
        return f"{nest.op_name}({','.join(parts)})"

    def _nested_element(
        self, element: _Element, op_name: str, via: tuple[_PassRef, ...]
    ) -> str:
        if isinstance(element, _Nest):
            return self._nested(element, via)
        if registry.get_pass(element.name) is not None:
            raise self._error(
                element,
                via,
                f"Python pass '{element.name}' cannot run nested under '{op_name}': "
                f"Python passes run on the top-level {ROOT_OP} only",
            )
        spec = registry.get_pipeline(element.name)
        if spec is not None:
            inner = self._expand(spec, element, via)
            return ",".join(
                self._nested_element(e, op_name, (*via, element)) for e in inner
            )
        self._check_upstream_leaf(element, via)
        return element.text()

    def _configure(
        self, pass_cls: type[ModulePass], ref: _PassRef, via: tuple[_PassRef, ...]
    ) -> ModulePass:
        self.origins.append(pass_cls.__module__)
        try:
            return pass_cls.from_text(ref.options)
        except PipelineError as err:
            raise self._error(ref, via, str(err)) from None

    def _expand(
        self, spec: registry.PipelineSpec, ref: _PassRef, via: tuple[_PassRef, ...]
    ) -> list[_Element]:
        if any(outer.name == spec.name for outer in via):
            raise self._error(ref, via, f"pipeline '{spec.name}' expands to itself")
        self.origins.append(spec.build.__module__)
        try:
            text = spec.expand(ref.options)
        except PipelineError as err:
            raise self._error(ref, via, str(err)) from None
        try:
            return _Parser(text).parse()
        except PipelineError as err:
            raise self._error(
                ref, via, f"pipeline '{spec.name}' expands to bad text: {err}"
            ) from None

    def _check_upstream_leaf(self, ref: _PassRef, via: tuple[_PassRef, ...]) -> None:
        if not is_upstream_pass(ref.name):
            raise self._error(ref, via, f"unknown pass or pipeline '{ref.name}'")
        _check_upstream(ref.text(), lambda message: self._error(ref, via, message))

    def _error(
        self, element: _Element, via: tuple[_PassRef, ...], message: str
    ) -> PipelineError:
        if not via:
            return PipelineError(_point_at(self.source, element.offset, message))
        chain = " -> ".join(f"'{outer.name}'" for outer in via)
        return PipelineError(
            _point_at(
                self.source, via[0].offset, f"{message} (in the expansion of {chain})"
            )
        )


# --------------------------------------------------------------------------
# Checks against MLIR's own pass registry
# --------------------------------------------------------------------------

_scratch_context: ir.Context | None = None
_upstream_names: dict[str, bool] = {}


def _scratch() -> ir.Context:
    global _scratch_context
    if _scratch_context is None:
        _scratch_context = ir.Context()
    return _scratch_context


def is_upstream_pass(name: str) -> bool:
    """Whether MLIR knows ``name`` as a pass or pass pipeline."""
    if not _IDENT.fullmatch(name):
        return False
    if name not in _upstream_names:
        with _captured_native_stderr():
            try:
                PassManager(ROOT_OP, _scratch()).add(name)
                _upstream_names[name] = True
            except ValueError as err:
                _upstream_names[name] = _UNKNOWN_PASS not in str(err)
    return _upstream_names[name]


def _check_upstream(text: str, error: Callable[[str], PipelineError]) -> None:
    """Add ``text`` to a scratch pass manager; turn MLIR's complaint into a PipelineError."""
    with _captured_native_stderr() as captured:
        try:
            PassManager(ROOT_OP, _scratch()).add(text)
            return
        except ValueError as err:
            message = str(err)
    details = [line.strip(": ") for line in captured() + message.splitlines()]
    details = [line.removeprefix("<Pass-Options-Parser>: ") for line in details if line]
    raise error("; ".join(details))


@contextlib.contextmanager
def _captured_native_stderr() -> Iterator[Callable[[], list[str]]]:
    """Capture what C++ writes to file descriptor 2 (LLVM prints option errors there)."""
    lines: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lambda: lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines += sink.read().decode(errors="replace").splitlines()


# --------------------------------------------------------------------------
# The pipeline object
# --------------------------------------------------------------------------


class Pipeline:
    """A checked pass pipeline, ready to build pass managers or run on IR."""

    def __init__(
        self,
        source: str,
        parts: list[str],
        steps: list[_Step],
        origins: list[str],
        element_steps: list[list[_Step]] | None = None,
    ):
        self.source = source
        self._parts = tuple(parts)
        self._steps = tuple(steps)
        self._origins = tuple(dict.fromkeys(origins))
        # the steps of each top-level element (of each part), for narrowing a failure
        self._element_steps = tuple(tuple(e) for e in element_steps) if element_steps else (tuple(steps),)

    @classmethod
    def parse(cls, text: str) -> Pipeline:
        """Parse and check pipeline text; raise PipelineError on any mistake."""
        elements = _Parser(text).parse()
        if (
            len(elements) == 1
            and isinstance(elements[0], _Nest)
            and elements[0].op_name == ROOT_OP
        ):
            elements = list(elements[0].elements)
        expander = _Expander(text)
        parts: list[str] = []
        steps: list[_Step] = []
        per_element: list[list[_Step]] = []
        for element in elements:
            element_steps = expander.top_level(element)
            parts.append(_canonical(element, element_steps))
            steps += element_steps
            per_element.append(element_steps)
        return cls(text, parts, steps, expander.origins, per_element)

    @property
    def text(self) -> str:
        """Canonical text, ``builtin.module(...)``, with Python pass options normalized."""
        return f"{ROOT_OP}({','.join(self._parts)})"

    @property
    def python_passes(self) -> tuple[ModulePass, ...]:
        """The configured Python passes, as written (an expanding pass once, not its steps)."""
        return tuple(
            step.instance
            for step in self._steps
            if isinstance(step, (_PythonStep, _Expansion))
        )

    def expanded_text(self) -> str:
        """The pipeline with every registered pipeline inlined (an expanding pass stays one element)."""
        parts = [
            step.instance.pipeline_text()
            if isinstance(step, (_PythonStep, _Expansion))
            else step.text
            for step in self._steps
        ]
        return f"{ROOT_OP}({','.join(parts)})"

    def build(self, context: ir.Context) -> PassManager:
        """A new pass manager on ``builtin.module`` holding this pipeline.

        An expanding Python pass (``ModulePass.expand``) is added as its steps.
        """
        return self._build(context, self._steps)

    @staticmethod
    def _build(context: ir.Context, steps: Sequence[_Step]) -> PassManager:
        pm = PassManager(ROOT_OP, context)
        for step in steps:
            for leaf in step.steps if isinstance(step, _Expansion) else (step,):
                if isinstance(leaf, _PythonStep):
                    instance = leaf.instance
                    pm.add(
                        instance,
                        name=instance.display_name,
                        argument=instance.name,
                        description=instance.summary,
                    )
                else:
                    pm.add(leaf.text)
        return pm

    def run(
        self,
        module: ir.Module | ir.Operation | ir.OpView,
        *,
        verify_each: bool = True,
        reproducer: bool = True,
        reproducer_dir: str | Path | None = None,
        configure: Callable[[PassManager], None] | None = None,
        configure_nested: Callable[[PassManager], None] | None = None,
    ) -> None:
        """Run on ``module`` in place; raise PassPipelineFailure if a pass fails.

        With ``reproducer`` the input IR is kept (with locations) and, on
        failure, written to ``reproducer_dir`` (a new temporary directory by
        default); the exception then says which ``dlvm-opt`` command replays it.
        ``configure`` may set up the pass manager (timing, IR printing);
        ``configure_nested`` sets up the pass managers that Python passes run
        while this one runs (:func:`run_passes`, a pipeline run from a pass),
        e.g. the same IR printing. A pipeline run from inside a Python pass
        gets the outer run's ``configure_nested`` for both unless given its own.
        """
        op = module.operation
        snapshot = op.get_asm(enable_debug_info=True) if reproducer else None
        outer = _nested_configure.get()
        configure = outer if configure is None else configure
        configure_nested = outer if configure_nested is None else configure_nested
        pm = self.build(op.context)
        pm.enable_verifier(verify_each)
        if configure is not None:
            configure(pm)
        _flush_std_streams()
        token = _nested_configure.set(configure_nested)
        try:
            pm.run(op)
        except ir.MLIRError as err:
            diagnostics = [Diagnostic.from_mlir(diag) for diag in err.error_diagnostics]
            _nested_configure.set(None)
            repro = (
                None
                if snapshot is None
                else self._write_reproducer(snapshot, op.context, reproducer_dir, verify_each)
            )
            where = f" at {repro.pipeline}" if repro is not None and repro.pipeline != self.text else ""
            raise PassPipelineFailure(
                f"pass pipeline failed{where}: {self.text}", diagnostics, repro
            ) from None
        except Exception as err:
            if snapshot is not None:
                _nested_configure.set(None)
                repro = self._write_reproducer(snapshot, op.context, reproducer_dir, verify_each)
                err.add_note(f"reproduce with: {repro.command()}")
            raise
        finally:
            _nested_configure.reset(token)
            del pm  # a pass manager prints its timing report when destroyed
            _flush_std_streams()

    def _first_failing_element(
        self, ir_text: str, context: ir.Context, verify_each: bool
    ) -> tuple[int, str] | None:
        """Replays the top-level elements one at a time from ``ir_text``: the
        first that fails, and the IR it started from (None if none fails again)."""
        if len(self._element_steps) < 2:
            return None
        try:
            module = ir.Module.parse(ir_text, context)
        except ir.MLIRError:
            return None
        # the replay's diagnostics repeat the run's: keep them from the user
        silence = context.attach_diagnostic_handler(lambda diagnostic: True)
        try:
            for index, steps in enumerate(self._element_steps):
                before = module.operation.get_asm(enable_debug_info=True)
                pm = self._build(context, steps)
                pm.enable_verifier(verify_each)
                try:
                    pm.run(module.operation)
                except Exception:  # noqa: BLE001 - any failure of the element is the one sought
                    return index, before
                finally:
                    del pm
        finally:
            silence.detach()
        return None

    def _write_reproducer(
        self,
        ir_text: str,
        context: ir.Context,
        directory: str | Path | None,
        verify_each: bool = True,
    ) -> Reproducer:
        """The input IR and the pipeline that replay a failure: narrowed to the
        first failing top-level element and the IR it received, when replaying
        the elements one at a time fails there again."""
        pipeline = self.text
        failing = self._first_failing_element(ir_text, context, verify_each)
        if failing is not None:
            index, ir_text = failing
            pipeline = f"{ROOT_OP}({self._parts[index]})"
        folder = (
            Path(directory)
            if directory is not None
            else new_reproducer_directory("dlvm-repro")
        )
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "input.mlir"
        path.write_text(ir_text)
        flags = [f"--load-pass-plugin={file}" for file in self._plugin_files()]
        if context.allow_unregistered_dialects:
            flags.append("--allow-unregistered-dialect")
        return Reproducer(pipeline, path, tuple(flags))

    def _plugin_files(self) -> list[str]:
        """Files dlvm-opt must load to know this pipeline's passes: those outside dlvm_mlir."""
        files = []
        for module_name in self._origins:
            module = sys.modules.get(module_name)
            if (
                module_name.split(".")[0] == "dlvm_mlir"
                or getattr(module, "__file__", None) is None
            ):
                continue
            files.append(module.__file__)
        return files

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Pipeline({self.text!r})"


def _canonical(element: _Element, steps: list[_Step]) -> str:
    """A top-level element as text; a Python pass shows its options normalized."""
    first = steps[0] if len(steps) == 1 else None
    if (
        isinstance(first, (_PythonStep, _Expansion))
        and isinstance(element, _PassRef)
        and first.instance.name == element.name
    ):
        return first.instance.pipeline_text()
    return _render(element)


def _flush_std_streams() -> None:
    """Flush Python's buffers so that they interleave correctly with C++ output."""
    sys.stdout.flush()
    sys.stderr.flush()


_nested_configure: contextvars.ContextVar[Callable[[PassManager], None] | None] = (
    contextvars.ContextVar("dlvm_nested_configure", default=None)
)
"""``configure_nested`` of the ``Pipeline.run`` in progress (None outside one)."""


def run_passes(module: ir.Module | ir.Operation | ir.OpView, pipeline: str) -> None:
    """Run upstream passes (pipeline elements on ``builtin.module``) on ``module``, now.

    The one way the back ends run MLIR passes from Python code: between
    Python steps, or where a step decides at run time whether to run them.
    Inside a ``Pipeline.run`` (from a Python pass, e.g. a step of
    ``dlvm-cpu-pipeline`` in ``dlvm-opt``) the pass manager gets the outer
    run's ``configure_nested``: ``--mlir-print-ir-after-all`` shows the IR
    after each of these passes too, and their time is part of the Python
    step's in ``--mlir-timing``. Raises ``ir.MLIRError`` if a pass fails.
    """
    operation = module.operation
    with operation.context:
        pm = PassManager.parse(f"{ROOT_OP}({pipeline})")
        configure = _nested_configure.get()
        if configure is not None:
            configure(pm)
            _flush_std_streams()
        try:
            pm.run(operation)
        finally:
            del pm


def run_pipeline(
    module: ir.Module | ir.Operation | ir.OpView,
    pipeline: str | Pipeline,
    **options: object,
) -> None:
    """Run a pipeline (text or Pipeline) on ``module``; options as for ``Pipeline.run``."""
    if isinstance(pipeline, str):
        pipeline = Pipeline.parse(pipeline)
    pipeline.run(module, **options)


def pass_text(name: str, **options: object) -> str:
    """A pipeline element for use in pipeline builders: ``pass_text("x", a=1)`` -> ``x{a=1}``.

    Option names are given in Python form (``_`` for ``-``).
    """
    words = []
    for attr, value in options.items():
        key = attr.replace("_", "-")
        if isinstance(value, (list, tuple)):
            words.append(f"{key}={','.join(format_scalar(item) for item in value)}")
        else:
            words.append(f"{key}={format_scalar(value)}")
    return name + ("{" + " ".join(words) + "}" if words else "")
