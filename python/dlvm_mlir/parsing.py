"""Parsing IR text: the one way every entry point (compiler, interpreter, tools) reads it.

:func:`parse_module` parses and verifies a text and names its locations after
the user's file (the bindings call every buffer ``-``); before MLIR sees the
text, :func:`problems` rejects the inputs whose upstream parser or verifier
fails an assertion instead of reporting an error.

The MLIR wheels are built with assertions on, so such an input would abort the
process (the crash guard turns that into an internal compiler error, see
:mod:`dlvm_mlir.crash_guard`; this module makes it a plain located error).
Each rule names the upstream failure it prevents; found by ``dlvm-fuzz``
(docs/fuzzing.md):

- ``tensor|memref.collapse_shape|expand_shape`` with a negative or huge
  reassociation index: ``AffineMap::get`` asserts ``willBeValidAffineMap``
  (the verifier reports a small out-of-range index properly);
- ``tensor.pad`` with a negative or huge static padding amount: the result
  type built from the sum of the sizes fails ``RankedTensorType``'s
  verification inside ``StorageUserBase::get``.

Both the custom syntax (``[[0, 1]]``, ``low[1, 2] high[...]``) and the generic
form's attributes (``reassociation = [[...]]``, ``static_low = array<i64: ...>``)
are checked. Comments are skipped; text inside string attributes is not
distinguished (a false alarm there would be a located error, never a crash).
"""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass

from mlir import ir

from dlvm_mlir.errors import Diagnostic, ParseError, SourceLocation

__all__ = [
    "ANONYMOUS_BUFFER",
    "TEST_ASSERT_ENV",
    "PrevalidationError",
    "Problem",
    "parse_alone",
    "parse_module",
    "parse_text",
    "problems",
    "rename_file_locations",
]

ANONYMOUS_BUFFER = "-"
"""The file name MLIR gives to text parsed by ``Module.parse``."""

#: Largest static size component accepted where the upstream code asserts on overflow.
LIMIT = 1 << 40
#: ``ShapedType::kDynamic``: a dynamic entry of ``static_low`` / ``static_high``.
DYNAMIC = -(1 << 63)
#: Reassociation indices index the dimensions of a tensor: far below this.
MAX_RANK = 1 << 16

TEST_ASSERT_ENV = "DLVM_MLIR_TEST_ASSERT_ON"
"""Tests of the crash guard: parsing a text that contains this variable's value
outside comments fails an assertion in the parsing process, as an upstream assertion would (the
inputs known to reach one are rejected here before MLIR sees them)."""


@dataclass(frozen=True)
class Problem:
    line: int
    column: int
    message: str


_RESHAPE = re.compile(r"\b(tensor|memref)\.(collapse_shape|expand_shape)\b")
_PAD = re.compile(r"\btensor\.pad\b")
_INT = re.compile(r"-?\d+")


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _in_comment(text: str, offset: int) -> bool:
    start = text.rfind("\n", 0, offset) + 1
    return "//" in text[start:offset]


def _bracketed(text: str, start: int, opening: str = "[[") -> str | None:
    """The text of the first ``[[...]]`` group at or after ``start`` (before the op's type)."""
    begin = text.find(opening, start)
    colon = text.find(" : ", start)
    if begin < 0 or (0 <= colon < begin):
        return None
    depth = 0
    for index in range(begin, len(text)):
        depth += {"[": 1, "]": -1}.get(text[index], 0)
        if depth == 0:
            return text[begin : index + 1]
    return text[begin:]


def _op_text(text: str, start: int) -> str:
    """From the op name to the end of its type (the first `` : `` at depth 0 and the rest of that line)."""
    colon = text.find(" : ", start)
    end = text.find("\n", colon if colon >= 0 else start)
    return text[start : end if end >= 0 else len(text)]


def problems(text: str) -> list[Problem]:
    """The constructs of ``text`` that would make MLIR's parser or verifier assert."""
    found: list[Problem] = []
    for match in _RESHAPE.finditer(text):
        if _in_comment(text, match.start()):
            continue
        body = _op_text(text, match.start())
        groups = _bracketed(body, 0)
        generic = re.search(r"reassociation\s*=\s*", body)
        if generic:
            groups = _bracketed(body, generic.end())
        for value in (int(v) for v in _INT.findall(groups or "")):
            if not 0 <= value < MAX_RANK:
                found.append(Problem(*_position(text, match.start()),
                                     f"'{match.group(0)}' reassociation index {value} is out of range"))
                break
    for match in _PAD.finditer(text):
        if _in_comment(text, match.start()):
            continue
        body = _op_text(text, match.start())
        # In the custom form a dynamic amount is an SSA value: a literal -2^63 (MLIR's
        # "dynamic" marker) there would be counted as one and index past the operands.
        custom = re.findall(r"\b(?:low|high)\s*\[([^\]]*)\]", body)
        generic = re.findall(r"\bstatic_(?:low|high)\s*=\s*array<i64(?::([^>]*))?>", body)
        values = [(int(v), False) for group in custom for v in _INT.findall(re.sub(r"%[\w.$#-]+", "", group))]
        values += [(int(v), True) for group in generic for v in _INT.findall(group)]
        segments = re.search(r"\boperandSegmentSizes\s*=\s*array<i32:([^>]*)>", body)
        if generic and segments:
            sizes = [int(v) for v in _INT.findall(segments.group(1))]
            markers = [sum(int(v) == DYNAMIC for v in _INT.findall(g)) for g in generic]
            if len(sizes) == 3 and len(markers) == 2 and markers != sizes[1:]:
                found.append(Problem(*_position(text, match.start()),
                                     f"'tensor.pad' has {markers[0]} + {markers[1]} dynamic padding amounts "
                                     f"but {sizes[1]} + {sizes[2]} padding operands"))
                continue
        for value, marker_allowed in values:
            if not (marker_allowed and value == DYNAMIC) and not 0 <= value < LIMIT:
                found.append(Problem(*_position(text, match.start()),
                                     f"'tensor.pad' static padding {value} is out of range [0, 2^40)"))
                break
    return found


def _test_assertion(text: str) -> None:
    marker = os.environ.get(TEST_ASSERT_ENV)
    if marker and any(marker in line.split("//")[0] for line in text.split("\n")):
        libc = ctypes.CDLL(None)
        libc.__assert_fail(b"test assertion (" + TEST_ASSERT_ENV.encode() + b")", b"parsing.py", 0, b"parse_text")


def parse_text(text: str, context: ir.Context) -> ir.Module:
    """``ir.Module.parse`` after :func:`problems`: raises :class:`PrevalidationError`
    (with the problems' positions) or MLIR's ``ir.MLIRError``."""
    _test_assertion(text)
    found = problems(text)
    if found:
        raise PrevalidationError(found)
    return ir.Module.parse(text, context)


class PrevalidationError(ValueError):
    """Text that MLIR cannot be given (see the module docstring); ``problems`` are located."""

    def __init__(self, found: list[Problem]) -> None:
        self.problems = found
        first = found[0]
        super().__init__(f"{first.line}:{first.column}: {first.message}")


def parse_alone(text: str) -> None:
    """Parse ``text`` in a new context and drop the result: the crash guard's probe when it
    bisects a text for the line that crashes the parser (picklable)."""
    parse_text(text, ir.Context())


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
