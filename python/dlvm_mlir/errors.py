"""Exceptions of dlvm-mlir and the plain record of an MLIR diagnostic.

Every error that is the user's fault (bad IR, bad pass pipeline, a pass that
rejects its input) is a ``DLVMError``. Tools print these as ``error: ...`` and
exit 1; any other exception escaping a tool is a bug in dlvm-mlir.

MLIR hands diagnostics to Python as objects that are only valid inside the
handler call; ``Diagnostic.from_mlir`` copies one into a plain, immutable
record that can be kept, compared and printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mlir import ir

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = [
    "CompileError",
    "DLVMError",
    "Diagnostic",
    "DiagnosticError",
    "FrontendError",
    "InternalCompilerError",
    "ParseError",
    "PassError",
    "PassPipelineFailure",
    "PipelineError",
    "RegistryError",
    "Reproducer",
    "SourceLocation",
]

_SEVERITY_NAMES = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


@dataclass(frozen=True)
class SourceLocation:
    """A ``file:line:column`` position (1-based; 0 means unknown)."""

    filename: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


class _MLIRDiagnostic(Protocol):
    """What ``mlir.ir.Diagnostic`` and ``mlir.ir.DiagnosticInfo`` share."""

    @property
    def severity(self) -> ir.DiagnosticSeverity: ...
    @property
    def location(self) -> ir.Location: ...
    @property
    def message(self) -> str: ...
    @property
    def notes(self) -> Sequence[_MLIRDiagnostic]: ...


@dataclass(frozen=True)
class Diagnostic:
    """One MLIR diagnostic: severity, message, source position and notes."""

    severity: str  # "error", "warning", "note" or "remark"
    message: str
    location: SourceLocation | None = None
    notes: tuple[Diagnostic, ...] = ()

    @classmethod
    def from_mlir(
        cls, diag: _MLIRDiagnostic, rename: dict[str, str] | None = None
    ) -> Diagnostic:
        """Copy an MLIR diagnostic; ``rename`` maps buffer names (e.g. ``-``) to file names."""
        return cls(
            severity=_SEVERITY_NAMES[diag.severity],
            message=diag.message,
            location=source_location(diag.location, rename),
            notes=tuple(cls.from_mlir(note, rename) for note in diag.notes),
        )

    def header(self) -> str:
        """``file:line:col: severity: message`` (no location part when unknown)."""
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}{self.severity}: {self.message}"

    def __str__(self) -> str:
        return "\n".join([self.header(), *(note.header() for note in self.notes)])


def source_location(
    loc: ir.Location, rename: dict[str, str] | None = None
) -> SourceLocation | None:
    """The file position MLIR would show for ``loc``, or None when it has none.

    Follows MLIR's choice: the callee of a call site, the first child of a
    fused location that has a position, the child of a name location.
    """
    if loc.is_a_file():
        filename = (rename or {}).get(loc.filename, loc.filename)
        return SourceLocation(filename, loc.start_line, loc.start_col)
    if loc.is_a_callsite():
        return source_location(loc.callee, rename)
    if loc.is_a_name():
        return source_location(loc.child_loc, rename)
    if loc.is_a_fused():
        for child in loc.locations:
            found = source_location(child, rename)
            if found:
                return found
    return None


class DLVMError(Exception):
    """Base class of every error dlvm-mlir reports to its user."""


class CompileError(DLVMError):
    """The program cannot be compiled: IR that does not parse or verify
    (:class:`ParseError`), a pass that rejects it (:class:`PassPipelineFailure`),
    a bad option, or a crash of the compiler on it (:class:`InternalCompilerError`)."""


class FrontendError(CompileError):
    """A framework's program (a PyTorch FX graph, a JAX jaxpr) that the importer cannot
    bring into the dlvm dialect: an op it does not cover, an unsupported dtype or
    option. The message names the op and, where the framework knows it, the
    user's ``file:line``."""


class InternalCompilerError(CompileError):
    """The compiler crashed (an assertion, a segfault) or hung on this input: a bug in dlvm-mlir.

    ``assertion`` is the failed check's text, ``stage`` what the compiler was
    doing, ``reproducer`` a file holding the input, ``location`` the input
    position that triggers it when known.
    """

    def __init__(
        self,
        assertion: str,
        stage: str = "",
        reproducer: "Path | None" = None,
        location: SourceLocation | None = None,
        filename: str = "<input>",
    ):
        self.assertion = assertion
        self.stage = stage
        self.reproducer = reproducer
        self.location = location
        self.filename = filename
        where = str(location) if location else filename
        text = f"{where}: error: internal compiler error: {assertion}"
        if stage:
            text += f"\nnote: while running stage '{stage}'"
        if reproducer is not None:
            text += f"\nnote: reproducer: {reproducer}"
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.assertion, self.stage, self.reproducer, self.location, self.filename))


class RegistryError(DLVMError):
    """A pass or pipeline declaration is malformed or its name is taken."""


class PipelineError(DLVMError):
    """A textual pass pipeline is malformed: unknown pass, bad option, bad nesting."""


class PassError(DLVMError):
    """Raised inside a Python pass to reject its input at an operation.

    The pass runner reports it as an MLIR error diagnostic at ``at`` (an
    operation or a location) and makes the pass fail.
    """

    def __init__(
        self, message: str, at: ir.Operation | ir.OpView | ir.Location | None = None
    ):
        super().__init__(message)
        self.message = message
        self.at = at


@dataclass(frozen=True)
class Reproducer:
    """How to replay a failed pipeline with ``dlvm-opt``."""

    pipeline: str
    input_path: Path
    tool_flags: tuple[str, ...] = ()

    def command(self) -> str:
        """The shell command that reproduces the failure."""
        import shlex

        words = [
            "dlvm-opt",
            *self.tool_flags,
            f"--pass-pipeline={self.pipeline}",
            str(self.input_path),
        ]
        return shlex.join(words)


class DiagnosticError(CompileError):
    """A failure that MLIR reported through diagnostics."""

    def __init__(self, summary: str, diagnostics: Sequence[Diagnostic] = ()):
        self.summary = summary
        self.diagnostics = tuple(diagnostics)
        super().__init__(self._text())

    def _text(self) -> str:
        lines = [self.summary]
        lines += [
            f"  {line}" for diag in self.diagnostics for line in str(diag).splitlines()
        ]
        return "\n".join(lines)


class ParseError(DiagnosticError):
    """The IR text does not parse or does not verify."""


class PassPipelineFailure(DiagnosticError):
    """Running a pass pipeline failed; ``reproducer`` replays it when one was written."""

    def __init__(
        self,
        summary: str,
        diagnostics: Sequence[Diagnostic] = (),
        reproducer: Reproducer | None = None,
    ):
        self.reproducer = reproducer
        super().__init__(summary, diagnostics)

    def _text(self) -> str:
        text = super()._text()
        if self.reproducer is None:
            return text
        return f"{text}\nreproduce with: {self.reproducer.command()}"
