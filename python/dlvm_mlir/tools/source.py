"""Input handling shared by the tools: splitting a file, parsing a part of it.

A part of a split file is padded with empty lines so that MLIR's line numbers
are those of the original file; after parsing, the bindings' anonymous buffer
name ``-`` is replaced by the real file name in every operation and block
argument location, so diagnostics and ``--mlir-print-debuginfo`` output name
the file the user gave.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from dlvm_mlir.errors import Diagnostic, ParseError, SourceLocation
from dlvm_mlir.prevalidate import PrevalidationError, parse_text

__all__ = [
    "ANONYMOUS_BUFFER",
    "DEFAULT_SPLIT_MARKER",
    "SourceChunk",
    "parse_module",
    "rename_file_locations",
    "split_source",
]

DEFAULT_SPLIT_MARKER = "// -----"
ANONYMOUS_BUFFER = "-"
"""The file name MLIR gives to text parsed by ``Module.parse``."""


@dataclass(frozen=True)
class SourceChunk:
    """A piece of an input file, padded so that its line numbers are the file's."""

    name: str
    text: str
    first_line: int = 1

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def split_source(name: str, text: str, marker: str | None) -> list[SourceChunk]:
    """The whole file as one chunk, or one chunk per ``marker``-separated part."""
    if marker is None:
        return [SourceChunk(name, text)]
    chunks: list[SourceChunk] = []
    first = 0
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.strip().startswith(marker):
            chunks.append(_chunk(name, lines, first, index))
            first = index + 1
    chunks.append(_chunk(name, lines, first, len(lines)))
    return chunks


def _chunk(name: str, lines: list[str], first: int, end: int) -> SourceChunk:
    padding = "\n" * first
    return SourceChunk(name, padding + "\n".join(lines[first:end]), first + 1)


def parse_module(
    text: str, context: ir.Context, filename: str = ANONYMOUS_BUFFER
) -> ir.Module:
    """Parse and verify ``text``, with locations in ``filename``; raise ParseError on failure.

    The error's diagnostics are empty when the context routes errors to its
    handlers (``context.emit_error_diagnostics``).
    """
    try:
        module = parse_text(text, context)
    except PrevalidationError as err:
        diagnostics = [Diagnostic("error", p.message, SourceLocation(filename, p.line, p.column)) for p in err.problems]
        if context.emit_error_diagnostics:
            for p in err.problems:
                ir.Location.file(filename, p.line, p.column, context=context).emit_error(p.message)
            diagnostics = []
        raise ParseError(f"cannot parse {filename}", diagnostics) from None
    except ir.MLIRError as err:
        rename = {ANONYMOUS_BUFFER: filename}
        diagnostics = [
            Diagnostic.from_mlir(diag, rename) for diag in err.error_diagnostics
        ]
        raise ParseError(f"cannot parse {filename}", diagnostics) from None
    if filename != ANONYMOUS_BUFFER:
        rename_file_locations(module.operation, ANONYMOUS_BUFFER, filename)
    return module


def rename_file_locations(root: ir.Operation, old: str, new: str) -> None:
    """Replace file name ``old`` by ``new`` in the locations of ``root``, nested ops and block arguments."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        op.location = _renamed(op.location, old, new)
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    argument.set_location(_renamed(argument.location, old, new))
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)


def _renamed(loc: ir.Location, old: str, new: str) -> ir.Location:
    context = loc.context
    if loc.is_a_file():
        if loc.filename != old:
            return loc
        if (loc.end_line, loc.end_col) == (loc.start_line, loc.start_col):
            return ir.Location.file(new, loc.start_line, loc.start_col, context=context)
        return ir.Location.file(
            new,
            loc.start_line,
            loc.start_col,
            loc.end_line,
            loc.end_col,
            context=context,
        )
    if loc.is_a_name():
        return ir.Location.name(
            loc.name_str, _renamed(loc.child_loc, old, new), context=context
        )
    if loc.is_a_callsite():
        callee = _renamed(loc.callee, old, new)
        return ir.Location.callsite(
            callee, [_renamed(loc.caller, old, new)], context=context
        )
    if loc.is_a_fused() and str(loc).startswith("loc(fused["):
        # Only fused locations without metadata: the bindings cannot read the metadata back.
        return ir.Location.fused(
            [_renamed(child, old, new) for child in loc.locations], context=context
        )
    return loc
