"""Printing diagnostics like mlir-opt, and checking them against expected-* comments.

``DiagnosticVerifier`` follows mlir-opt's ``--verify-diagnostics``: comments
``expected-{error,warning,remark,note}[-re] [@+N|@-N|@above|@below|@unknown] {{text}}``
state the diagnostics a chunk must produce; ``text`` must be contained in the
message (``-re``: ``{{regex}}`` pieces inside it are regular expressions). Each
diagnostic and each of its notes must match one such comment, and each comment
must be matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TextIO

from dlvm_mlir.errors import Diagnostic, SourceLocation
from dlvm_mlir.tools.source import SourceChunk

__all__ = ["DiagnosticPrinter", "DiagnosticVerifier", "report_error"]

_EXPECTED = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$"
)
_OP_NOTE_PREFIX = "see current operation:"
"""mlir-opt does not attach this note under --verify-diagnostics; the bindings always do."""


class DiagnosticPrinter:
    """Writes ``file:line:col: severity: message`` with the source line and a caret."""

    def __init__(self, stream: TextIO, sources: dict[str, list[str]]):
        self.stream = stream
        self.sources = sources

    def print(self, diag: Diagnostic) -> None:
        self.message(diag.location, diag.severity, diag.message)
        for note in diag.notes:
            self.message(note.location, note.severity, note.message)

    def message(
        self, location: SourceLocation | None, severity: str, message: str
    ) -> None:
        prefix = f"{location}: " if location else ""
        lines = [f"{prefix}{severity}: {message}", *self._excerpt(location)]
        self.stream.write("\n".join(lines) + "\n")
        self.stream.flush()

    def _excerpt(self, location: SourceLocation | None) -> list[str]:
        if location is None or location.line < 1 or location.column < 1:
            return []
        lines = self.sources.get(location.filename)
        if lines is None or location.line > len(lines):
            return []
        return [lines[location.line - 1], " " * (location.column - 1) + "^"]


@dataclass
class _Expected:
    severity: str
    line: int | None  # None for @unknown
    comment: SourceLocation
    text: str
    pattern: re.Pattern[str] | None
    matched: bool = False

    def matches(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


class DiagnosticVerifier:
    """Matches the diagnostics of one chunk against its expected-* comments."""

    def __init__(self, chunk: SourceChunk, printer: DiagnosticPrinter):
        self.chunk = chunk
        self.printer = printer
        self.ok = True
        self.expected: list[_Expected] = []
        self._scan(chunk.lines)

    def process(self, diag: Diagnostic) -> None:
        """Check one diagnostic and its notes (except the op dump note)."""
        self._check(diag)
        for note in diag.notes:
            if not note.message.startswith(_OP_NOTE_PREFIX):
                self._check(note)

    def finish(self) -> bool:
        """Report expectations that nothing matched; True when everything matched."""
        for expected in self.expected:
            if expected.matched:
                continue
            location = None if expected.line is None else expected.comment
            message = f'expected {expected.severity} "{expected.text}" was not produced'
            self.printer.message(location, "error", message)
            self.ok = False
        return self.ok

    def _check(self, diag: Diagnostic) -> None:
        near_miss = None
        for expected in self._candidates(diag.location):
            if not expected.matches(diag.message):
                continue
            if expected.severity == diag.severity:
                expected.matched = True
                return
            near_miss = expected
        self.ok = False
        if near_miss is not None:
            message = f"'{diag.severity}' diagnostic emitted when expecting a '{near_miss.severity}'"
            self.printer.message(near_miss.comment, "error", message)
            return
        self.printer.message(
            diag.location, "error", f"unexpected {diag.severity}: {diag.message}"
        )

    def _candidates(self, location: SourceLocation | None) -> list[_Expected]:
        """Expectations on the diagnostic's line (@unknown ones for a diagnostic without position)."""
        if location is None:
            return [expected for expected in self.expected if expected.line is None]
        if location.filename != self.chunk.name:
            return []
        return [
            expected for expected in self.expected if expected.line == location.line
        ]

    def _scan(self, lines: list[str]) -> None:
        last_plain_line = 0  # 0-based index of the last line without an expectation
        waiting_for_next_line: list[_Expected] = []
        for index, line in enumerate(lines):
            found = _EXPECTED.search(line.rstrip())
            if not found:
                for expected in waiting_for_next_line:
                    expected.line = index + 1
                waiting_for_next_line.clear()
                last_plain_line = index
                continue
            severity, is_regex, _, designator, text = found.groups()
            comment = SourceLocation(self.chunk.name, index + 1, found.start() + 1)
            pattern = self._regex(text, comment) if is_regex else None
            if is_regex and pattern is None:
                continue
            expected = _Expected(severity, index + 1, comment, text, pattern)
            if designator == "unknown":
                expected.line = None
            elif designator == "above":
                expected.line = last_plain_line + 1
            elif designator == "below":
                expected.line = len(lines)
                waiting_for_next_line.append(expected)
            elif designator:
                offset = int(designator[1:])
                expected.line += offset if designator[0] == "+" else -offset
            self.expected.append(expected)

    def _regex(self, text: str, comment: SourceLocation) -> re.Pattern[str] | None:
        """``literal{{regex}}literal`` as one regular expression (None after reporting an error)."""
        pieces: list[str] = []
        rest = text
        while rest:
            start = rest.find("{{")
            if start < 0:
                pieces.append(re.escape(rest))
                break
            pieces.append(re.escape(rest[:start]))
            rest = rest[start + 2 :]
            end = rest.find("}}")
            if end < 0:
                return self._bad_regex(comment, "found start of regex with no end '}}'")
            try:
                re.compile(rest[:end])
            except re.error as err:
                return self._bad_regex(comment, f"invalid regex: {err}")
            pieces.append(f"({rest[:end]})")
            rest = rest[end + 2 :]
        return re.compile("".join(pieces))

    def _bad_regex(self, comment: SourceLocation, message: str) -> None:
        self.printer.message(comment, "error", message)
        self.ok = False
        return None


_LOCATED = re.compile(r"\S+:\d+:\d+: error: ")


def report_error(prog: str, err: Exception, stream: TextIO) -> None:
    """Print a user error as a command-line tool should: MLIR's diagnostics as
    ``file:line:col: error: ...`` lines, a located message as it is, anything
    else as ``prog: error: message``."""
    from dlvm_mlir.errors import DiagnosticError, PassPipelineFailure

    if isinstance(err, DiagnosticError) and err.diagnostics:
        for diagnostic in err.diagnostics:
            print(diagnostic, file=stream)
        if isinstance(err, PassPipelineFailure) and err.reproducer is not None:
            print(f"note: reproduce with: {err.reproducer.command()}", file=stream)
    elif _LOCATED.match(str(err)):
        print(err, file=stream)
    else:
        print(f"{prog}: error: {err}", file=stream)
